// Training throughput of the model engine (not a test): train tokens/s for performance.md's
// configurations, learned positions, pre-LN, GeLU MLP ×4, softmax attention, AdamW, clipping
// 1.0, cross-entropy on every position. Prints one line per configuration and thread count.
//
//   bench_model [--threads 1,2] [--steps N] [--configs S,M,L]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "model/optim.hpp"

namespace {

struct BenchConfig {
  const char* name;
  int d_model, layers, heads, T, batch;
};

const BenchConfig kConfigs[] = {{"S", 64, 2, 4, 32, 32}, {"M", 128, 2, 4, 64, 32}, {"L", 256, 4, 8, 128, 16}};

std::vector<int> parse_list(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p) ++p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace srbench::model;
  std::vector<int> threads = {1};
  std::string configs = "S,M";
  int steps = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = parse_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--configs")) configs = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: bench_model [--threads 1,2] [--steps N] [--configs S,M,L]\n");
      return 2;
    }
  }
  const int vocab = 32;
  // cpu-based: tokens per CPU-second per thread, a steadier figure on a loaded machine (for one
  // thread it is what the wall-clock rate would be without contention).
  std::printf("config  threads  step_ms  train_tok/s  cpu-based tok/s  (medians of %d steps after 3 warm-up)\n",
              steps);
  for (const auto& bc : kConfigs) {
    if (configs.find(bc.name) == std::string::npos) continue;
    for (int nt : threads) {
      omp_set_num_threads(nt);
      ModelConfig cfg;
      cfg.vocab = vocab;
      cfg.d_model = bc.d_model;
      cfg.layers = bc.layers;
      cfg.heads = bc.heads;
      cfg.max_len = std::max(256, bc.T);
      Model m(cfg);
      m.init(0);
      AdamW opt(m.layout());
      TrainSettings st;
      st.steps = steps + 3;
      st.warmup = 2;
      std::mt19937_64 gen(1);
      const int n = bc.batch * bc.T;
      std::vector<int32_t> tokens(n), targets(n);
      std::vector<double> times, cpu_times;
      auto cpu_now = [] {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return ts.tv_sec + 1e-9 * ts.tv_nsec;
      };
      for (int s = 0; s < steps + 3; ++s) {
        for (int i = 0; i < n; ++i) {
          tokens[i] = static_cast<int32_t>(gen() % vocab);
          targets[i] = i % bc.T == 0 ? tokens[i] : tokens[i - 1];  // copy the previous token
        }
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_now();
        train_step(m, opt, tokens.data(), targets.data(), bc.batch, bc.T, s, st);
        const double c1 = cpu_now();
        const auto t1 = std::chrono::steady_clock::now();
        if (s >= 3) {
          times.push_back(std::chrono::duration<double>(t1 - t0).count());
          cpu_times.push_back((c1 - c0) / nt);
        }
      }
      std::sort(times.begin(), times.end());
      std::sort(cpu_times.begin(), cpu_times.end());
      const double med = times[times.size() / 2], cpu_med = cpu_times[cpu_times.size() / 2];
      std::printf("%-6s  %7d  %7.2f  %11.0f  %15.0f\n", bc.name, nt, med * 1e3, n / med, n / cpu_med);
      std::fflush(stdout);
    }
  }
  return 0;
}
