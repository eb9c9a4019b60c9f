// The plan of a sweep (phases.hpp): this call's share of the suite, what is finished and what
// is to do; a share whose runs or searches cannot fit in memory is refused.
#include <algorithm>
#include <filesystem>
#include <map>

#include "harness/run/resources.hpp"
#include "harness/sweep/phases.hpp"

namespace fs = std::filesystem;

namespace srbench::harness::sweep {

namespace {

// Refuses the runs of `mine` whose memory estimate exceeds the memory per run at once: one line
// per (entry, model), with its largest estimate.
void check_memory(const Suite& suite, const std::vector<const RunSpec*>& mine, const std::vector<MemoryEstimate>& est,
                  const SweepOptions& opts) {
  const uint64_t memory = opts.memory > 0 ? opts.memory : machine_memory();
  if (memory == 0 || mine.empty()) return;  // unknown: nothing to hold the runs against
  const uint64_t at_once = static_cast<uint64_t>(std::min<size_t>(static_cast<size_t>(std::max(opts.jobs, 1)), mine.size()));
  const uint64_t per_run = memory / at_once;
  std::map<std::pair<std::string, std::string>, size_t> worst;  // (entry, model) -> index into mine
  std::vector<std::pair<std::string, std::string>> order;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (est[i].total() <= per_run) continue;
    const auto key = std::make_pair(mine[i]->entry, mine[i]->model_name);
    const auto it = worst.find(key);
    if (it == worst.end()) worst[key] = i, order.push_back(key);
    else if (est[i].total() > est[it->second].total()) it->second = i;
  }
  if (order.empty()) return;
  std::string msg = std::to_string(order.size()) + " task entr" + (order.size() == 1 ? "y" : "ies") +
                    " cannot fit in memory: " + (opts.memory > 0 ? "--memory " : "this machine's ") + bytes_text(memory) +
                    (at_once > 1 ? " / " + std::to_string(at_once) + " runs at once = " + bytes_text(per_run) + " a run" : "") + ";";
  for (const auto& key : order) {
    const size_t i = worst[key];
    msg += "\n  entry '" + key.first + "', model '" + key.second + "'" + (mine[i]->grid.empty() ? "" : " (" + mine[i]->grid + ")") +
           ": a run needs about " + describe_estimate(est[i]);
  }
  msg += "\n(shrink the model, train.batch or the lengths; run fewer --jobs; or give --memory if the runs go elsewhere)";
  throw ConfigError(suite.file, 0, "", msg);
}

// The same for the searches to run: one line per search that cannot fit.
void check_search_memory(const Suite& suite, const std::vector<const SearchSpec*>& todo, const SweepOptions& opts) {
  const uint64_t memory = opts.memory > 0 ? opts.memory : machine_memory();
  if (memory == 0 || todo.empty()) return;
  const uint64_t at_once = static_cast<uint64_t>(std::min<size_t>(static_cast<size_t>(std::max(opts.jobs, 1)), todo.size()));
  std::string lines;
  size_t n = 0;
  for (const SearchSpec* sp : todo) {
    const MemoryEstimate e = estimate_search_memory(*sp, opts.threads);
    if (e.total() <= memory / at_once) continue;
    lines += "\n  search '" + sp->name + "' (population " + std::to_string(sp->population) + "): needs about " + describe_estimate(e);
    ++n;
  }
  if (n == 0) return;
  throw ConfigError(suite.file, 0, "",
                    std::to_string(n) + " search(es) cannot fit in memory: " + (opts.memory > 0 ? "--memory " : "this machine's ") +
                        bytes_text(memory) + (at_once > 1 ? " / " + std::to_string(at_once) + " searches at once" : "") + ";" + lines +
                        "\n(shrink the model, population or train.batch; run fewer --jobs; or give --memory if the searches run elsewhere)");
}

// Searches first: unsharded, every search of the suite; a shard, those its unfinished runs
// need; --searches-only, the searches whose index mod N is I. Finished ones are not redone.
void plan_searches(const Suite& suite, const SweepOptions& opts, Plan& plan) {
  std::vector<bool> wanted(suite.searches.size(), false);
  for (const auto& sp : suite.searches)
    wanted[sp.index] = opts.searches_only ? static_cast<int>(sp.index % static_cast<size_t>(opts.shard_count)) == opts.shard_index
                                          : opts.shard_count == 1;
  for (const RunSpec* r : plan.todo)
    if (r->search >= 0) wanted[static_cast<size_t>(r->search)] = true;
  for (const auto& sp : suite.searches) {
    if (!wanted[sp.index]) continue;
    if (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp)) ++plan.searches_done;
    else plan.searches_todo.push_back(&sp);
  }
}

}  // namespace

// The plan, after refusing a share whose runs or searches cannot fit in memory.
Plan plan_sweep(const Suite& suite, const SweepOptions& opts) {
  Plan plan;
  plan.runs_dir = runs_dir_for(opts.out, suite.name);
  plan.splines_dir = fs::path(plan.runs_dir).parent_path() / "splines";
  for (const auto& r : suite.runs)
    if (static_cast<int>(r.index % static_cast<size_t>(opts.shard_count)) == opts.shard_index) plan.mine.push_back(&r);
  if (!opts.searches_only) {
    for (const RunSpec* r : plan.mine) plan.estimates.push_back(estimate_memory(*r, opts.threads));
    check_memory(suite, plan.mine, plan.estimates, opts);
    for (const RunSpec* r : plan.mine) {
      const std::string s = finished_status(run_file(plan.runs_dir, *r));
      if (s.empty()) plan.todo.push_back(r);
      else plan.status[r->id] = s;
    }
  }
  plan.already = plan.status.size();
  plan_searches(suite, opts, plan);
  check_search_memory(suite, plan.searches_todo, opts);
  return plan;
}

}  // namespace srbench::harness::sweep
