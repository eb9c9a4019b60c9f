#include "harness/report/transfer.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/report/stats.hpp"

namespace srbench::harness {

TransferMatrix compute_transfer(const std::vector<RunResult>& runs) {
  TransferMatrix t;
  auto index_in = [](std::vector<std::string>& list, const std::string& x) {
    const auto it = std::find(list.begin(), list.end(), x);
    if (it != list.end()) return static_cast<size_t>(it - list.begin());
    list.push_back(x);
    return list.size() - 1;
  };
  // the baseline of each (entry, grid): its model entry and its means
  struct Base {
    std::string model;
    std::vector<double> id_acc, steps;
    std::map<uint64_t, double> id_acc_by_seed;
  };
  std::map<std::pair<std::string, std::string>, Base> base;
  for (const auto& r : runs) {
    if (r.status != "ok" || !r.splines_from.empty() || !r.splines.empty()) continue;
    Base& b = base[{r.entry, r.grid}];
    if (b.model.empty()) b.model = r.model;
    if (b.model != r.model) continue;
    b.id_acc.push_back(r.metrics.id_acc);
    b.id_acc_by_seed[r.seed] = r.metrics.id_acc;
    if (r.metrics.steps_to_target >= 0) b.steps.push_back(static_cast<double>(r.metrics.steps_to_target));
  }
  std::vector<std::vector<double>> deltas, ratios, paired;
  for (const auto& r : runs) {
    if (r.splines_from.empty() || r.splines_task.empty()) continue;
    index_in(t.searched_on, r.splines_task);
    index_in(t.trained_on, r.entry);
  }
  const size_t R = t.searched_on.size(), C = t.trained_on.size();
  deltas.assign(R * C, {}), ratios.assign(R * C, {}), paired.assign(R * C, {});
  t.runs.assign(R * C, 0);
  for (const auto& r : runs) {
    if (r.splines_from.empty() || r.splines_task.empty() || r.status != "ok") continue;
    const size_t cell = index_in(t.searched_on, r.splines_task) * C + index_in(t.trained_on, r.entry);
    ++t.runs[cell];
    const auto it = base.find({r.entry, r.grid});
    if (it == base.end()) continue;
    const double base_acc = seed_stats(it->second.id_acc).mean;
    const double base_steps = seed_stats(it->second.steps).mean;
    if (!std::isnan(r.metrics.id_acc) && !std::isnan(base_acc)) deltas[cell].push_back(r.metrics.id_acc - base_acc);
    const auto same_seed = it->second.id_acc_by_seed.find(r.seed);
    if (same_seed != it->second.id_acc_by_seed.end() && !std::isnan(r.metrics.id_acc) && !std::isnan(same_seed->second))
      paired[cell].push_back(r.metrics.id_acc - same_seed->second);
    if (r.metrics.steps_to_target >= 0 && !std::isnan(base_steps) && base_steps > 0)
      ratios[cell].push_back(static_cast<double>(r.metrics.steps_to_target) / base_steps);
  }
  for (size_t i = 0; i < R * C; ++i) {
    t.id_acc_delta.push_back(seed_stats(deltas[i]).mean);
    t.steps_ratio.push_back(seed_stats(ratios[i]).mean);
    const Interval ci = bootstrap_mean_interval(paired[i]);
    t.id_acc_delta_lo.push_back(ci.lo), t.id_acc_delta_hi.push_back(ci.hi);
    t.paired.push_back(static_cast<int>(paired[i].size()));
  }
  return t;
}

std::string format_transfer(const TransferMatrix& t, ReportFormat format) {
  if (t.empty()) return "";
  const size_t R = t.searched_on.size(), C = t.trained_on.size();
  if (format == ReportFormat::csv) {
    Table csv{{"searched_on", "trained_on", "runs", "id_acc_delta", "steps_ratio", "paired", "id_acc_delta_lo",
               "id_acc_delta_hi"},
              {}};
    for (size_t i = 0; i < R; ++i)
      for (size_t j = 0; j < C; ++j) {
        const size_t k = i * C + j;
        csv.rows.push_back({t.searched_on[i], t.trained_on[j], std::to_string(t.runs[k]), exact(t.id_acc_delta[k]),
                            exact(t.steps_ratio[k]), std::to_string(t.paired[k]), exact(t.id_acc_delta_lo[k]),
                            exact(t.id_acc_delta_hi[k])});
      }
    return render_csv(csv);
  }
  auto signed_fixed = [](double v, int d) { return std::isnan(v) ? std::string("-") : (v >= 0 ? "+" : "") + fixed(v, d); };
  const std::string head = "Transfer: rows = task the splines were searched on, columns = task trained on; cell = "
                           "id_acc − baseline id_acc [95% interval, paired by seed] / steps_to_target ÷ "
                           "baseline's (mean over seeds)";
  Table table{{"searched on \\ trained on"}, {}};
  for (const auto& c : t.trained_on) table.head.push_back(c);
  for (size_t i = 0; i < R; ++i) {
    std::vector<std::string> row = {t.searched_on[i]};
    for (size_t j = 0; j < C; ++j) {
      const size_t k = i * C + j;
      const std::string ci = std::isnan(t.id_acc_delta_lo[k]) ? ""
                             : " [" + signed_fixed(t.id_acc_delta_lo[k], 3) + ", " + signed_fixed(t.id_acc_delta_hi[k], 3) + "]";
      row.push_back(t.runs[k] == 0 ? "" : signed_fixed(t.id_acc_delta[k], 3) + ci + " / " +
                                              (std::isnan(t.steps_ratio[k]) ? "-" : fixed(t.steps_ratio[k], 2) + "×"));
    }
    table.rows.push_back(std::move(row));
  }
  if (format == ReportFormat::markdown) return "\n### " + head + "\n\n" + render_markdown(table);
  return "\n" + head + "\n" + render_text(table, 1, false);
}

}  // namespace srbench::harness
