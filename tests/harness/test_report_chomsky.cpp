// `srbench report --chomsky [--over KEY]`: the Chomsky-hierarchy table (chomsky.md §7.1) — per task
// and model, the max and the mean of ood_token_acc over seeds and, with --over, a grid axis —
// against a hand computation.
#include <catch2/catch.hpp>
#include <cmath>

#include "harness/report/report.hpp"
#include "harness/results/results.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;

namespace {

RunResult run(const std::string& task, const std::string& model, const std::string& grid, uint64_t seed, double score,
              double chance = kNaN) {
  RunResult r;
  r.task = r.entry = task;
  r.model = model;
  r.grid = grid;
  r.seed = seed;
  r.run_id = task + model + grid + std::to_string(seed);
  r.metrics.ood_token_acc = score;
  r.chance = chance;
  return r;
}

}  // namespace

TEST_CASE("report --chomsky: max and mean of ood_token_acc over seeds and the --over axis", "[report]") {
  const std::vector<RunResult> runs = {
      run("parity_check", "lstm", "train.lr=0.001 model.layers=1", 0, 0.9, 0.5),
      run("parity_check", "lstm", "train.lr=0.001 model.layers=1", 1, 0.7, 0.5),
      run("parity_check", "lstm", "train.lr=0.0003 model.layers=1", 0, 1.0, 0.5),
      run("parity_check", "lstm", "train.lr=0.0003 model.layers=1", 1, kNaN, 0.5),  // diverged: no score
      run("parity_check", "rnn", "train.lr=0.001 model.layers=1", 0, 0.55, 0.5),
      run("bucket_sort", "lstm", "train.lr=0.001 model.layers=1", 0, 0.3, 0.2),
      run("parity", "lstm", "train.lr=0.001 model.layers=1", 0, 0.6),  // not a tape task: no level, no chance
  };
  CHECK(grid_axes(runs) == std::vector<std::string>{"train.lr", "model.layers"});

  // over seeds only: one cell per grid point
  auto by_point = aggregate_chomsky(runs);
  REQUIRE(by_point.size() == 5);
  CHECK(by_point[0].grid == "train.lr=0.001 model.layers=1");
  CHECK(by_point[0].ood_token_acc.n == 2);
  CHECK(by_point[0].ood_token_acc.max == 0.9);
  CHECK(by_point[0].ood_token_acc.mean == Approx(0.8));
  CHECK(by_point[1].runs == 2);
  CHECK(by_point[1].ood_token_acc.n == 1);

  // over seeds and learning rates: the lr axis leaves the grid
  const auto cells = aggregate_chomsky(runs, "train.lr");
  REQUIRE(cells.size() == 4);
  const ChomskyCell& lstm = cells[0];
  CHECK(lstm.entry == "parity_check");
  CHECK(lstm.model == "lstm");
  CHECK(lstm.grid == "model.layers=1");
  CHECK(lstm.level == "R");
  CHECK(lstm.chance == 0.5);
  CHECK(lstm.runs == 4);
  CHECK(lstm.ood_token_acc.n == 3);
  CHECK(lstm.ood_token_acc.max == 1.0);
  CHECK(lstm.ood_token_acc.mean == Approx((0.9 + 0.7 + 1.0) / 3));
  CHECK(cells[1].model == "rnn");
  CHECK(cells[2].level == "CS");
  CHECK(cells[2].chance == 0.2);
  CHECK(cells[3].level == "");
  CHECK(std::isnan(cells[3].chance));

  const std::string csv = format_chomsky_report(cells, ReportFormat::csv);
  CHECK(csv.rfind("task,entry,level,chance,model,arch,grid,runs,n,mean,std,min,median,max,ci_lo,ci_hi\n", 0) == 0);
  CHECK(csv.find("\nparity_check,parity_check,R,0.5,lstm,transformer,model.layers=1,4,3,") != std::string::npos);
  CHECK(csv.find("\nparity,parity,,nan,lstm,transformer,model.layers=1,1,1,0.59999999999999998,nan,") != std::string::npos);

  const std::string table = format_chomsky_report(cells, ReportFormat::table, "t", "train.lr");
  CHECK(table.find("max / mean (n) over the seeds and the values of train.lr") != std::string::npos);
  // the parity_check row: its level, chance and the two models' cells, in the columns' order
  const size_t row = table.find("\nparity_check ");
  REQUIRE(row != std::string::npos);
  const std::string line = table.substr(row + 1, table.find('\n', row + 1) - row - 1);
  CHECK(line == "parity_check  R       0.500      1.000 / 0.867 (3)     0.550 / 0.550 (1)");  // under headers of 21
  CHECK(table.find("1.000 / 0.867 (3)") != std::string::npos);
  CHECK(table.find("0.550 / 0.550 (1)") != std::string::npos);
  const std::string md = format_chomsky_report(cells, ReportFormat::markdown, "t");
  CHECK(md.find("| task | level | chance | lstm · model.layers=1 | rnn · model.layers=1 |") != std::string::npos);
}

TEST_CASE("report --chomsky through the command line: --over must name a grid axis", "[report]") {
  srbench::test::TempDir dir;
  std::vector<std::string> paths;
  for (uint64_t seed : {0, 1}) {
    RunResult r = run("parity_check", "lstm", "train.lr=0.001", seed, 0.5 + 0.25 * static_cast<double>(seed), 0.5);
    r.run_id = "00000000000" + std::to_string(seed);
    paths.push_back(dir.file(r.run_id + ".h5"));
    write_run_file(paths.back(), r, "name: c\n", nullptr);
  }
  const std::string suite = dir.file("c.h5");
  srbench::test::write_suite_file_of(suite, "name: c\n", paths);
  const auto ok = srbench::test::run_srbench({"report", suite, "--chomsky", "--over", "train.lr", "--format", "csv"});
  REQUIRE(ok.exit_code == 0);
  CHECK(ok.out.find("\nparity_check,parity_check,R,0.5,lstm,transformer,,2,2,0.625,") != std::string::npos);
  const auto bad = srbench::test::run_srbench({"report", suite, "--chomsky", "--over", "train.steps"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "srbench report: --over train.steps: not a grid axis of this suite (its axes: train.lr)\n");
  // without --chomsky, --over pools the axis with the seeds for every summary metric (report --agg)
  const auto alone = srbench::test::run_srbench({"report", suite, "--over", "train.lr"});
  CHECK(alone.exit_code == 0);
  CHECK(alone.out.find("mean over seeds × train.lr") != std::string::npos);
  const auto both = srbench::test::run_srbench({"report", suite, "--chomsky", "--lengths"});
  CHECK(both.exit_code == 2);
}
