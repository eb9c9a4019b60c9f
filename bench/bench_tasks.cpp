// Task generation throughput: tokens generated per second, per task, single thread.
// Generation must never slow training down; the model consumes at most ~10^5 tokens/s.
// A second table times the tape-layout (Chomsky-hierarchy) tasks at n = 40 (the end of their
// training range) and n = 500 (the end of their evaluation range).
//
//   build/bench/bench_tasks [seconds-per-task (default 0.3)] [n (default 32)] [task,task,... (default all)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tasks/tape.hpp"
#include "tasks/task.hpp"

using namespace srbench::tasks;

namespace {

void measure(const Task& task, int len, double budget) {
  Example ex;
  uint64_t examples = 0, tokens = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < budget) {
    for (int k = 0; k < 256; ++k) {
      task.sample_into(0, Stream::Train, examples++, len, ex);
      tokens += ex.tokens.size();
    }
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::printf("%-28s %6d %12.0f %14.0f\n", task.name().c_str(), len, examples / elapsed, tokens / elapsed);
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  const int n = argc > 2 ? std::atoi(argv[2]) : 32;
  const std::string only = argc > 3 ? "," + std::string(argv[3]) + "," : "";
  std::printf("%-28s %6s %12s %14s\n", "task", "n", "examples/s", "tokens/s");
  std::vector<std::unique_ptr<Task>> tasks;
  for (const auto& info : task_registry()) {
    if (!only.empty() && only.find("," + info.name + ",") == std::string::npos) continue;
    RawParams params;
    if (info.name == "text") params["path"] = std::string(SRBENCH_SOURCE_DIR) + "/LICENSE";
    tasks.push_back(make_task(info.name, params));
    measure(*tasks.back(), info.name == "mqar" ? std::min(n, 64) : n, budget);
  }
  std::printf("\ntape-layout tasks at n = 40 and 500 (tokens include the blanks)\n");
  for (const auto& task : tasks)
    if (dynamic_cast<const TapeTask*>(task.get()))
      for (const int len : {40, 500}) measure(*task, len, budget);
  return 0;
}
