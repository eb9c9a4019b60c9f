// Training keys added after runs were recorded (train.betas, train.eps): at their defaults they
// leave a run's resolved YAML — and so its id — exactly as before; set, they reach the optimiser.
#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "common/h5.hpp"
#include "harness/results/results.hpp"
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

std::string with_train(const std::string& extra);

RunSpec only_run(const std::string& extra_train = "") {
  const Suite s = parse_suite(extra_train.empty() ? kSuite : with_train(extra_train), "s.yaml");
  REQUIRE(s.runs.size() == 1);
  return s.runs[0];
}

// kSuite with `extra` added to the defaults' train section.
std::string with_train(const std::string& extra) {
  std::string text = kSuite;
  text.replace(text.find("length: [2, 5]}"), 15, "length: [2, 5], " + extra + "}");
  return text;
}

// kSuite with the task entry's eval.lengths set.
std::string with_eval_lengths(const std::string& lengths) {
  std::string text = kSuite;
  text.replace(text.find("  - task: parity\n"), 17, "  - task: parity\n    eval: {lengths: " + lengths + "}\n");
  return text;
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
  auto error_with = [](const std::string& extra) { return srbench::test::config_error_of(with_train(extra)); };
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

TEST_CASE("eval.lengths takes ranges A..B and A..B:STEP, alone or in a list", "[harness][suite]") {
  auto lengths_of = [](const std::string& lengths) {
    std::string text = with_eval_lengths(lengths);
    text.replace(text.find("max_len: 32"), 11, "max_len: 600");
    const Suite s = parse_suite(text, "s.yaml");
    return s.runs.at(0).eval.lengths;
  };
  CHECK(lengths_of("41..45") == std::vector<int>{41, 42, 43, 44, 45});
  CHECK(lengths_of("41..500:100") == std::vector<int>{41, 141, 241, 341, 441});
  CHECK(lengths_of("[4, 10..30:10, 7]") == std::vector<int>{4, 10, 20, 30, 7});
  CHECK(lengths_of("[5..5]") == std::vector<int>{5});
  // the same lengths written out give the same run (the resolved config lists them)
  auto id_of = [](const std::string& lengths) { return parse_suite(with_eval_lengths(lengths), "s.yaml").runs.at(0).id; };
  CHECK(id_of("2..6:2") == id_of("[2, 4, 6]"));

  auto error_with = [](const std::string& lengths) { return srbench::test::config_error_of(with_eval_lengths(lengths)); };
  CHECK(error_with("50..41") == "s.yaml:7: tasks[0].eval.lengths: the range 50..41 is empty (50 > 41)");
  CHECK(error_with("1..9:0") == "s.yaml:7: tasks[0].eval.lengths: the range 1..9:0 has step 0 (it must be at least 1)");
  CHECK(error_with("[2, 3..x]") ==
        "s.yaml:7: tasks[0].eval.lengths[1]: '3..x' is not a length range (expected A..B or A..B:STEP with whole "
        "numbers, e.g. 41..500:20)");
  CHECK(error_with("[2, 3..]") ==
        "s.yaml:7: tasks[0].eval.lengths[1]: '3..' is not a length range (expected A..B or A..B:STEP with whole "
        "numbers, e.g. 41..500:20)");
  CHECK(error_with("0..4") == "s.yaml:7: tasks[0].eval.lengths: length 0 is outside 1..1000000");
  CHECK(error_with("[1..40]").find("evaluation length 33 makes sequences of up to 33 tokens") != std::string::npos);
}

TEST_CASE("train.length_per: batch draws one length per batch (as NNCH), example per example by default",
          "[harness][suite]") {
  const RunSpec per_example = only_run();
  const RunSpec per_batch = only_run("length_per: batch");
  CHECK_FALSE(per_example.train.length_per_batch);
  CHECK(per_batch.train.length_per_batch);
  CHECK(per_example.resolved_yaml.find("length_per") == std::string::npos);  // the default: ids unchanged
  CHECK(per_batch.resolved_yaml.find("  length_per: batch\n") != std::string::npos);
  CHECK(only_run("length_per: example").id == per_example.id);

  const auto task = srbench::tasks::make_task("parity", {});
  auto lengths = [&](const RunSpec& spec, int steps) {
    TrainingData data(*task, spec);
    std::vector<std::vector<size_t>> out(static_cast<size_t>(steps));
    srbench::tasks::Example e;
    for (int s = 0; s < steps; ++s)
      for (int64_t b = 0; b < spec.train.batch; ++b) {
        data.example(static_cast<uint64_t>(s * spec.train.batch + b), e);
        out[s].push_back(e.tokens.size());
      }
    return out;
  };
  std::vector<int> seen(6, 0);
  int mixed = 0;
  for (const auto& batch : lengths(per_batch, 400)) {
    CHECK(std::all_of(batch.begin(), batch.end(), [&](size_t n) { return n == batch[0]; }));
    ++seen.at(batch[0]);
  }
  for (int n = 2; n <= 5; ++n) CHECK(seen[n] > 60);  // each of 2..5 about 100 times in 400 steps
  CHECK(seen[0] + seen[1] == 0);
  for (const auto& batch : lengths(per_example, 50)) mixed += !std::all_of(batch.begin(), batch.end(), [&](size_t n) { return n == batch[0]; });
  CHECK(mixed > 40);

  CHECK(srbench::test::config_error_of(with_train("length_per: batch, examples: 100")) ==
        "s.yaml:4: defaults.train.length_per: length_per: batch draws one length per batch from the unbounded "
        "generator; it does not apply to a finite training set (train.examples 100)");
  CHECK(srbench::test::config_error_of(with_train("length_per: each")) ==
        "s.yaml:4: defaults.train.length_per: 'each' is not one of example, batch");
}

TEST_CASE("train.fit_metric: the default keeps the resolved YAML and id, and bad values name the key and line",
          "[harness][suite]") {
  const RunSpec plain = only_run();
  CHECK(plain.train.fit_metric == FitMetric::seq_acc);
  CHECK(plain.resolved_yaml.find("fit_metric") == std::string::npos);
  CHECK(only_run("fit_metric: seq_acc").id == plain.id);
  const RunSpec token = only_run("fit_metric: token_acc");
  CHECK(token.train.fit_metric == FitMetric::token_acc);
  CHECK(token.id != plain.id);
  CHECK(token.resolved_yaml.find("  fit_metric: token_acc\n") != std::string::npos);
  CHECK(srbench::test::config_error_of(with_train("fit_metric: loss")) ==
        "s.yaml:4: defaults.train.fit_metric: 'loss' is not one of seq_acc, token_acc");
}

TEST_CASE("train.fit_metric: token_acc records the validation token accuracy and judges fitted by token_acc",
          "[harness][suite]") {
  omp_set_num_threads(1);
  const RunResult seq = run_training(only_run("target_accuracy: 0.5"));
  const RunResult tok = run_training(only_run("target_accuracy: 0.5, fit_metric: token_acc"));
  REQUIRE(seq.status == "ok");
  REQUIRE(tok.status == "ok");
  // the same training and evaluation: only what is judged differs
  REQUIRE(seq.curve.size() == tok.curve.size());
  REQUIRE(seq.eval.size() == tok.eval.size());
  for (size_t i = 0; i < seq.curve.size(); ++i) {
    CHECK(seq.curve[i].val_acc == tok.curve[i].val_acc);
    CHECK(std::isnan(seq.curve[i].val_token_acc));  // not measured under seq_acc
    CHECK(tok.curve[i].val_token_acc >= tok.curve[i].val_acc);  // every sequence right: every token right
    CHECK(tok.curve[i].val_token_acc <= 1.0);
  }
  for (size_t i = 0; i < seq.eval.size(); ++i) CHECK(seq.eval[i].token_acc == tok.eval[i].token_acc);
  CHECK(tok.metrics.id_acc == seq.metrics.id_acc);

  // by hand: the id rows inside train.length [2, 5], and the first curve point at the target
  double token_sum = 0;
  int n = 0;
  for (const auto& e : tok.eval)
    if (e.condition == 0 && e.length >= 2 && e.length <= 5) token_sum += e.token_acc, ++n;
  REQUIRE(n > 0);
  CHECK(tok.metrics.fitted == (token_sum / n >= 0.5 ? 1 : 0));
  int64_t first = -1;
  for (const auto& p : tok.curve)
    if (first < 0 && p.val_token_acc >= 0.5) first = p.step;
  CHECK(tok.metrics.steps_to_target == first);

  // the run file holds curve/val_token_acc only under token_acc, and reads it back
  srbench::test::TempDir dir;
  for (const RunResult* r : {&seq, &tok}) {
    const std::string path = dir.file(r->run_id + ".h5");
    write_run_file(path, *r, kSuite, nullptr);
    {
      srbench::h5::Id f = srbench::h5::open_file(path, "run file");
      srbench::h5::Id curve = srbench::h5::open_group(f, "runs/" + r->run_id + "/curve");
      CHECK(srbench::h5::has_link(curve, "val_token_acc") == (r == &tok));
    }
    const RunResult back = read_run_file_at(path).result;
    REQUIRE(back.curve.size() == r->curve.size());
    for (size_t i = 0; i < back.curve.size(); ++i)
      CHECK(srbench::test::same(back.curve[i].val_token_acc, r->curve[i].val_token_acc));
  }
}
