// Training keys added after runs were recorded (train.betas, train.eps): at their defaults they
// leave a run's resolved YAML — and so its id — exactly as before; set, they reach the optimiser.
#include <catch2/catch.hpp>
#include <omp.h>

#include "harness/run/data.hpp"
#include "harness/run/trainer.hpp"
#include "harness/suite/suite.hpp"
#include "model/optim.hpp"
#include "tests/harness/helpers.hpp"

using namespace srbench::harness;

namespace {

const std::string kSuite = R"(name: keys
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 3, batch: 4, lr: 0.01, warmup: 0, eval_every: 3, length: [2, 5]}
tasks:
  - task: parity
)";

RunSpec only_run(const std::string& extra_train = "") {
  std::string text = kSuite;
  if (!extra_train.empty()) text.replace(text.find("length: [2, 5]}"), 15, "length: [2, 5], " + extra_train + "}");
  const Suite s = parse_suite(text, "s.yaml");
  REQUIRE(s.runs.size() == 1);
  return s.runs[0];
}

}  // namespace

TEST_CASE("train.betas and train.eps: defaults keep the resolved YAML and id; set, they are in it", "[harness][suite]") {
  const RunSpec plain = only_run();
  CHECK(plain.train.beta1 == 0.9);
  CHECK(plain.train.beta2 == 0.98);
  CHECK(plain.train.eps == 1e-9);
  CHECK(plain.resolved_yaml.find("betas") == std::string::npos);
  CHECK(plain.resolved_yaml.find("\n  eps:") == std::string::npos);
  // the defaults stated explicitly are the same run
  CHECK(only_run("betas: [0.9, 0.98], eps: 1e-9").id == plain.id);

  const RunSpec adam = only_run("betas: [0.9, 0.999], eps: 1e-8");
  CHECK(adam.train.beta2 == 0.999);
  CHECK(adam.train.eps == 1e-8);
  CHECK(adam.id != plain.id);
  CHECK(adam.resolved_yaml.find("  betas: [0.9, 0.999]\n  eps: 1e-08\n") != std::string::npos);
}

TEST_CASE("train.betas and train.eps: bad values name the key and line", "[harness][suite]") {
  auto error_with = [](const std::string& extra) {
    std::string text = kSuite;
    text.replace(text.find("length: [2, 5]}"), 15, "length: [2, 5], " + extra + "}");
    return srbench::test::config_error_of(text);
  };
  CHECK(error_with("betas: [0.9]") == "s.yaml:4: defaults.train.betas: expected [beta1, beta2], got a list");
  CHECK(error_with("betas: 0.9") == "s.yaml:4: defaults.train.betas: expected [beta1, beta2], got '0.9'");
  CHECK(error_with("betas: [1, 0.9]") == "s.yaml:4: defaults.train.betas: 1 is outside [0, 1) (AdamW's betas)");
  CHECK(error_with("betas: [0.9, x]") == "s.yaml:4: defaults.train.betas: expected a number, got 'x'");
  CHECK(error_with("eps: 0") == "s.yaml:4: defaults.train.eps: 0 must be above 0");
}

TEST_CASE("train.betas and train.eps reach AdamW: a run equals the same steps taken by hand", "[harness][suite]") {
  omp_set_num_threads(1);
  const RunSpec spec = only_run("betas: [0.5, 0.999], eps: 1e-3");
  std::unique_ptr<srbench::model::Model> trained;
  const RunResult r = run_training(spec, &trained);
  REQUIRE(r.status == "ok");

  // By hand, with an optimiser built from the given betas and eps (and, for contrast, AdamW's
  // defaults): the same model init, the same batches, the same settings.
  auto by_hand = [&](double b1, double b2, double eps) {
    const auto task = srbench::tasks::make_task(spec.task, spec.params, {spec.train.data_seed});
    srbench::model::Model m(spec.model);
    m.init(spec.seed);
    srbench::model::AdamW opt(m.layout(), b1, b2, eps);
    TrainingData data(*task, spec);
    std::vector<srbench::tasks::Example> examples(static_cast<size_t>(spec.train.batch));
    Batch batch;
    for (int64_t s = 0; s < spec.train.steps; ++s) {
      for (int64_t b = 0; b < spec.train.batch; ++b) data.example(static_cast<uint64_t>(s * spec.train.batch + b), examples[b]);
      batch.assemble(examples);
      srbench::model::train_step(m, opt, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, s, spec.train);
    }
    return std::vector<float>(m.params(), m.params() + m.num_params());
  };
  const std::vector<float> got(trained->params(), trained->params() + trained->num_params());
  CHECK(got == by_hand(0.5, 0.999, 1e-3));
  CHECK(got != by_hand(0.9, 0.98, 1e-9));
}
