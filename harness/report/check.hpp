// `srbench report --check` (harness.md, "Claims the suite checks itself"): each `expect:` entry
// of the suite evaluated against the suite file's runs — its quantity pooled over seeds and its
// `over` axes (pool.hpp), reduced by its `agg` and compared with its bound.
#pragma once

#include <string>
#include <vector>

#include "harness/core/specs.hpp"
#include "harness/report/pool.hpp"
#include "harness/report/table.hpp"

namespace srbench::harness {

// One evaluated claim at one grid point (a claim whose entry has grid axes outside `over` is
// checked at each remaining grid point, and holds only where every one holds).
struct CheckRow {
  const Expectation* expect = nullptr;
  std::string grid;  // the grid point without the `over` axes
  PooledValue value;
  bool holds = false;  // a value exists and lies within the bound
};
// In the order of the expectations; an expectation with no runs in the file is one failing row (k/n 0/0).
std::vector<CheckRow> check_expectations(const std::vector<Expectation>& expectations, const std::vector<RunResult>& runs);

// "parity-states · learned · id_acc, mean over seeds, >= 0.97" (fitted_only: "fitted runs' …").
std::string claim_text(const Expectation& x);
// One row per CheckRow: claim, grid, value, mean [95% CI], k/n, source, holds / FAILS.
std::string format_check(const std::vector<CheckRow>& rows, ReportFormat format, const std::string& title = "");

}  // namespace srbench::harness
