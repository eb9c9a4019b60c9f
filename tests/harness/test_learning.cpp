// Real learning: 2-layer, d_model 64 models reach high sequence accuracy on fresh examples of
// their training lengths, in at least 2 of 3 seeds (flip-flop states 1–16, parity states 1–8,
// copy 1–8). Evaluation covers every training length with equal weight, like training does.
#include <omp.h>

#include <catch2/catch.hpp>
#include <string>

#include "harness/suite/suite.hpp"
#include "harness/run/trainer.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"

using namespace srbench::harness;

namespace {

// How many of the suite's runs (one per seed) reach `target` id_acc; prints each.
int seeds_reaching(const std::string& suite_text, double target) {
  // One thread, as a sweep runs each run: CTest runs tests side by side on few cores, where
  // OpenMP teams would oversubscribe them (the numbers do not depend on the thread count).
  omp_set_num_threads(1);
  const Suite suite = parse_suite(suite_text, "learning.yaml");
  int reached = 0;
  for (const auto& spec : suite.runs) {
    const RunResult r = run_training(spec);
    INFO(spec.entry << " seed " << spec.seed << ": status " << r.status << " " << r.message);
    REQUIRE(r.status == "ok");
    WARN(spec.entry << " seed " << spec.seed << ": id_acc " << r.metrics.id_acc << ", steps_to_target "
                    << r.metrics.steps_to_target << ", " << static_cast<int>(r.tokens_per_s) << " tokens/s");
    reached += r.metrics.id_acc >= target;
  }
  return reached;
}

std::string suite(const std::string& task, const std::string& params, int max_length, int steps,
                  const std::string& lr) {
  std::string lengths;
  for (int n = 1; n <= max_length; ++n) lengths += (n > 1 ? ", " : "") + std::to_string(n);
  return "seeds: [0, 1, 2]\n"
         "defaults:\n"
         "  model: {layers: 2, d_model: 64, heads: 4, max_len: 64}\n"
         "  train: {steps: " + std::to_string(steps) + ", batch: 32, lr: " + lr +
         ", warmup: 50, eval_every: 100000}\n"
         "  eval: {examples: 64, val_examples: 16}\n"
         "tasks:\n"
         "  - task: " + task + "\n"
         "    params: " + params + "\n"
         "    train: {length: [1, " + std::to_string(max_length) + "]}\n"
         "    eval: {lengths: [" + lengths + "]}\n";
}

}  // namespace

TEST_CASE("learning: flip-flop (states, lengths 1-16) to >= 99% in 2 of 3 seeds", "[harness][learning]") {
  CHECK(seeds_reaching(suite("flipflop", "{}", 16, 600, "3e-3"), 0.99) >= 2);
}

// 6,000 steps: the products' summation order follows the sgemm kernel the build picks (AVX2 or
// AVX-512), and with the AVX-512 kernel 4,000 steps left seeds 0 and 2 on the way up (id_acc
// 0.943, 0.988; 1.000 for seed 1); at 6,000 steps 0.998 / 1.000 / 1.000.
TEST_CASE("learning: parity (states, lengths 1-8) to >= 99% in 2 of 3 seeds", "[harness][learning]") {
  CHECK(seeds_reaching(suite("parity", "{}", 8, 6000, "1e-3"), 0.99) >= 2);
}

TEST_CASE("learning: copy (lengths 1-8) to >= 95% in 2 of 3 seeds", "[harness][learning]") {
  CHECK(seeds_reaching(suite("copy", "{}", 8, 600, "3e-3"), 0.95) >= 2);
}
