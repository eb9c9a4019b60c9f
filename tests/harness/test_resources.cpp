// Resources up front (harness/run/resources.hpp): each run's peak memory is estimated before
// anything runs; a suite whose runs cannot fit in memory / --jobs is refused naming the entry and
// the estimate; --dry-run prints the estimates; the estimate holds against the peak resident
// memory of a real run measured by the kernel (wait4), spline-score attention's and LIMe's too.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "harness/run/resources.hpp"
#include "harness/suite/suite.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Activations dominate: 64 examples of up to 129 tokens, d_model 128.
const char* kSuite = R"(name: mem
seeds: [0]
defaults:
  model: {layers: 2, d_model: 128, heads: 4, max_len: 160}
  train: {steps: 3, batch: 64, eval_every: 3, warmup: 1}
  eval: {examples: 64, val_examples: 64}
tasks:
  - task: parity
    train: {length: [60, 64]}
    eval: {lengths: [128]}
)";

// Peak resident bytes of `srbench ARGS` and the processes it waited for, as the kernel counts them.
uint64_t peak_rss(const std::vector<std::string>& args, int* exit_code) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout)) _exit(127);
    std::vector<char*> argv = {const_cast<char*>(SRBENCH_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(SRBENCH_BIN, argv.data());
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  REQUIRE(wait4(pid, &status, 0, &ru) == pid);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}

// `srbench ARGS` (a sweep) runs, and its measured peak lies below the estimate `e`, by at most
// `factor`.
void check_against_peak(const MemoryEstimate& e, const std::vector<std::string>& args, uint64_t factor) {
  int code = -1;
  const uint64_t peak = peak_rss(args, &code);
  INFO("estimate " << describe_estimate(e) << ", measured peak " << bytes_text(peak));
  REQUIRE(code == 0);
  CHECK(peak <= e.total());
  CHECK(e.total() <= factor * peak);
}

// The suite `text` written to `dir`/`name` and loaded; it has one run.
Suite write_and_load(const TempDir& dir, const std::string& name, const std::string& text) {
  srbench::test::write_file(dir.file(name), text);
  Suite suite = load_suite(dir.file(name), {});
  REQUIRE(suite.runs.size() == 1);
  return suite;
}

// The suite kSuite written to `dir`/mem.yaml; the memory estimate of its one run.
MemoryEstimate write_and_estimate(const TempDir& dir) { return estimate_memory(write_and_load(dir, "mem.yaml", kSuite).runs[0]); }

}  // namespace

TEST_CASE("resources: a suite whose runs cannot fit in memory is refused up front, naming the entry and the estimate",
          "[harness][sweep][resources]") {
  TempDir dir;
  const uint64_t e = write_and_estimate(dir).total();
  const auto big = run_srbench({"sweep", dir.file("mem.yaml"), "--out", dir.file("r/mem.h5"), "--set", "model.d_model=65536",
                                "--set", "model.layers=64"});
  INFO(big.out << big.err);
  CHECK(big.exit_code == 2);
  CHECK_THAT(big.err, Catch::Contains("entry 'parity', model 'default': a run needs about") && Catch::Contains("TiB (parameters") &&
                          Catch::Contains("cannot fit in memory"));
  CHECK(!fs::exists(dir.file("r/mem")));  // nothing ran
  // The dry run is refused as well.
  CHECK(run_srbench({"sweep", dir.file("mem.yaml"), "--dry-run", "--set", "model.d_model=65536", "--set", "model.layers=64"})
            .exit_code == 2);

  // The rule: a run's estimate E fits when E <= memory / runs at once.
  const auto dry = run_srbench({"sweep", dir.file("mem.yaml"), "--dry-run", "--out", dir.file("r/mem.h5")});
  INFO(dry.out << dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK_THAT(dry.out, Catch::Contains("memory ~" + bytes_text(e)));
  std::string two = kSuite;
  two.replace(two.find("seeds: [0]"), 10, "seeds: [0, 1]");
  srbench::test::write_file(dir.file("two.yaml"), two);
  auto with = [&](uint64_t memory, int jobs) {
    return run_srbench({"sweep", dir.file("two.yaml"), "--dry-run", "--memory", std::to_string(memory), "--jobs",
                        std::to_string(jobs), "--out", dir.file("r/two.h5")});
  };
  CHECK(with(2 * e, 2).exit_code == 0);
  const auto tight = with(2 * e - 2, 2);
  CHECK(tight.exit_code == 2);
  CHECK_THAT(tight.err, Catch::Contains("/ 2 runs at once"));
  CHECK(with(e, 1).exit_code == 0);
  CHECK(with(e - 1, 1).exit_code == 2);
  CHECK(with(e, 4).exit_code == 2);
  CHECK(run_srbench({"sweep", dir.file("two.yaml"), "--dry-run", "--memory", "lots"}).exit_code == 2);
}

TEST_CASE("resources: the estimate is above a real run's measured peak, and not far above it", "[harness][sweep][resources][no-asan]") {
  TempDir dir;
  const MemoryEstimate e = write_and_estimate(dir);
  // Forward's buffers are those of training's 64 sequences of at most 64 tokens (parity's states:
  // one token a bit); evaluation at 128 runs forward only, beside them.
  CHECK(e.batch == 64);
  CHECK(e.tokens == 64);
  check_against_peak(e, {"sweep", dir.file("mem.yaml"), "--out", dir.file("r/mem.h5"), "--jobs", "1"}, 3);
}

TEST_CASE("resources: spline-score attention and LIMe are estimated with their own buffers, above the measured peak",
          "[harness][sweep][resources][no-asan]") {
  TempDir dir;
  const MemoryEstimate softmax = write_and_estimate(dir);
  auto with_model = [&](const std::string& name, const std::string& keys) {
    std::string text = kSuite;
    text.replace(text.find("max_len: 160}"), 13, "max_len: 160, " + keys + "}");
    return write_and_load(dir, name + ".yaml", text).runs[0];
  };
  // kSuite's model: L = 2 blocks, H = 4 heads, d_model C = 128; forward's buffers for B = 64
  // sequences of T = 64 tokens, N = B·T rows.
  const uint64_t L = 2, H = 4, C = 128, B = 64, T = 64, N = B * T;
  {
    INFO("spline-score attention");
    const MemoryEstimate e = estimate_memory(with_model("score", "attention: spline-score"));
    // its scores (L,B,H,T,T) and row denominators (L,B,H,T) kept beside the attention weights
    CHECK(e.activations - softmax.activations == 4 * (L * B * H * T * T + L * B * H * T));
    check_against_peak(e, {"sweep", dir.file("score.yaml"), "--out", dir.file("r/score.h5"), "--jobs", "1"}, 3);
  }
  {
    INFO("LIMe");
    const MemoryEstimate e = estimate_memory(with_model("lime", "lime: static"));
    CHECK(e.activations - softmax.activations == 4 * L * N * 2 * C);  // every layer's raw keys and values
    check_against_peak(e, {"sweep", dir.file("lime.yaml"), "--out", dir.file("r/lime.h5"), "--jobs", "1"}, 3);
  }
}

TEST_CASE("resources: evaluation at long lengths is estimated linear in T, above the measured peak",
          "[harness][sweep][resources][no-asan]") {
  TempDir dir;
  auto with_eval = [&](int n) {
    std::string text = kSuite;
    text.replace(text.find("lengths: [128]"), 14, "lengths: [" + std::to_string(n) + "]");
    text.replace(text.find("max_len: 160"), 12, "max_len: " + std::to_string(n));
    return write_and_load(dir, "long" + std::to_string(n) + ".yaml", text).runs[0];
  };
  const MemoryEstimate e1 = estimate_memory(with_eval(1024)), e2 = estimate_memory(with_eval(2048));
  // Doubling the evaluation length doubles at most its own terms (a T×T term would quadruple): the
  // growth is below the estimate at 1,024 minus what does not depend on the evaluation length.
  const uint64_t fixed = e1.parameters + e1.optimiser + e1.activations + e1.process;
  CHECK(e2.total() - e1.total() <= e1.total() - fixed);
  CHECK(e2.total() < (1ull << 30));  // about 11 GB when evaluation held its 64 × 4 × 2048² weights
  check_against_peak(e2, {"sweep", dir.file("long2048.yaml"), "--out", dir.file("r/long.h5"), "--jobs", "1"}, 3);
}

TEST_CASE("resources: for recurrent models (lstm, stack_rnn, mamba, deltanet, gla) the estimate is above the measured peak, and within 2x",
          "[harness][sweep][resources][no-asan]") {
  // Training batches of 64 x 256 tokens with gradients, evaluation batches of 64 x 500 without.
  for (const char* arch : {"lstm", "stack_rnn", "mamba", "deltanet", "gla"}) {
    INFO("arch " << arch);
    TempDir dir;
    const Suite suite = write_and_load(dir, "rec.yaml",
                                       std::string("name: rec\nseeds: [0]\ndefaults:\n  model: {arch: ") + arch +
                                           ", layers: 1, d_model: 256, max_len: 600}\n"
                                           "  train: {steps: 2, batch: 64, eval_every: 2, warmup: 1, length: [250, 256]}\n"
                                           "  eval: {examples: 64, val_examples: 64, lengths: [500]}\ntasks:\n  - task: parity_check\n");
    check_against_peak(estimate_memory(suite.runs[0]), {"sweep", dir.file("rec.yaml"), "--out", dir.file("r/rec.h5"), "--jobs", "1"}, 2);
  }
}

TEST_CASE("resources: a spline search's estimate counts its population; above the measured peak, within 2x; "
          "a search that cannot fit is refused naming it",
          "[harness][sweep][resources][no-asan]") {
  TempDir dir;
  // kSuite's model and batches, one search of four models and a run that takes its splines.
  const Suite suite = write_and_load(dir, "se.yaml",
                                     std::string(kSuite) +
                                         "searches:\n  - name: par\n    task: parity\n    train: {length: [60, 64]}\n"
                                         "    model: {activation: spline, mlp_spline: {keypoints: 8}}\n    population: 4\n"
                                         "models:\n  - name: searched\n    model: {activation: spline, mlp_spline: "
                                         "{keypoints: 8}, splines_from: par, freeze_splines: true}\n");
  REQUIRE(suite.searches.size() == 1);
  const MemoryEstimate e = estimate_search_memory(suite.searches[0]);
  // Four models: four times one model's terms, one process.
  SearchSpec one = suite.searches[0];
  one.population = 1;
  const MemoryEstimate e1 = estimate_search_memory(one);
  CHECK(e.total() - e.process == 4 * (e1.total() - e1.process));
  check_against_peak(e, {"sweep", dir.file("se.yaml"), "--out", dir.file("r/se.h5"), "--searches-only", "--jobs", "1"}, 2);
  const auto tight = run_srbench({"sweep", dir.file("se.yaml"), "--out", dir.file("t/se.h5"), "--memory",
                                  std::to_string(e.total() - 1), "--jobs", "1"});
  INFO(tight.out << tight.err);
  CHECK(tight.exit_code == 2);
  CHECK_THAT(tight.err, Catch::Contains("search 'par' (population 4): needs about " + bytes_text(e.total())));
  CHECK(!fs::exists(dir.file("t/se")));
}

TEST_CASE("resources: a run that still runs out of memory (--memory overstated) is recorded failed (std::bad_alloc), "
          "and the sweep exits 3",
          "[harness][sweep][resources][no-asan]") {
  TempDir dir;
  srbench::test::write_file(dir.file("ba.yaml"), R"(name: ba
seeds: [0]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 3, batch: 8, eval_every: 3, warmup: 1}
  eval: {examples: 8, val_examples: 8}
tasks:
  - task: parity
    train: {length: [1, 4]}
    eval: {lengths: [4]}
)");
  const auto r = run_srbench({"sweep", dir.file("ba.yaml"), "--out", dir.file("r/ba.h5"), "--memory", "1000T", "--set",
                              "model.d_model=65536", "--set", "model.layers=64", "--jobs", "1"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("failed (std::bad_alloc)") && Catch::Contains("1 run(s) FAILED"));
}
