// Where training examples come from (harness.md, "Seeds"): the unbounded generator under the run
// seed, or a finite set under data_seed visited in a seeded order; and the shard a Slurm job
// array implies.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <set>

#include "harness/suite/suite.hpp"
#include "harness/run/trainer.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::tasks::Example;
using srbench::tasks::Stream;

namespace {

Suite tiny(const std::string& train) {
  return parse_suite("seeds: [3, 4]\ndefaults:\n  train: {data_seed: 9}\n"
                     "tasks:\n  - task: parity\n    train: " + train + "\n",
                     "t.yaml");
}

}  // namespace

TEST_CASE("training data: unbounded generator under the run seed, lengths in the training range", "[harness][data]") {
  const Suite s = tiny("{length: [3, 7]}");
  const RunSpec& spec = s.runs[0];
  const auto task = srbench::tasks::make_task("parity", spec.params);
  TrainingData data(*task, spec);
  std::set<size_t> lengths;
  Example ex;
  for (uint64_t k = 0; k < 500; ++k) {
    data.example(k, ex);
    const int n = static_cast<int>(ex.tokens.size());
    REQUIRE(n >= 3);
    REQUIRE(n <= 7);
    lengths.insert(ex.tokens.size());
    // the same as example k of the train stream under the run seed, at that length
    const Example direct = task->sample(spec.seed, Stream::Train, k, n);
    REQUIRE(direct.tokens == ex.tokens);
    REQUIRE(direct.targets == ex.targets);
  }
  CHECK(lengths.size() == 5);  // every length of the range occurs
}

TEST_CASE("training data: a finite set under data_seed, each example once per epoch, order by run seed", "[harness][data]") {
  const Suite s = tiny("{length: [2, 6], examples: 40}");
  const auto task = srbench::tasks::make_task("parity", s.runs[0].params);
  std::vector<std::vector<std::vector<int32_t>>> orders;  // per seed: tokens in visiting order
  std::vector<std::multiset<std::vector<int32_t>>> sets;   // per seed: the finite set
  for (const RunSpec& spec : s.runs) {
    TrainingData data(*task, spec);
    std::vector<std::vector<int32_t>> seen;
    Example ex;
    for (uint64_t k = 0; k < 120; ++k) {  // three epochs
      data.example(k, ex);
      seen.push_back(ex.tokens);
    }
    // every example drawn is one of the train stream under data_seed (9), at a training length
    for (const auto& t : seen) {
      bool found = false;
      for (uint64_t j = 0; j < 40 && !found; ++j)
        for (int n = 2; n <= 6 && !found; ++n) found = task->sample(9, Stream::Train, j, n).tokens == t;
      REQUIRE(found);
    }
    // the same 40 examples in every epoch (each once), in another order
    const std::multiset<std::vector<int32_t>> first(seen.begin(), seen.begin() + 40);
    for (int epoch = 1; epoch < 3; ++epoch)
      CHECK(std::multiset<std::vector<int32_t>>(seen.begin() + epoch * 40, seen.begin() + (epoch + 1) * 40) == first);
    sets.push_back(first);
    CHECK(!std::equal(seen.begin(), seen.begin() + 40, seen.begin() + 40));  // epochs reshuffled
    orders.push_back(seen);
  }
  CHECK(sets[0] == sets[1]);      // the set depends on data_seed only
  CHECK(orders[0] != orders[1]);  // another run seed, another order of the same set
}

TEST_CASE("sweep: SLURM_ARRAY_* set the shard when --shard is not given", "[harness][sweep][slurm-env]") {
  srbench::test::TempDir dir;
  srbench::test::write_file(dir.file("s.yaml"), "seeds: [0, 1, 2, 3, 4, 5, 6]\ntasks:\n  - task: parity\n");
  setenv("SLURM_ARRAY_TASK_ID", "12", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "10", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);
  auto r = srbench::test::run_srbench({"sweep", dir.file("s.yaml"), "--dry-run", "--out", dir.file("o.h5")});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("shard 2/3: 2"));  // runs 2 and 5 of 7
  // --shard wins over the environment
  r = srbench::test::run_srbench({"sweep", dir.file("s.yaml"), "--dry-run", "--shard", "0/3", "--out", dir.file("o.h5")});
  CHECK_THAT(r.out, Catch::Contains("shard 0/3: 3"));
  setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);  // id 12 − min 10 = 2 is not below 2
  r = srbench::test::run_srbench({"sweep", dir.file("s.yaml"), "--dry-run", "--out", dir.file("o.h5")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("SLURM_ARRAY"));
  unsetenv("SLURM_ARRAY_TASK_ID");
  unsetenv("SLURM_ARRAY_TASK_MIN");
  unsetenv("SLURM_ARRAY_TASK_COUNT");
}

TEST_CASE("batch: right-padded rows carry their own length and input-tape length", "[harness][data]") {
  const auto tape = srbench::tasks::make_task("reverse_string", {});
  const auto plain = srbench::tasks::make_task("parity", {});
  std::vector<Example> ex = {tape->sample(0, Stream::Eval, 0, 3), plain->sample(0, Stream::Eval, 0, 2),
                             tape->sample(0, Stream::Eval, 1, 1)};
  // reverse_string at n: n input tokens, then n blanks
  REQUIRE(ex[0].tokens.size() == 6);
  Batch b;
  b.assemble(ex);
  CHECK(b.B == 3);
  CHECK(b.T == 6);
  CHECK(b.lengths == std::vector<int32_t>{6, 2, 2});
  CHECK(b.input_lengths == std::vector<int32_t>{3, 2, 1});
  CHECK(b.rows().lengths == b.lengths.data());
  CHECK(b.rows().input_lengths == b.input_lengths.data());
  CHECK(b.real_tokens == 10);
  CHECK(std::vector<int32_t>(b.targets.begin() + 6 + 2, b.targets.begin() + 12) == std::vector<int32_t>(4, -1));
}
