// Training throughput of the model engine (not a test): train tokens/s for performance.md's
// configurations, learned positions, pre-LN, GeLU MLP ×4, softmax attention, AdamW, clipping
// 1.0, cross-entropy on every position. scripts/bench.sh runs it beside bench/reference_torch.py.
//
//   bench_model [--threads 1,2] [--steps N] [--configs S,M,L]     a table, one line per run
//   bench_model --run --d 128 --layers 2 --heads 4 --T 64 --batch 32 [--threads 1] [--steps N]
//               [--arch lstm]
//               one run, one line: tok_s= step_ms= loss= maxrss_kb= (peak of this process) cpu_tok_s= params=
//               (tokens per CPU-second per thread: steadier on a loaded machine); with
//               --arch a recurrent model of recurrent.md (rnn, lstm, gru, …; --heads is not used and may be left out)
//   bench_model --peak                                             a core's float32 FMA peak:
//               GFLOP/s of independent FMA chains on the widest vector unit the build targets (a line
//               naming the unit, then peak_gflops=)
//   bench_model --gemm                                             our kernel's (model/sgemm) float32
//               GEMM rate: GFLOP/s of a 512×512×512 product, one thread (median of 15)
//   bench_model --shapes                                           the linear layers' products of S, M
//               and L (forward, input gradient, weight gradient) on sgemm, GFLOP/s
// Eigen's side of both (performance.md's reference rate) is bench/eigen/bench_eigen: this program
// is built, as srbench is, with EIGEN_DONT_VECTORIZE, under which Eigen's products are scalar.

#include <omp.h>
#include <sys/resource.h>

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "bench/gemm_shapes.hpp"
#include "common/float_mode.hpp"
#include "model/model.hpp"
#include "model/optim.hpp"
#include "model/sgemm.hpp"

namespace {

struct BenchConfig {
  const char* name;
  int d_model, layers, heads, T, batch;
  std::string arch = "transformer";  // recurrent.md's arch of a --run
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

// This process's CPU time in seconds (all threads).
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

struct Result {
  double step_s, cpu_step_s, loss;
  int64_t params;  // the model's parameter count
};

// Trains `steps` steps after 3 warm-up steps on the copy-previous-token stream (vocab 32); medians.
Result run(const BenchConfig& bc, int nt, int steps) {
  using namespace srbench::model;
  omp_set_num_threads(nt);
  const int vocab = 32;
  ModelConfig cfg;
  cfg.vocab = vocab;
  cfg.d_model = bc.d_model;
  cfg.layers = bc.layers;
  cfg.max_len = std::max(256, bc.T);
  cfg.set("arch", bc.arch);
  if (!cfg.recurrent()) cfg.heads = bc.heads;
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
  double loss = 0;
  for (int s = 0; s < steps + 3; ++s) {
    for (int i = 0; i < n; ++i) {
      tokens[i] = static_cast<int32_t>(gen() % vocab);
      targets[i] = i % bc.T == 0 ? tokens[i] : tokens[i - 1];  // copy the previous token
    }
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    loss = train_step(m, opt, tokens.data(), targets.data(), bc.batch, bc.T, s, st).loss;
    const double c1 = cpu_seconds();
    const auto t1 = std::chrono::steady_clock::now();
    if (s >= 3) {
      times.push_back(std::chrono::duration<double>(t1 - t0).count());
      cpu_times.push_back((c1 - c0) / nt);
    }
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  return {times[times.size() / 2], cpu_times[cpu_times.size() / 2], loss, static_cast<int64_t>(m.layout().total())};
}

// Our kernel's (model/sgemm) rate on the 512³ product; bench_eigen --gemm times Eigen's on the
// same shape (performance.md's reference rate, built with Eigen's vector code).
void print_gemm_rate() {
  using namespace srbench::model;
  const int n = srbench::bench::kGemmN;
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), d(a.size());
  for (auto* v : {&a, &b})
    for (float& e : *v) e = ud(gen);
  const double ours = srbench::bench::gemm_gflops(
      [&] { sgemm(n, n, n, {a.data(), n, 1}, {b.data(), n, 1}, d.data(), n, GemmInit::kZero); });
  std::fprintf(stderr, "%g\n", d[0]);  // keep the product
  std::printf("sgemm_gflops=%.2f\n", ours);
}

// The linear layers' three products (y = x·Wᵀ, dX = dY·W, dW += dYᵀ·X) of S, M and L on sgemm,
// GFLOP/s; bench_eigen --shapes times the same products on Eigen's.
void print_shapes() {
  using namespace srbench::model;
  using srbench::bench::GemmShape;
  using srbench::bench::ShapeOperands;
  srbench::bench::print_shape_table("sgemm", [](const GemmShape& sh, ShapeOperands& o) {
    const int N = sh.rows, K = sh.in, OC = sh.out;
    return std::array<double, 3>{
        srbench::bench::shape_gflops(
            sh, [&] { sgemm(N, OC, K, {o.x.data(), K, 1}, {o.w.data(), 1, K}, o.y.data(), OC, GemmInit::kZero); }),
        srbench::bench::shape_gflops(
            sh, [&] { sgemm(N, K, OC, {o.dy.data(), OC, 1}, {o.w.data(), K, 1}, o.dx.data(), K, GemmInit::kZero); }),
        srbench::bench::shape_gflops(sh, [&] {
          sgemm(OC, K, N, {o.dy.data(), 1, OC}, {o.x.data(), K, 1}, o.dw.data(), K, GemmInit::kAccumulate);
        })};
  });
}

// GFLOP/s of a core's fused multiply-adds: 12 independent accumulator chains of the widest vector
// the build targets (enough to cover the FMA latency on two pipes), best of 5 timings, each timed
// by this process's CPU time (the rate while it runs on a core: on a shared machine the wall
// clock would also count the time other processes held it).
void print_fma_peak() {
#if defined(__AVX512F__)
  using V = __m512;
  constexpr int lanes = 16;
  auto fma = [](V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); };
  auto set = [](float x) { return _mm512_set1_ps(x); };
  const char* unit = "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
  using V = __m256;
  constexpr int lanes = 8;
  auto fma = [](V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); };
  auto set = [](float x) { return _mm256_set1_ps(x); };
  const char* unit = "AVX2+FMA";
#else
  std::printf("no FMA vector unit\npeak_gflops=0\n");
  return;
#endif
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  constexpr int chains = 12;
  const long iters = 20000000;
  double best = 0;
  float sink = 0;
  for (int r = 0; r < 5; ++r) {
    V acc[chains];
    for (int c = 0; c < chains; ++c) acc[c] = set(1.0f + 1e-3f * c);
    const V a = set(0.999999f), b = set(1e-7f);
    const double t0 = cpu_seconds();
    for (long i = 0; i < iters; ++i)
      for (int c = 0; c < chains; ++c) acc[c] = fma(acc[c], a, b);
    const double s = cpu_seconds() - t0;
    best = std::max(best, 2.0 * lanes * chains * iters / s * 1e-9);
    // Every chain's result is used: were only one read, the compiler would drop the other chains
    // and the loop would time one chain's latency (12 × that was printed as the peak until
    // 2026-12-06: 1.5 × the true peak on an AMD EPYC; performance.md, round 19).
    for (int c = 0; c < chains; ++c) {
      float out[lanes];
      std::memcpy(out, &acc[c], sizeof out);
      for (int l = 0; l < lanes; ++l) sink += out[l];
    }
  }
  std::fprintf(stderr, "%g\n", sink);
  std::printf("%s, %d accumulators, %ld iterations\npeak_gflops=%.2f\n", unit, chains, iters, best);
#endif
}

long maxrss_kb() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_model [--threads 1,2] [--steps N] [--configs S,M,L]\n"
               "       bench_model --run --d D --layers L --heads H --T T --batch B [--threads N] [--steps N]\n"
               "                   [--arch ARCH]\n"
               "       bench_model --gemm\n"
               "       bench_model --peak\n"
               "       bench_model --shapes\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  srbench::flush_denormals();  // as the CLI computes (common/float_mode.hpp)
  std::vector<int> threads = {1};
  std::string configs = "S,M";
  int steps = 30;
  bool one = false;
  BenchConfig custom{"run", 0, 0, 0, 0, 0};
  for (int i = 1; i < argc; ++i) {
    const bool has = i + 1 < argc;
    if (!std::strcmp(argv[i], "--gemm")) {
      print_gemm_rate();
      return 0;
    } else if (!std::strcmp(argv[i], "--shapes")) {
      print_shapes();
      return 0;
    } else if (!std::strcmp(argv[i], "--peak")) {
      print_fma_peak();
      return 0;
    } else if (!std::strcmp(argv[i], "--run")) one = true;
    else if (!has) return usage();
    else if (!std::strcmp(argv[i], "--threads")) threads = parse_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--configs")) configs = argv[++i];
    else if (!std::strcmp(argv[i], "--d")) custom.d_model = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--layers")) custom.layers = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--heads")) custom.heads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--T")) custom.T = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--batch")) custom.batch = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--arch")) custom.arch = argv[++i];
    else return usage();
  }
  if (steps < 1) return usage();
  if (one) {
    if (custom.d_model < 1 || custom.layers < 1 || custom.T < 1 || custom.batch < 1) return usage();
    srbench::model::ModelConfig arch;
    try {
      arch.set("arch", custom.arch);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_model: --arch: %s\n", e.what());
      return 2;
    }
    if (custom.heads < 1 && !arch.recurrent()) {  // recurrent.md's archs have no heads
      std::fprintf(stderr, "bench_model: --arch %s needs --heads H (at least 1)\n", custom.arch.c_str());
      return 2;
    }
    const Result r = run(custom, threads.at(0), steps);
    std::printf("tok_s=%.1f step_ms=%.3f loss=%.6f maxrss_kb=%ld cpu_tok_s=%.1f params=%lld\n",
                custom.batch * custom.T / r.step_s, r.step_s * 1e3, r.loss, maxrss_kb(), custom.batch * custom.T / r.cpu_step_s,
                static_cast<long long>(r.params));
    return 0;
  }
  // cpu-based: tokens per CPU-second per thread, a steadier figure on a loaded machine (for one
  // thread it is what the wall-clock rate would be without contention).
  std::printf("config  threads  step_ms  train_tok/s  cpu-based tok/s  (medians of %d steps after 3 warm-up)\n",
              steps);
  for (const auto& bc : kConfigs) {
    if (configs.find(bc.name) == std::string::npos) continue;
    for (int nt : threads) {
      const Result r = run(bc, nt, steps);
      const int n = bc.batch * bc.T;
      std::printf("%-6s  %7d  %7.2f  %11.0f  %15.0f\n", bc.name, nt, r.step_s * 1e3, n / r.step_s, n / r.cpu_step_s);
      std::fflush(stdout);
    }
  }
  return 0;
}
