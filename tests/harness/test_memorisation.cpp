// Memorisation made visible (eval/seen_frac, eval/input_space) and per-position accuracy
// (eval/position_acc), against independent recomputations from the run's own training stream and
// evaluation sets.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <set>

#include "harness/results/results.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "harness/run/trainer.hpp"
#include "harness/suite/suite.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;

namespace {

RunSpec tiny_run(const std::string& train, const std::string& eval) {
  const Suite s = parse_suite(
      "defaults:\n  model: {layers: 1, d_model: 16, heads: 2, max_len: 64}\n"
      "  train: {steps: 20, batch: 32, lr: 0.003, warmup: 0, eval_every: 20}\n"
      "  eval: {examples: 200}\n"
      "tasks:\n  - task: parity\n    params: {output: states}\n    train: " + train + "\n    eval: " + eval + "\n",
      "s.yaml");
  return s.runs.at(0);
}

// The run's training examples redrawn from its data stream, an independent count of what it saw.
std::set<std::vector<int32_t>> redrawn_training_inputs(const srbench::tasks::Task& task, const RunSpec& spec) {
  TrainingData data(task, spec);
  std::set<std::vector<int32_t>> drawn;
  srbench::tasks::Example e;
  for (uint64_t k = 0; k < static_cast<uint64_t>(spec.train.steps * spec.train.batch); ++k) {
    data.example(k, e);
    drawn.insert(e.tokens);
  }
  return drawn;
}

}  // namespace

TEST_CASE("seen_frac: every input seen at a tiny training length, none beyond the training range", "[harness][eval]") {
  omp_set_num_threads(1);
  const RunSpec spec = tiny_run("{length: [1, 3]}", "{lengths: [3, 12]}");
  const RunResult r = run_training(spec);
  REQUIRE(r.status == "ok");
  REQUIRE(r.eval.size() == 2);
  // 640 training examples over the 2 + 4 + 8 bit strings of lengths 1..3: all 8 of length 3 drawn
  CHECK(r.eval[0].seen_frac == 1.0);
  CHECK(r.eval[0].input_space == 8.0);
  CHECK(r.eval[1].seen_frac == 0.0);  // length 12 was never trained on
  CHECK(r.eval[1].input_space == 4096.0);
  CHECK(r.chance == 0.5);  // parity states: the scored targets are the two states
  CHECK(r.eval_s > 0);     // the validation points and the final evaluation, timed
  CHECK(r.eval_s < r.wall_s);

  // an independent count: the run's training examples redrawn, compared token by token
  const auto task = srbench::tasks::make_task(spec.task, spec.params, {spec.train.data_seed});
  const std::set<std::vector<int32_t>> drawn = redrawn_training_inputs(*task, spec);
  CHECK(drawn.size() == 14);
}

TEST_CASE("seen_frac: a count of an evaluation set's examples among the training examples", "[harness][eval]") {
  omp_set_num_threads(1);
  // lengths 9..10: 1536 strings, 640 examples drawn: some of length 10 are seen, most not
  const RunSpec spec = tiny_run("{length: [9, 10]}", "{lengths: [10]}");
  const RunResult r = run_training(spec);
  REQUIRE(r.status == "ok");
  const auto task = srbench::tasks::make_task(spec.task, spec.params, {spec.train.data_seed});
  const std::set<std::vector<int32_t>> drawn = redrawn_training_inputs(*task, spec);
  int seen = 0;
  const auto eval = evaluation_set(*task, spec.train.data_seed, srbench::tasks::Stream::Eval, 10, spec.eval.examples);
  for (const auto& x : eval) seen += drawn.count(x.tokens) > 0;
  CHECK(r.eval[0].seen_frac == static_cast<double>(seen) / static_cast<double>(eval.size()));
  CHECK(r.eval[0].seen_frac > 0.05);
  CHECK(r.eval[0].seen_frac < 0.6);
}

TEST_CASE("position_acc: accuracy per position, NaN where nothing is scored, consistent with token_acc",
          "[harness][eval]") {
  omp_set_num_threads(1);
  srbench::test::TempDir dir;
  RunSpec spec = tiny_run("{length: [2, 4]}", "{lengths: [4, 8]}");
  const RunResult r = run_training(spec);
  REQUIRE(r.status == "ok");
  const EvalRow& row = r.eval[1];  // length 8: every position scored (states)
  REQUIRE(row.position_acc.size() == 8);
  double mean = 0;
  for (double a : row.position_acc) {
    CHECK(a >= 0.0);
    CHECK(a <= 1.0);
    mean += a / 8;
  }
  CHECK(mean == Approx(row.token_acc).epsilon(1e-12));  // every example scores all 8 positions
  // final output: only the last position is scored
  const RunSpec final_spec = [&] {
    Suite s = parse_suite(
        "defaults:\n  model: {layers: 1, d_model: 16, heads: 2, max_len: 64}\n"
        "  train: {steps: 5, batch: 8, eval_every: 5}\n  eval: {examples: 50}\n"
        "tasks:\n  - task: parity\n    params: {output: final}\n    train: {length: [2, 4]}\n    eval: {lengths: [6]}\n",
        "s.yaml");
    return s.runs.at(0);
  }();
  const RunResult f = run_training(final_spec);
  REQUIRE(f.status == "ok");
  REQUIRE(f.eval[0].position_acc.size() == 6);
  for (int t = 0; t < 5; ++t) CHECK(std::isnan(f.eval[0].position_acc[t]));
  CHECK(f.eval[0].position_acc[5] == f.eval[0].token_acc);

  // the run file holds them: eval/seen_frac, eval/input_space [rows], eval/position_acc [rows, 8]
  const std::string path = dir.file("r.h5");
  RunResult copy = r;
  copy.run_id = "0123456789ab";
  write_run_file(path, copy, "name: x\n", nullptr);
  const RunResult back = read_run_file(path);
  REQUIRE(back.eval.size() == r.eval.size());
  for (size_t i = 0; i < r.eval.size(); ++i) {
    CHECK(back.eval[i].seen_frac == r.eval[i].seen_frac);
    CHECK(back.eval[i].input_space == r.eval[i].input_space);
    CHECK(back.eval[i].position_acc == r.eval[i].position_acc);
  }
}
