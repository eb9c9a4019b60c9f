#include "harness/report/check.hpp"

#include <cmath>

#include "harness/report/pooled_report.hpp"
#include "harness/report/report.hpp"
#include "harness/suite/values.hpp"

namespace srbench::harness {

namespace {

bool within(const Expectation& x, double v) {
  if (std::isnan(v)) return false;
  if (x.bound == "at_least") return v >= x.lo;
  if (x.bound == "at_most") return v <= x.hi;
  return v >= x.lo && v <= x.hi;
}

std::string bound_text(const Expectation& x) {
  using suite::format_double;
  if (x.bound == "at_least") return ">= " + format_double(x.lo);
  if (x.bound == "at_most") return "<= " + format_double(x.hi);
  return "in [" + format_double(x.lo) + ", " + format_double(x.hi) + "]";
}

}  // namespace

std::vector<CheckRow> check_expectations(const std::vector<Expectation>& expectations, const std::vector<RunResult>& runs) {
  std::vector<CheckRow> rows;
  for (const auto& x : expectations) {
    std::vector<RunResult> selected;
    for (const auto& r : runs)
      if (r.entry == x.entry && r.model == x.model) selected.push_back(r);
    const Quantity q{x.metric, x.length, x.condition};
    const auto cells = pool_runs(selected, x.over);
    if (cells.empty()) rows.push_back({&x, "", {}, false});
    for (const auto& c : cells) {
      const PooledValue v =
          x.minus.empty() ? pooled_value(c, q, x.agg, x.fitted_only) : paired_value(c, runs, x.minus, q, x.agg, x.fitted_only);
      rows.push_back({&x, c.grid, v, within(x, v.value)});
    }
  }
  return rows;
}

std::string claim_text(const Expectation& x) {
  const Quantity q{x.metric, x.length, x.condition};
  const std::string model = x.minus.empty() ? x.model : x.model + " − " + x.minus;
  const std::string paired = x.minus.empty() ? "" : x.fitted_only ? " of seeds where both fitted, paired" : ", paired";
  return x.entry + " · " + model + " · " + q.label() + ", " + agg_label(x.agg, x.over) +
         (x.minus.empty() && x.fitted_only ? " of fitted runs" : paired) + ", " + bound_text(x);
}

std::string format_check(const std::vector<CheckRow>& rows, ReportFormat format, const std::string& title) {
  const bool csv = format == ReportFormat::csv;
  Table t{csv ? std::vector<std::string>{"claim", "file_line", "grid", "value", "mean", "ci_lo", "ci_hi", "k", "n",
                                         "source", "result"}
              : std::vector<std::string>{"claim", "grid", "value", "mean [95% CI]", "k/n", "source", "result"},
          {}};
  int failing = 0;
  for (const auto& r : rows) {
    const Expectation& x = *r.expect;
    const int d = metric_decimals(x.metric);
    // No value entered (no run, none fitted under fitted_only, the metric undefined): the claim
    // could not be tested, which is not holding — it counts as failing for the exit code.
    const bool untestable = r.value.k == 0;
    const std::string result = r.holds ? "holds" : untestable ? "FAILS: untestable (k = 0)" : "FAILS";
    failing += !r.holds;
    if (csv)
      t.rows.push_back({claim_text(x), x.loc.file + ":" + std::to_string(x.loc.line), r.grid, exact(r.value.value),
                        exact(r.value.stats.mean), exact(r.value.stats.ci_lo), exact(r.value.stats.ci_hi),
                        std::to_string(r.value.k), std::to_string(r.value.n), x.source, result});
    else
      t.rows.push_back({claim_text(x), r.grid, fixed(r.value.value, d),
                        mean_interval_text(r.value.stats, d),
                        std::to_string(r.value.k) + "/" + std::to_string(r.value.n), x.source, result});
  }
  if (csv) return render_csv(t);
  return heading(title, format) + "The suite's expect: entries, each evaluated on this file's runs; " + kKnLegend +
         "\n\n" + render(t, format, 2) + "\n" + std::to_string(rows.size() - failing) + " of " +
         std::to_string(rows.size()) + " hold\n";
}

}  // namespace srbench::harness
