// Task generation throughput: tokens generated per second, per task, single thread.
// Generation must never slow training down; the model consumes at most ~10^5 tokens/s.
//
//   build/bench/bench_tasks [seconds-per-task (default 0.3)] [n (default 32)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tasks/task.hpp"

using namespace srbench::tasks;

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  const int n = argc > 2 ? std::atoi(argv[2]) : 32;
  std::printf("%-14s %6s %12s %14s\n", "task", "n", "examples/s", "tokens/s");
  for (const auto& info : task_registry()) {
    RawParams params;
    if (info.name == "text") params["path"] = std::string(SRBENCH_SOURCE_DIR) + "/LICENSE";
    const auto task = make_task(info.name, params);
    int len = n;
    if (info.name == "mqar") len = std::min(n, 64);
    Example ex;
    uint64_t examples = 0, tokens = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < budget) {
      for (int k = 0; k < 256; ++k) {
        task->sample_into(0, Stream::Train, examples++, len, ex);
        tokens += ex.tokens.size();
      }
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::printf("%-14s %6d %12.0f %14.0f\n", info.name.c_str(), len, examples / elapsed, tokens / elapsed);
  }
  return 0;
}
