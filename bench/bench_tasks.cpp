// Task generation throughput: tokens generated per second, per task, single thread.
// Generation must never slow training down; the model consumes at most ~10^5 tokens/s.
// A second table times the tape-layout (Chomsky-hierarchy) tasks at n = 40 (the end of their
// training range) and n = 500 (the end of their evaluation range).
// Examples are drawn in batches of 1,024 (examples 0, 1, 2, … of the train stream under seed 0);
// beside the mean rate, the rate of the fastest batch (a shared machine's load only ever slows a
// batch down), which bench/bench_python_tasks.py compares with Task.sample's fastest batch.
//
//   build/bench/bench_tasks [seconds-per-task (default 0.3)] [n (default 32)] [task,task,...]
// A list of tasks times only those, in the first table only.
#include <algorithm>
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
  using Clock = std::chrono::steady_clock;
  constexpr int kBatch = 1024;
  Example ex;
  uint64_t examples = 0, tokens = 0;
  double best = 0;  // tokens/s of the fastest batch
  const auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < budget) {
    const auto batch_start = Clock::now();
    uint64_t batch_tokens = 0;
    for (int k = 0; k < kBatch; ++k) {
      task.sample_into(0, Stream::Train, examples++, len, ex);
      batch_tokens += ex.tokens.size();
    }
    const auto now = Clock::now();
    best = std::max(best, static_cast<double>(batch_tokens) / std::chrono::duration<double>(now - batch_start).count());
    tokens += batch_tokens;
    elapsed = std::chrono::duration<double>(now - start).count();
  }
  std::printf("%-28s %6d %12.0f %14.0f %14.0f\n", task.name().c_str(), len, examples / elapsed, tokens / elapsed, best);
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  const int n = argc > 2 ? std::atoi(argv[2]) : 32;
  const std::string only = argc > 3 ? "," + std::string(argv[3]) + "," : "";
  std::printf("%-28s %6s %12s %14s %14s\n", "task", "n", "examples/s", "tokens/s", "best batch");
  std::vector<std::unique_ptr<Task>> tasks;
  for (const auto& info : task_registry()) {
    if (!only.empty() && only.find("," + info.name + ",") == std::string::npos) continue;
    RawParams params;
    if (info.name == "text") params["path"] = std::string(SRBENCH_SOURCE_DIR) + "/LICENSE";
    tasks.push_back(make_task(info.name, params));
    measure(*tasks.back(), info.name == "mqar" ? std::min(n, 64) : n, budget);
  }
  if (!only.empty()) return 0;
  std::printf("\ntape-layout tasks at n = 40 and 500 (tokens include the blanks)\n");
  for (const auto& task : tasks)
    if (dynamic_cast<const TapeTask*>(task.get()))
      for (const int len : {40, 500}) measure(*task, len, budget);
  return 0;
}
