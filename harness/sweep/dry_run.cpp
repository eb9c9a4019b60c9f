// The dry run of a sweep (phases.hpp): its plan printed — every search and run of this call's
// share with its memory estimate and whether it is finished or claimed, notes on bidirectional
// models, and the inherited keys dropped per model entry.
#include <algorithm>
#include <iostream>
#include <set>

#include "harness/run/resources.hpp"
#include "harness/sweep/phases.hpp"
#include "tasks/task.hpp"

namespace srbench::harness::sweep {

namespace {

// `causal: false` with a task outside the tape layout is allowed (the user's choice), but noted
// once per (task entry, model entry): such a task's targets are its next inputs.
void print_bidirectional_notes(const Suite& suite) {
  std::set<std::pair<std::string, std::string>> noted;
  for (const auto& r : suite.runs) {
    const tasks::TaskInfo* info = tasks::find_task(r.task);
    if (r.python.on || r.model.causal || !info || info->tape_layout() || !noted.insert({r.entry, r.model_name}).second) continue;
    std::cout << "note: model " << r.model_name << " is bidirectional (causal: false) and task entry " << r.entry
              << " (task " << r.task << ") is not in the tape layout: a bidirectional model sees the answer of "
              << "next-token tasks (each target is the next input token)\n";
  }
}

// "  [claimed: ...]" when a live sweep claims `name` in `dir`, else "".
std::string claimed_note(const std::string& dir, const std::string& name, const SweepOptions& opts) {
  const auto c = read_claim(dir + "/" + name + ".claim");
  if (!c) return "";
  return claim_alive(*c, opts.claim_timeout) ? "  [claimed: " + describe_claim(*c) + "]" : "";
}

void print_dry_run_searches(const Suite& suite, const SweepOptions& opts, const Plan& plan) {
  std::cout << "searches: " << suite.searches.size() << " (" << plan.searches_done << " of this call's finished, "
            << plan.searches_todo.size() << " to run)\n";
  for (const auto& sp : suite.searches)
    std::cout << "  search " << sp.index << "  " << sp.id << "  " << sp.name << "  task=" << sp.task
              << "  population=" << sp.population << "  steps=" << sp.train.steps
              << "  memory ~" << bytes_text(estimate_search_memory(sp, opts.threads).total())
              << (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp) ? "  [done]" : "")
              << claimed_note(plan.splines_dir, sp.name, opts) << "\n";
}

// recurrent.md: per model entry (and arch), the inherited keys that do not apply and were dropped.
void print_dropped_keys(const std::vector<const RunSpec*>& mine) {
  std::vector<std::pair<std::string, std::vector<std::string>>> dropped;
  for (const RunSpec* r : mine) {
    if (r->dropped.empty()) continue;
    const std::string who = "model entry '" + r->model_name + "' (arch " + arch_name(*r) + ")";
    auto it = std::find_if(dropped.begin(), dropped.end(), [&](const auto& d) { return d.first == who; });
    if (it == dropped.end()) it = dropped.insert(dropped.end(), {who, {}});
    for (const auto& k : r->dropped)
      if (std::find(it->second.begin(), it->second.end(), k) == it->second.end()) it->second.push_back(k);
  }
  if (dropped.empty()) return;
  std::cout << "dropped keys (inherited, not applying to the entry's arch; not in its resolved config):\n";
  for (const auto& [who, keys] : dropped) {
    std::cout << "  " << who << ":";
    for (size_t i = 0; i < keys.size(); ++i) std::cout << (i ? ", " : " ") << keys[i];
    std::cout << "\n";
  }
}

}  // namespace

void print_dry_run(const Suite& suite, const SweepOptions& opts, const Plan& plan) {
  std::cout << "suite " << suite.name << ": " << suite.runs.size() << " runs";
  if (opts.shard_count > 1) std::cout << ", shard " << opts.shard_index << "/" << opts.shard_count << ": " << plan.mine.size();
  std::cout << " (" << plan.already << " finished, " << plan.todo.size() << " to run); results in " << plan.runs_dir << "\n";
  if (!suite.searches.empty()) print_dry_run_searches(suite, opts, plan);
  if (opts.searches_only) return;
  print_bidirectional_notes(suite);
  for (size_t k = 0; k < plan.mine.size(); ++k) {
    const RunSpec* r = plan.mine[k];
    std::cout << "  " << r->index << "  " << r->id << "  " << r->entry << "  " << r->model_name << "  seed=" << r->seed;
    if (!r->grid.empty()) std::cout << "  " << r->grid;
    std::cout << "  memory ~" << bytes_text(plan.estimates[k].total()) << (r->python.on ? " (python: the process; the model's own not estimated)" : "");
    std::cout << (plan.status.count(r->id) ? "  [done]" : claimed_note(plan.runs_dir, r->id, opts)) << "\n";
  }
  print_dropped_keys(plan.mine);
}

}  // namespace srbench::harness::sweep
