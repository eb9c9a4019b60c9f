// `srbench report --agg A --over KEYS` (harness.md, "Aggregation across seeds"): per cell of
// pool_runs and summary metric (report_metrics(), then steps_to_target), the metric reduced by A
// over the cell's seeds and `over` axes, the 95% interval of the mean and k/n — labelled with the
// aggregation in every format.
#pragma once

#include <string>
#include <vector>

#include "harness/report/pool.hpp"
#include "harness/report/table.hpp"

namespace srbench::harness {

std::string format_pooled_report(const std::vector<PoolCell>& cells, const std::string& agg,
                                 const std::vector<std::string>& over, bool fitted_only, ReportFormat format,
                                 const std::string& title = "");

// "0.975 [0.950, 1.000]": the mean and its 95% interval (none for one value; "-" for none).
std::string mean_interval_text(const SeedStats& s, int decimals);
// k/n's meaning, as every output of a pooled value states it.
extern const char* const kKnLegend;

}  // namespace srbench::harness
