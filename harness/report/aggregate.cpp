#include "harness/report/aggregate.hpp"

#include <sstream>

#include "tasks/task.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace srbench::harness {

namespace {

double run_metric(const RunResult& r, const std::string& name) {
  if (name == "id_acc") return r.metrics.id_acc;
  if (name == "ood_length_acc") return r.metrics.ood_length_acc;
  if (name == "ood_token_acc") return r.metrics.ood_token_acc;
  if (name == "shift_acc") return r.metrics.shift_acc;
  if (name == "shortcut_gap") return r.metrics.shortcut_gap;
  if (name == "final_train_loss") return r.metrics.final_train_loss;
  return kNaN;
}

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
  auto over_seeds = [&](std::vector<double> Diagnostics::*field, size_t size) {
    std::vector<SeedStats> stats;
    for (size_t i = 0; i < size; ++i) {
      std::vector<double> values;
      for (const Diagnostics* d : ds) values.push_back((d->*field).at(i));
      stats.push_back(seed_stats(values));
    }
    return stats;
  };
  const auto L = static_cast<size_t>(out.layers), LH = L * static_cast<size_t>(out.heads);
  out.attn_entropy = over_seeds(&Diagnostics::attn_entropy, LH);
  out.attn_max = over_seeds(&Diagnostics::attn_max, LH);
  out.value_entropy = over_seeds(&Diagnostics::value_entropy, L);
  out.hidden_entropy = over_seeds(&Diagnostics::hidden_entropy, L);
  return out;
}

}  // namespace

std::vector<GroupReport> aggregate_runs(const std::vector<RunResult>& runs) {
  // Group membership, in order of first appearance.
  std::vector<std::vector<const RunResult*>> members;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (const auto& r : runs) {
    const auto key = std::make_tuple(r.entry, r.model, r.grid);
    auto [it, fresh] = index.emplace(key, members.size());
    if (fresh) members.emplace_back();
    members[it->second].push_back(&r);
  }
  std::vector<GroupReport> groups;
  for (const auto& rs : members) {
    GroupReport g;
    g.task = rs.front()->task;
    g.entry = rs.front()->entry;
    g.model = rs.front()->model;
    g.grid = rs.front()->grid;
    std::vector<double> steps;
    for (const RunResult* r : rs) {
      ++g.runs;
      g.ok += r->status == "ok";
      g.diverged += r->status == "diverged";
      g.failed += r->status == "failed";
      g.bits_per_byte = g.bits_per_byte || r->bits_per_byte;
      if (r->metrics.steps_to_target >= 0) {
        ++g.reached;
        steps.push_back(static_cast<double>(r->metrics.steps_to_target));
      }
    }
    for (const auto& name : kReportMetrics) {
      std::vector<double> values;
      for (const RunResult* r : rs) values.push_back(run_metric(*r, name));
      g.metrics.push_back({name, seed_stats(values)});
    }
    g.metrics.push_back({"steps_to_target", seed_stats(steps)});

    // Evaluation cells keyed by (condition label, length); conditions in order of first appearance.
    std::vector<std::string> conds;
    using Values = std::vector<double>;  // seq_acc, bits per byte, token error
    std::map<std::pair<size_t, int64_t>, std::tuple<Values, Values, Values>> cells;
    for (const RunResult* r : rs)
      for (const auto& e : r->eval) {
        const std::string& label = r->conditions.at(static_cast<size_t>(e.condition));
        auto it = std::find(conds.begin(), conds.end(), label);
        const size_t ci = static_cast<size_t>(it - conds.begin());
        if (it == conds.end()) conds.push_back(label);
        auto& [acc, bpb, err] = cells[{ci, e.length}];
        acc.push_back(e.seq_acc);
        if (r->bits_per_byte) bpb.push_back(e.loss / std::log(2.0));
        err.push_back(1.0 - e.token_acc);
      }
    for (const auto& [key, values] : cells)
      g.eval.push_back({key.second, conds[key.first], seed_stats(std::get<0>(values)), seed_stats(std::get<1>(values)),
                        seed_stats(std::get<2>(values))});
    g.diag = aggregate_diagnostics(rs);
    groups.push_back(std::move(g));
  }
  return groups;
}

namespace {

// The "key=value" items of a grid string.
std::vector<std::string> grid_items(const std::string& grid) {
  std::vector<std::string> out;
  std::istringstream in(grid);
  for (std::string item; in >> item;) out.push_back(item);
  return out;
}

}  // namespace

std::vector<std::string> grid_axes(const std::vector<RunResult>& runs) {
  std::vector<std::string> axes;
  for (const auto& r : runs)
    for (const auto& item : grid_items(r.grid)) {
      const std::string key = item.substr(0, item.find('='));
      if (std::find(axes.begin(), axes.end(), key) == axes.end()) axes.push_back(key);
    }
  return axes;
}

std::vector<ChomskyCell> aggregate_chomsky(const std::vector<RunResult>& runs, const std::string& over) {
  std::vector<ChomskyCell> cells;
  std::vector<std::vector<double>> values;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (const auto& r : runs) {
    std::string grid;  // the grid point without the `over` axis
    for (const auto& item : grid_items(r.grid))
      if (over.empty() || item.rfind(over + "=", 0) != 0) grid += (grid.empty() ? "" : " ") + item;
    const auto [it, fresh] = index.emplace(std::make_tuple(r.entry, r.model, grid), cells.size());
    if (fresh) {
      ChomskyCell c;
      c.task = r.task, c.entry = r.entry, c.model = r.model, c.grid = grid, c.chance = r.chance;
      if (const tasks::TaskInfo* info = tasks::find_task(r.task)) c.level = info->level;
      cells.push_back(std::move(c));
      values.emplace_back();
    }
    ChomskyCell& c = cells[it->second];
    ++c.runs;
    if (std::isnan(c.chance)) c.chance = r.chance;
    values[it->second].push_back(r.metrics.ood_token_acc);
  }
  for (size_t i = 0; i < cells.size(); ++i) cells[i].ood_token_acc = seed_stats(values[i]);
  return cells;
}

}  // namespace srbench::harness
