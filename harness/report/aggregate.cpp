#include "harness/report/aggregate.hpp"

#include "harness/core/grid.hpp"
#include "harness/core/metric_fields.hpp"
#include "harness/report/pool.hpp"
#include "harness/suite/stored.hpp"
#include "tasks/task.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace srbench::harness {

namespace {

// The diagnostics of a group's runs, over seeds.
DiagnosticsStats aggregate_diagnostics(const std::vector<const RunResult*>& rs) {
  DiagnosticsStats out;
  std::vector<const Diagnostics*> ds;
  for (const RunResult* r : rs) {
    const Diagnostics& d = r->diag;
    if (d.empty()) continue;
    if (ds.empty()) out.layers = d.layers, out.heads = d.heads;
    if (d.layers != out.layers || d.heads != out.heads) continue;
    ds.push_back(&d);
  }
  out.runs = static_cast<int>(ds.size());
  if (ds.empty()) return {};
  // Over the runs that have the field (every run has each but LIMe's measure, which files written
  // before it lack).
  auto over_seeds = [&](std::vector<double> Diagnostics::*field, size_t size) {
    std::vector<SeedStats> stats;
    for (size_t i = 0; i < size; ++i) {
      std::vector<double> values;
      for (const Diagnostics* d : ds)
        if ((d->*field).size() == size) values.push_back((d->*field)[i]);
      stats.push_back(seed_stats(values));
    }
    return stats;
  };
  const auto L = static_cast<size_t>(out.layers), LH = L * static_cast<size_t>(out.heads);
  out.attn_entropy = over_seeds(&Diagnostics::attn_entropy, LH);
  out.attn_max = over_seeds(&Diagnostics::attn_max, LH);
  out.value_entropy = over_seeds(&Diagnostics::value_entropy, out.heads > 0 ? L : 0);  // none without attention
  out.hidden_entropy = over_seeds(&Diagnostics::hidden_entropy, L);
  out.value_entropy_lime = over_seeds(&Diagnostics::value_entropy_lime, out.heads > 0 ? L : 0);
  out.hidden_entropy_lime = over_seeds(&Diagnostics::hidden_entropy_lime, L);
  return out;
}

}  // namespace

std::string run_arch(const RunResult& r) { return stored_model_arch(r.config_yaml); }

std::vector<std::vector<const RunResult*>> run_groups(const std::vector<RunResult>& runs) {
  std::vector<std::vector<const RunResult*>> members;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (const auto& r : runs) {
    const auto key = std::make_tuple(r.entry, r.model, r.grid);
    auto [it, fresh] = index.emplace(key, members.size());
    if (fresh) members.emplace_back();
    members[it->second].push_back(&r);
  }
  return members;
}

std::vector<GroupReport> aggregate_runs(const std::vector<RunResult>& all_runs, bool fitted_only) {
  std::vector<GroupReport> groups;
  for (const auto& group : run_groups(all_runs)) {
    GroupReport g;
    g.task = group.front()->task;
    g.entry = group.front()->entry;
    g.model = group.front()->model;
    g.grid = group.front()->grid;
    g.arch = run_arch(*group.front());
    g.fitted_only = fitted_only;
    g.fit_metric = stored_fit_metric(group.front()->config_yaml);
    std::vector<const RunResult*> rs;  // the runs the statistics are over
    for (const RunResult* r : group) {
      ++g.runs;
      g.ok += r->status == "ok";
      g.diverged += r->status == "diverged";
      g.failed += r->status == "failed";
      g.fitted += r->metrics.fitted == 1;
      if (!fitted_only || r->metrics.fitted == 1) rs.push_back(r);
    }
    std::vector<double> steps;
    for (const RunResult* r : rs) {
      g.bits_per_byte = g.bits_per_byte || r->bits_per_byte;
      if (r->metrics.steps_to_target >= 0) {
        ++g.reached;
        steps.push_back(static_cast<double>(r->metrics.steps_to_target));
      }
    }
    for (const auto& name : report_metrics()) {
      const MetricField& f = metric_field(name);
      std::vector<double> values;
      for (const RunResult* r : rs) values.push_back(f.value(r->metrics));
      g.metrics.push_back({name, seed_stats(values)});
    }
    g.metrics.push_back({"steps_to_target", seed_stats(steps)});

    // Evaluation cells keyed by (condition label, length); conditions in order of first appearance.
    std::vector<std::string> conds;
    using Values = std::vector<double>;  // seq_acc, bits per byte, token error, seen_frac
    std::map<std::pair<size_t, int64_t>, std::tuple<Values, Values, Values, Values>> cells;
    for (const RunResult* r : rs)
      for (const auto& e : r->eval) {
        const std::string& label = r->conditions.at(static_cast<size_t>(e.condition));
        auto it = std::find(conds.begin(), conds.end(), label);
        const size_t ci = static_cast<size_t>(it - conds.begin());
        if (it == conds.end()) conds.push_back(label);
        auto& [acc, bpb, err, seen] = cells[{ci, e.length}];
        acc.push_back(e.seq_acc);
        if (r->bits_per_byte) bpb.push_back(e.loss / std::log(2.0));
        err.push_back(1.0 - e.token_acc);
        seen.push_back(e.seen_frac);
      }
    for (const auto& [key, values] : cells)
      g.eval.push_back({key.second, conds[key.first], seed_stats(std::get<0>(values)), seed_stats(std::get<1>(values)),
                        seed_stats(std::get<2>(values)), seed_stats(std::get<3>(values))});
    g.diag = aggregate_diagnostics(rs);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<std::string> grid_axes(const std::vector<RunResult>& runs) {
  std::vector<std::string> axes;
  for (const auto& r : runs)
    for (const auto& item : grid_items(r.grid)) {
      const std::string key = grid_key(item);
      if (std::find(axes.begin(), axes.end(), key) == axes.end()) axes.push_back(key);
    }
  return axes;
}

std::vector<ChomskyCell> aggregate_chomsky(const std::vector<RunResult>& runs, const std::string& over) {
  std::vector<ChomskyCell> cells;
  for (const PoolCell& p : pool_runs(runs, over.empty() ? std::vector<std::string>{} : std::vector<std::string>{over})) {
    ChomskyCell c;
    c.task = p.task, c.entry = p.entry, c.model = p.model, c.grid = p.grid, c.arch = p.arch;
    if (const tasks::TaskInfo* info = tasks::find_task(p.task)) c.level = info->level;
    std::vector<double> values;
    for (const RunResult* r : p.runs) {
      ++c.runs;
      if (std::isnan(c.chance)) c.chance = r->chance;  // the first run that has one
      values.push_back(r->metrics.ood_token_acc);
    }
    c.ood_token_acc = seed_stats(values);
    cells.push_back(std::move(c));
  }
  return cells;
}

std::vector<PairedDiff> compare_models(const std::vector<RunResult>& runs, const std::string& a, const std::string& b,
                                       bool fitted_only) {
  static const std::vector<std::string> kMetrics = {"id_acc", "ood_length_acc", "ood_token_acc", "shift_acc"};
  // (entry, grid) in order of first appearance; per side, seed → run
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, std::map<uint64_t, const RunResult*>> side_a, side_b;
  for (const auto& r : runs) {
    if (r.model != a && r.model != b) continue;
    if (fitted_only && r.metrics.fitted != 1) continue;
    const auto key = std::make_pair(r.entry, r.grid);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    (r.model == a ? side_a : side_b)[key][r.seed] = &r;
  }
  std::vector<PairedDiff> out;
  for (const auto& key : keys) {
    const auto& ra = side_a[key];
    const auto& rb = side_b[key];
    if (ra.empty() || rb.empty()) continue;
    for (const auto& metric : kMetrics) {
      const MetricField& f = metric_field(metric);
      PairedDiff d;
      d.task = ra.begin()->second->task, d.entry = key.first, d.grid = key.second, d.metric = metric;
      std::vector<double> diffs, va, vb;
      for (const auto& [seed, run_a] : ra) {
        const auto it = rb.find(seed);
        if (it == rb.end()) continue;
        const double x = f.value(run_a->metrics), y = f.value(it->second->metrics);
        if (std::isnan(x) || std::isnan(y)) continue;
        diffs.push_back(x - y), va.push_back(x), vb.push_back(y);
      }
      d.diff = seed_stats(diffs);
      d.mean_a = seed_stats(va).mean, d.mean_b = seed_stats(vb).mean;
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace srbench::harness
