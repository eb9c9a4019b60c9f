// `srbench slurm` without --submit, where no Slurm is needed: the scripts it writes and the input it
// refuses. (test_slurm.sh submits them to a real Slurm.)
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support.hpp"

using srbench::test::read_file;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

const char* kSuite = R"(name: tiny
seeds: [0, 1, 2]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 60, batch: 8, eval_every: 20}
tasks:
  - task: parity
    train: {length: [1, 4]}
  - task: flipflop
    train: {length: [1, 6]}
)";

// Runs `srbench slurm ARGS...` from folder `dir` (the scripts cd to where it was run).
srbench::test::RunResult slurm_in(const std::string& dir, std::vector<std::string> args) {
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  args.insert(args.begin(), "slurm");
  auto r = run_srbench(args);
  fs::current_path(before);
  return r;
}

}  // namespace

TEST_CASE("slurm: the array and merge scripts run srbench by absolute path, one shard a task", "[slurm]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kSuite);
  const auto r = slurm_in(dir.path(), {"tiny.yaml", "--array", "4%2", "--out", "res/tiny.h5",
                                       "--sbatch-arg=--time=00:10:00", "--sbatch-arg=--cpus-per-task=3",
                                       "--set", "train.steps=30"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("6 runs over 4 array task(s) (1-2 each, at most 2 at once)"));
  CHECK_THAT(r.out, Catch::Contains("not submitted"));
  const std::string root = fs::canonical(dir.path()).string();
  const std::string sweep = read_file(dir.file("res/tiny/slurm/sweep.sbatch"));
  const std::string merge = read_file(dir.file("res/tiny/slurm/merge.sbatch"));
  CHECK(fs::is_directory(dir.file("res/tiny/logs")));  // Slurm does not create the log folder

  CHECK_THAT(sweep, Catch::StartsWith("#!/bin/bash\n"));
  CHECK_THAT(sweep, Catch::Contains("#SBATCH --array=0-3%2\n"));
  CHECK_THAT(sweep, Catch::Contains("#SBATCH --output=" + root + "/res/tiny/logs/%A_%a.out\n"));
  CHECK_THAT(sweep, Catch::Contains("#SBATCH --time=00:10:00\n#SBATCH --cpus-per-task=3\n"));
  CHECK_THAT(sweep, Catch::Contains("cd '" + root + "'\n"));
  CHECK_THAT(sweep, Catch::Contains("exec '" + fs::canonical(SRBENCH_BIN).string() + "' sweep '" + root +
                                    "/res/tiny/slurm/suite-"));
  CHECK_THAT(sweep, Catch::Contains("--out '" + root + "/res/tiny.h5' --shard \"${SLURM_ARRAY_TASK_ID}/4\""));
  CHECK_THAT(sweep, Catch::Contains("--jobs 1 --threads \"${SLURM_CPUS_PER_TASK:-1}\"\n"));

  // the merge job: after the user's options, one CPU; merges the suite folder into --out
  CHECK_THAT(merge, Catch::Contains("#SBATCH --cpus-per-task=3\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"));
  CHECK_THAT(merge, Catch::Contains("#SBATCH --output=" + root + "/res/tiny/logs/merge-%j.out\n"));
  CHECK_THAT(merge, Catch::Contains("merge '" + root + "/res/tiny' --out '" + root + "/res/tiny.h5'\n"));

  // The frozen suite carries the --set: sweeping it gives the same runs as the suite with --set.
  std::string frozen;
  for (const auto& e : fs::directory_iterator(dir.file("res/tiny/slurm")))
    if (e.path().extension() == ".yaml") frozen = e.path().string();
  REQUIRE(!frozen.empty());
  CHECK_THAT(read_file(frozen), Catch::Contains("# srbench --set train.steps=30"));
  const auto a = run_srbench({"sweep", frozen, "--dry-run", "--out", dir.file("x/tiny.h5")});
  const auto b = run_srbench({"sweep", dir.file("tiny.yaml"), "--set", "train.steps=30", "--dry-run", "--out", dir.file("x/tiny.h5")});
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("slurm: more tasks than runs become one task per run", "[slurm]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kSuite);
  const auto r = slurm_in(dir.path(), {"tiny.yaml", "--array", "10"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("using 6 array tasks"));
  CHECK_THAT(read_file(dir.file("results/tiny/slurm/sweep.sbatch")), Catch::Contains("#SBATCH --array=0-5\n"));
}

TEST_CASE("slurm: bad input is refused with exit code 2 and no script written", "[slurm]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kSuite);
  std::string bad = kSuite;
  bad.replace(bad.find("d_model"), 7, "d_modle");
  srbench::test::write_file(dir.file("bad.yaml"), bad);
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"tiny.yaml"}, "missing --array N"},
      {{"tiny.yaml", "--array", "0"}, "--array must be N or N%K"},
      {{"tiny.yaml", "--array", "3%"}, "--array must be N or N%K"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=--array=0-9"}, "--array is set by srbench slurm"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=-o/tmp/x"}, "--output is set by srbench slurm"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=--dependency=afterok:1"}, "--dependency is set by srbench slurm"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=time=1:00"}, "--sbatch-arg must be one sbatch option"},
      {{"bad.yaml", "--array", "3"}, "did you mean 'd_model'"},
      {{"tiny.yaml", "--array", "3", "--set", "model.d_model=-4"}, "d_model"},
  };
  for (const auto& c : cases) {
    const auto r = slurm_in(dir.path(), c.args);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
  CHECK(!fs::exists(dir.file("results")));
}
