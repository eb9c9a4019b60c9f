#include "harness/report/pooled_report.hpp"

#include <cmath>

#include "harness/core/metric_fields.hpp"
#include "harness/report/report.hpp"

namespace srbench::harness {

const char* const kKnLegend =
    "k/n: k runs the value was taken over (the metric defined, and fitted under --fitted / fitted_only) of the n runs "
    "of the cell (any status)";

std::string mean_interval_text(const SeedStats& s, int decimals) {
  if (s.n == 0) return "-";
  return fixed(s.mean, decimals) +
         (std::isnan(s.ci_lo) ? "" : " [" + fixed(s.ci_lo, decimals) + ", " + fixed(s.ci_hi, decimals) + "]");
}

std::string format_pooled_report(const std::vector<PoolCell>& cells, const std::string& agg,
                                 const std::vector<std::string>& over, bool fitted_only, ReportFormat format,
                                 const std::string& title) {
  std::vector<std::string> metrics = report_metrics();
  metrics.push_back("steps_to_target");
  const std::string label = agg_label(agg, over);
  std::string over_text;
  for (const auto& a : over) over_text += (over_text.empty() ? "" : ",") + a;
  Table t = format == ReportFormat::csv
                ? Table{{"task", "entry", "model", "arch", "grid", "metric", "agg", "over", "fitted_only", "value",
                         "mean", "ci_lo", "ci_hi", "k", "n"},
                        {}}
                : Table{{"entry", "model", "arch", "grid", "metric", label, "mean [95% CI]", "k/n"}, {}};
  for (const auto& c : cells)
    for (const auto& m : metrics) {
      const PooledValue v = pooled_value(c, Quantity{m, 0, ""}, agg, fitted_only);
      const int d = metric_decimals(m);
      if (format == ReportFormat::csv)
        t.rows.push_back({c.task, c.entry, c.model, c.arch, c.grid, m, agg, over_text, fitted_only ? "1" : "0",
                          exact(v.value), exact(v.stats.mean), exact(v.stats.ci_lo), exact(v.stats.ci_hi),
                          std::to_string(v.k), std::to_string(v.n)});
      else
        t.rows.push_back({c.entry, c.model, c.arch, c.grid, m, fixed(v.value, d),
                          mean_interval_text(v.stats, d),
                          std::to_string(v.k) + "/" + std::to_string(v.n)});
    }
  if (format == ReportFormat::csv) return render_csv(t);
  return heading(title, format) + "Each metric's " + label + (fitted_only ? " (fitted runs only)" : "") +
         ", beside the mean and its 95% bootstrap interval;\n" + kKnLegend + "\n\n" + render(t, format, 5);
}

}  // namespace srbench::harness
