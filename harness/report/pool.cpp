#include "harness/report/pool.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include "harness/core/grid.hpp"
#include "harness/core/metric_fields.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/report/report.hpp"

namespace srbench::harness {

std::optional<std::string> parse_agg(const std::string& text) {
  for (const char* a : {"mean", "median", "max", "min"})
    if (text == a) return text;
  return std::nullopt;
}

std::string Quantity::label() const {
  if (metric == "seq_acc" || metric == "token_acc") return eval_metric_name(metric, length, condition);
  return condition.empty() ? metric : metric + "[condition=" + condition + "]";
}

namespace {

// The mean seq_acc of a run's rows of one condition (NaN without rows): shift_acc of that shift.
double condition_mean(const RunResult& r, const std::string& condition) {
  double sum = 0;
  int n = 0;
  for (const auto& e : r.eval)
    if (r.conditions.at(static_cast<size_t>(e.condition)) == condition) sum += e.seq_acc, ++n;
  return n > 0 ? sum / n : kNaN;
}

}  // namespace

double run_value(const RunResult& r, const Quantity& q) {
  if (q.metric == "shift_acc" && !q.condition.empty()) return condition_mean(r, q.condition);
  if (q.metric == "seq_acc" || q.metric == "token_acc") {
    for (const auto& e : r.eval)
      if (e.length == q.length && r.conditions.at(static_cast<size_t>(e.condition)) == q.condition)
        return q.metric == "seq_acc" ? e.seq_acc : e.token_acc;
    return kNaN;
  }
  const MetricField& f = metric_field(q.metric);
  const double v = f.value(r.metrics);
  return f.integer() && v < 0 ? kNaN : v;
}

std::vector<PoolCell> pool_runs(const std::vector<RunResult>& runs, const std::vector<std::string>& over) {
  std::vector<PoolCell> cells;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (const auto& r : runs) {
    const std::string grid = grid_without(r.grid, over);
    const auto [it, fresh] = index.emplace(std::make_tuple(r.entry, r.model, grid), cells.size());
    if (fresh) cells.push_back({r.task, r.entry, r.model, run_arch(r), grid, {}});
    cells[it->second].runs.push_back(&r);
  }
  return cells;
}

namespace {
// `agg` of the values that entered, with their statistics; n is set by the caller.
PooledValue reduce(const std::vector<double>& values, const std::string& agg, int n) {
  PooledValue out;
  out.n = n;
  out.stats = seed_stats(values);
  out.k = out.stats.n;
  const SeedStats& s = out.stats;
  out.value = agg == "median" ? s.median
              : agg == "max"  ? s.max
              : agg == "min"  ? s.min
              : agg == "ci_lo" ? s.ci_lo
              : agg == "ci_hi" ? s.ci_hi
                               : s.mean;
  return out;
}
}  // namespace

PooledValue pooled_value(const PoolCell& cell, const Quantity& q, const std::string& agg, bool fitted_only) {
  std::vector<double> values;
  for (const RunResult* r : cell.runs) {
    if (fitted_only && r->metrics.fitted != 1) continue;
    if (const double v = run_value(*r, q); !std::isnan(v)) values.push_back(v);
  }
  return reduce(values, agg, static_cast<int>(cell.runs.size()));
}

PooledValue paired_value(const PoolCell& cell, const std::vector<RunResult>& runs, const std::string& minus,
                         const Quantity& q, const std::string& agg, bool fitted_only) {
  std::map<std::pair<std::string, uint64_t>, const RunResult*> partner;  // (grid, seed) → the run of `minus`
  for (const auto& r : runs)
    if (r.entry == cell.entry && r.model == minus) partner[{r.grid, r.seed}] = &r;
  std::vector<double> diffs;
  for (const RunResult* a : cell.runs) {
    const auto it = partner.find({a->grid, a->seed});
    if (it == partner.end()) continue;
    const RunResult* b = it->second;
    if (fitted_only && (a->metrics.fitted != 1 || b->metrics.fitted != 1)) continue;
    const double va = run_value(*a, q), vb = run_value(*b, q);
    if (!std::isnan(va) && !std::isnan(vb)) diffs.push_back(va - vb);
  }
  return reduce(diffs, agg, static_cast<int>(cell.runs.size()));
}

std::string agg_label(const std::string& agg, const std::vector<std::string>& over) {
  const bool end = agg == "ci_lo" || agg == "ci_hi";
  std::string s = end ? std::string(agg == "ci_lo" ? "low" : "high") + " end of the mean's 95% interval over seeds"
                      : agg + " over seeds";
  for (const auto& axis : over)
    if (axis != "seed") s += " × " + axis;
  return s;
}

}  // namespace srbench::harness
