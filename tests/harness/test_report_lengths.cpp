// `srbench report --lengths` and `--errors`: per-length accuracy (mean and max over seeds), the
// mean over the lengths beyond training, and the error rate at scored positions, on hand-made
// runs whose statistics are worked out by hand below.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "harness/report/report.hpp"
#include "tests/harness/helpers.hpp"

using namespace srbench::harness;

namespace {

RunResult run(const std::string& model, uint64_t seed, std::vector<EvalRow> eval, double ood) {
  RunResult r = srbench::test::hand_run(model, seed, std::move(eval));
  r.metrics.ood_length_acc = ood;
  return r;
}

// Group m (three seeds): rows {length, condition, loss, token_acc, seq_acc}. Trained on lengths up
// to 8, so 16 and 32 are out of distribution; ood_length_acc is each run's mean over them.
// Group n: one seed, length 64 only, no ood value.
std::vector<RunResult> hand_runs() {
  return {
      run("m", 0, {{8, 0, 0, 1.0, 1.0}, {16, 0, 0, 0.9, 0.5}, {32, 0, 0, 0.8, 0.25}, {8, 1, 0, 0.75, 0.5}}, 0.375),
      run("m", 1, {{8, 0, 0, 1.0, 1.0}, {16, 0, 0, 0.7, 0.0}, {32, 0, 0, 0.6, 0.0}, {8, 1, 0, 0.95, 0.75}}, 0.0),
      run("m", 2, {{8, 0, 0, 0.9995, 0.75}, {16, 0, 0, 1.0, 1.0}, {32, 0, 0, 0.9, 0.5}}, 0.75),
      run("n", 0, {{64, 0, 0, 0.5, 0.5}}, kNaN),
  };
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const auto& l : lines_of(text))
    if (l == line) return true;
  return false;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
  if (!line.empty() && line.back() == ',') f.push_back("");
  return f;
}

// The csv line whose fields start with `prefix` (task, entry, model, grid, ...).
std::vector<std::string> csv_find(const std::string& csv, const std::vector<std::string>& prefix) {
  for (const auto& l : lines_of(csv)) {
    const auto f = split(l);
    if (f.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), f.begin())) return f;
  }
  return {};
}

}  // namespace

TEST_CASE("report --lengths: seq_acc per length and the ood mean, mean and max over seeds", "[report]") {
  const auto groups = aggregate_runs(hand_runs());
  REQUIRE(groups.size() == 2);

  // length 8: (1 + 1 + 0.75) / 3 = 0.917, max 1; 16: (0.5 + 0 + 1) / 3 = 0.5, max 1;
  // 32: (0.25 + 0 + 0.5) / 3 = 0.25, max 0.5; ood: (0.375 + 0 + 0.75) / 3 = 0.375, max 0.75.
  // Columns are the union of the groups' lengths; group m has no 64, group n nothing else.
  const std::string md = format_length_report(groups, ReportFormat::markdown);
  CHECK(has_line(md, "| entry | model | arch | grid | 8 | 16 | 32 | 64 | ood mean / max |"));
  CHECK(has_line(md, "| parity | m | transformer |   | 0.917 / 1.000 | 0.500 / 1.000 | 0.250 / 0.500 |   | 0.375 / 0.750 |"));
  CHECK(has_line(md, "| parity | n | transformer |   |   |   |   | 0.500 / 0.500 |   |"));

  const std::string table = format_length_report(groups, ReportFormat::table, "title");
  CHECK(lines_of(table).front() == "title");
  CHECK_THAT(table, Catch::Contains("0.917 / 1.000  0.500 / 1.000  0.250 / 0.500"));

  const std::string csv = format_length_report(groups, ReportFormat::csv);
  CHECK(lines_of(csv).front() == "task,entry,model,arch,grid,quantity,length,n,mean,std,min,median,max,ci_lo,ci_hi");
  auto f = csv_find(csv, {"parity", "parity", "m", "transformer", "", "seq_acc", "32"});
  REQUIRE(f.size() == 15);
  CHECK(f[7] == "3");
  CHECK(std::stod(f[8]) == Approx(0.25));
  CHECK(std::stod(f[9]) == Approx(0.25));  // sqrt((0² + 0.25² + 0.25²) / 2)
  CHECK(std::stod(f[12]) == Approx(0.5));
  f = csv_find(csv, {"parity", "parity", "m", "transformer", "", "ood_length_acc", ""});
  REQUIRE(f.size() == 15);
  CHECK(std::stod(f[8]) == Approx(0.375));
  CHECK(std::stod(f[12]) == Approx(0.75));
  f = csv_find(csv, {"parity", "parity", "n", "transformer", "", "ood_length_acc", ""});
  REQUIRE(f.size() == 15);
  CHECK(f[7] == "0");
  CHECK(f[8] == "nan");
  CHECK(csv_find(csv, {"parity", "parity", "m", "transformer", "", "seq_acc", "64"}).empty());
}

TEST_CASE("report --errors: 1 - token_acc per condition and length over seeds", "[report]") {
  const auto groups = aggregate_runs(hand_runs());
  REQUIRE(groups.size() == 2);
  // (16, id): errors 0.1, 0.3, 0 → mean 0.1333, std sqrt((0.0333² + 0.1667² + 0.1333²) / 2) = 0.1528,
  // min 0, median 0.1, max 0.3. (8, p1=0.9): errors 0.25, 0.05 (seed 2 has no row) → mean 0.15,
  // std sqrt((0.1² + 0.1²) / 1) = 0.1414. (8, id): errors 0, 0, 0.0005 → max 5e-4 in scientific form.
  const std::string md = format_error_report(groups, ReportFormat::markdown);
  CHECK(has_line(md, "| parity | m | transformer |   | id | 16 | 3 | 0.1333 | 0.1528 | 0.0000 | 0.1000 | 0.3000 |"));
  CHECK(has_line(md, "| parity | m | transformer |   | p1=0.9 | 8 | 2 | 0.1500 | 0.1414 | 0.0500 | 0.1500 | 0.2500 |"));
  CHECK(has_line(md, "| parity | m | transformer |   | id | 8 | 3 | 1.67e-04 | 2.89e-04 | 0.0000 | 0.0000 | 5.00e-04 |"));

  const std::string csv = format_error_report(groups, ReportFormat::csv);
  CHECK(lines_of(csv).front() == "task,entry,model,arch,grid,condition,length,n,mean,std,min,median,max,ci_lo,ci_hi");
  auto f = csv_find(csv, {"parity", "parity", "m", "transformer", "", "id", "16"});
  REQUIRE(f.size() == 15);
  CHECK(std::stod(f[8]) == Approx(0.4 / 3));
  CHECK(std::stod(f[9]) == Approx(std::sqrt((std::pow(0.1 - 0.4 / 3, 2) + std::pow(0.3 - 0.4 / 3, 2) +
                                             std::pow(0.4 / 3, 2)) / 2)));
  f = csv_find(csv, {"parity", "parity", "m", "transformer", "", "p1=0.9", "8"});
  REQUIRE(f.size() == 15);
  CHECK(f[7] == "2");
  CHECK(std::stod(f[8]) == Approx(0.15));
  CHECK(std::stod(f[12]) == Approx(0.25));
}

TEST_CASE("report takes one of --diagnostics, --lengths, --errors", "[report][cli]") {
  const auto r = srbench::test::run_srbench({"report", "missing.h5", "--lengths", "--errors"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("exclude each other"));
}
