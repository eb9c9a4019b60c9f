#include "harness/sweep/sweep.hpp"

#include <omp.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "harness/report/transfer.hpp"
#include "harness/results/assemble.hpp"
#include "harness/results/results.hpp"
#include "harness/run/resources.hpp"
#include "harness/run/search.hpp"
#include "harness/run/trainer.hpp"
#include "harness/sweep/children.hpp"
#include "harness/sweep/claims.hpp"
#include "harness/sweep/splines.hpp"
#include "tasks/task.hpp"

namespace fs = std::filesystem;

namespace srbench::harness {

std::string runs_dir_for(const std::string& out, const std::string& suite_name) {
  fs::path dir = fs::path(out).parent_path();
  if (dir.empty()) dir = ".";
  return (dir / suite_name / "runs").string();
}

std::string splines_file_for(const std::string& out, const std::string& suite_name, const std::string& search) {
  return (fs::path(runs_dir_for(out, suite_name)).parent_path() / "splines" / (search + ".h5")).string();
}

namespace {

// "; evaluation took 12.3% of the runs' time (4.1 s of 33.5 s)" over the runs that timed it
// (files written before eval_s existed did not), else "".
std::string evaluation_share(const std::vector<RunResult>& results) {
  double eval = 0, wall = 0;
  for (const auto& r : results)
    if (std::isfinite(r.eval_s) && r.wall_s > 0) eval += r.eval_s, wall += r.wall_s;
  if (wall <= 0) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "; evaluation took %.1f%% of the runs' time (%.1f s of %.1f s)", 100.0 * eval / wall,
                eval, wall);
  return buf;
}


using Clock = std::chrono::steady_clock;

// A search is finished when its splines file opens and was written by this very search (its
// resolved config); a file left by an earlier version of the search is redone.
bool search_finished(const std::string& path, const SearchSpec& search) {
  if (!fs::exists(path)) return false;
  try {
    return read_splines_file(path).config == search.resolved_yaml;
  } catch (const std::exception&) {
    return false;
  }
}

// The end of a child that could not write its result: the message (naming the file and the
// reason) is on stderr; the sweep stops and records nothing.
[[noreturn]] void cannot_write(const std::string& what, const std::string& id, const std::exception& e) {
  std::fprintf(stderr, "srbench sweep: %s %s: cannot write its result: %s\n", what.c_str(), id.c_str(), e.what());
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(kChildCannotWrite);
}

// In the child: run the search, write its splines file, exit. Never returns.
[[noreturn]] void child_search(const Suite& suite, const SearchSpec& search, const std::string& path, int threads) {
  omp_set_num_threads(threads);
  try {
    const SearchResult r = run_search(search);
    write_splines_file(path, r, suite.text);
  } catch (const std::exception& e) {
    cannot_write("search", search.name, e);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(0);
}

std::string run_file(const std::string& runs_dir, const RunSpec& r) { return runs_dir + "/" + r.id + ".h5"; }

// The status of a finished run ("ok", "diverged", "failed"), or "" when its file is missing or
// does not open cleanly (then it is redone).
std::string finished_status(const std::string& path) {
  if (!fs::exists(path)) return "";
  try {
    return read_run_file(path).status;
  } catch (const std::exception&) {
    return "";
  }
}

// Removes the temporary files h5::write_file_atomically leaves of `file` (in `dir`) when killed:
// those of process `pid`, or (pid 0) of any process.
void remove_temporaries(const std::string& dir, const std::string& file, pid_t pid = 0) {
  const std::string prefix = file + ".tmp-" + (pid > 0 ? std::to_string(pid) + "-" : "");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove(e.path(), ec);
}

std::string fmt_acc(double v) {
  if (std::isnan(v)) return "  -  ";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string fmt_duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
  return buf;
}

// In the child: train, write the run file, exit. Never returns.
[[noreturn]] void child_run(const Suite& suite, const RunSpec& spec, const std::string& path, int threads) {
  omp_set_num_threads(threads);
  try {
    std::unique_ptr<model::Model> trained;
    const RunResult r = run_training(spec, spec.train.save_checkpoint ? &trained : nullptr);
    write_run_file(path, r, suite.text, trained.get());
  } catch (const std::exception& e) {
    cannot_write("run", spec.id, e);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(0);
}

// A run whose process died without leaving a readable file.
RunResult failed_result(const RunSpec& spec, const std::string& message, double wall_s) {
  RunResult r = result_of(spec);
  r.status = "failed";
  r.message = message;
  r.wall_s = wall_s;
  return r;
}

// What to do with a child that ended without a readable result: nothing (it was interrupted or
// could not write), or record it as failed (its message).
struct ChildEnd {
  bool interrupted = false;  // by a stop signal, or by the sweep stopping
  Stop stop;                 // what it means for the sweep
  std::string failure;       // non-empty: record the item as failed with this message
};
ChildEnd judge_child(const std::string& what, const std::string& id, int status, bool stopping) {
  ChildEnd e;
  if (killed_by_stop_signal(status) && !stopping) e.stop.signal = WTERMSIG(status);
  if (killed_by_stop_signal(status) || (stopping && WIFSIGNALED(status))) e.interrupted = true;
  else if (WIFEXITED(status) && WEXITSTATUS(status) == kChildCannotWrite)
    e.stop.error = what + " " + id + ": its result could not be written (the reason is above); nothing was recorded";
  else e.failure = "the " + what + " process " + exit_text(status) + " before writing its result";
  return e;
}

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

// `causal: false` with a task outside the tape layout is allowed (the user's choice), but noted
// once per (task entry, model entry): such a task's targets are its next inputs.
void print_bidirectional_notes(const Suite& suite) {
  std::set<std::pair<std::string, std::string>> noted;
  for (const auto& r : suite.runs) {
    const tasks::TaskInfo* info = tasks::find_task(r.task);
    if (r.model.causal || !info || info->tape_layout() || !noted.insert({r.entry, r.model_name}).second) continue;
    std::cout << "note: model " << r.model_name << " is bidirectional (causal: false) and task entry " << r.entry
              << " (task " << r.task << ") is not in the tape layout: a bidirectional model sees the answer of "
              << "next-token tasks (each target is the next input token)\n";
  }
}

// ---- plan: this call's share of the suite, what is finished and what is to do ---------------

struct Plan {
  std::string runs_dir, splines_dir;
  std::vector<const RunSpec*> mine;              // this call's share (shard) of the runs
  std::vector<MemoryEstimate> estimates;         // of mine (not with searches_only)
  std::vector<const RunSpec*> todo;              // the unfinished runs of mine
  std::map<std::string, std::string> status;     // of every finished run of mine, by id
  size_t already = 0;                            // runs of mine finished before this call
  std::vector<const SearchSpec*> searches_todo;  // the unfinished searches this call needs
  size_t searches_done = 0;                      // ... and the finished ones
};

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

// ---- dry run: the plan printed ---------------------------------------------------------------

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
    const std::string who = "model entry '" + r->model_name + "' (arch " + model::to_string(r->model.arch) + ")";
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
    std::cout << "  memory ~" << bytes_text(plan.estimates[k].total());
    std::cout << (plan.status.count(r->id) ? "  [done]" : claimed_note(plan.runs_dir, r->id, opts)) << "\n";
  }
  print_dropped_keys(plan.mine);
}

// ---- searches: each unfinished search in its own process ------------------------------------

// What a finished search process means for the sweep, and its line (`line`; "" when it was
// interrupted).
Stop search_done(const SearchSpec& sp, const std::string& path, const std::string& splines_dir, pid_t pid,
                 int wait_status, double secs, bool stopping, std::string& line) {
  line = "search " + sp.name + "  " + fmt_duration(secs) + "  ";
  Stop why;
  try {
    const SplinesFile f = read_splines_file(path);
    line += f.status;
    std::string accs;
    for (const auto& m : f.models) accs += (accs.empty() ? "" : " ") + fmt_acc(m.final_val_acc);
    line += "  final val_acc: " + accs;
    if (killed_by_stop_signal(wait_status) && !stopping) why.signal = WTERMSIG(wait_status);
  } catch (const std::exception&) {
    remove_temporaries(splines_dir, sp.name + ".h5", pid);
    const ChildEnd end = judge_child("search", sp.name, wait_status, stopping);
    why = end.stop;
    line = end.failure.empty() ? "" : line + "failed (" + end.failure + ")";
  }
  return why;
}

Stop run_searches(const Suite& suite, const SweepOptions& opts, const Plan& plan, StopSignals& signals) {
  const auto& todo = plan.searches_todo;
  fs::create_directories(plan.splines_dir);
  Claims claims(plan.splines_dir, opts.claim_timeout);
  std::cout << "searches: " << todo.size() << " to run, " << plan.searches_done << " already finished\n" << std::flush;
  auto path_of = [&](size_t i) { return splines_file_for(opts.out, suite.name, todo[i]->name); };
  return run_in_children(
      todo.size(), opts.jobs, signals,
      {.start =
           [&](size_t i) {
             const SearchSpec& sp = *todo[i];
             if (search_finished(path_of(i), sp)) return Start::Never;
             if (!claims.take(sp.name)) return Start::Later;  // its runs need it: wait for its claimer
             if (search_finished(path_of(i), sp)) {  // finished just before the claim was free
               claims.release(sp.name);
               return Start::Never;
             }
             remove_temporaries(plan.splines_dir, sp.name + ".h5");
             return Start::Now;
           },
       .child = [&](size_t i) { child_search(suite, *todo[i], path_of(i), opts.threads); },
       .started = [&](size_t i, pid_t pid) { claims.set_run_pid(todo[i]->name, pid); },
       .done =
           [&](size_t i, pid_t pid, int wait_status, double secs, bool stopping) {
             std::string line;
             const Stop why = search_done(*todo[i], path_of(i), plan.splines_dir, pid, wait_status, secs, stopping, line);
             claims.release(todo[i]->name);
             if (!opts.quiet && !line.empty()) std::cout << line << "\n" << std::flush;
             return why;
           },
       .tick = [&] { claims.heartbeat(); },
       .waiting = [&] { std::cout << "waiting for searches claimed by another sweep\n" << std::flush; }});
}

// ---- runs: each unfinished run in its own process -------------------------------------------

// The runs phase: its claims, its count of finished runs and its progress lines.
class RunPhase {
 public:
  RunPhase(const Suite& suite, const SweepOptions& opts, Plan& plan)
      : suite_(suite), opts_(opts), plan_(plan), total_(plan.mine.size()), done_(plan.already),
        leave_claimed_(opts.shard_count > 1 || opts.sharded),
        claims_(plan.runs_dir, opts.claim_timeout) {}

  Stop run(StopSignals& signals) {
    start_ = Clock::now();
    return run_in_children(
        plan_.todo.size(), opts_.jobs, signals,
        {.start = [&](size_t i) { return start(*plan_.todo[i]); },
         .child = [&](size_t i) { child(*plan_.todo[i]); },
         .started = [&](size_t i, pid_t pid) { claims_.set_run_pid(plan_.todo[i]->id, pid); },
         .done = [&](size_t i, pid_t pid, int wait_status, double run_s,
                     bool stopping) { return done(*plan_.todo[i], pid, wait_status, run_s, stopping); },
         .tick = [&] { claims_.heartbeat(); },
         .waiting =
             [&] {
               std::cout << "waiting for " << elsewhere_.size() << " run(s) claimed by other sweeps (they are taken over "
                            "if their sweep dies)\n" << std::flush;
             }});
  }
  size_t done() const { return done_; }
  size_t left() const { return total_ - done_; }
  size_t elsewhere() const { return elsewhere_.size(); }

 private:
  std::string path(const RunSpec& spec) const { return run_file(plan_.runs_dir, spec); }

  Start start(const RunSpec& spec) {
    if (const std::string s = finished_status(path(spec)); !s.empty()) {
      finished_elsewhere(spec, s);
      return Start::Never;
    }
    Claim holder;
    std::string taken_over;
    if (!claims_.take(spec.id, &holder, &taken_over)) {
      if (!elsewhere_.count(spec.id) && !opts_.quiet)
        std::cout << "run " << spec.id << " is claimed by another sweep (" << describe_claim(holder) << ")"
                  << (leave_claimed_ ? "; left to it\n" : "; waiting for it\n") << std::flush;
      elsewhere_[spec.id] = holder;
      return leave_claimed_ ? Start::Never : Start::Later;
    }
    elsewhere_.erase(spec.id);
    if (const std::string s = finished_status(path(spec)); !s.empty()) {  // written just before the claim was free
      claims_.release(spec.id);
      finished_elsewhere(spec, s);
      return Start::Never;
    }
    if (!taken_over.empty() && !opts_.quiet)
      std::cout << "run " << spec.id << ": taking over the claim of " << taken_over << "\n" << std::flush;
    remove_temporaries(plan_.runs_dir, spec.id + ".h5");  // of killed runs: nobody else writes this run now
    return Start::Now;
  }

  // In the child. Never returns.
  [[noreturn]] void child(RunSpec spec) {
    if (spec.search >= 0) {  // stage 2: the splines of its search, finished by now
      try {
        take_search_splines(spec, splines_file_for(opts_.out, suite_.name, suite_.searches[spec.search].name));
      } catch (const std::exception& e) {  // recorded as the run itself would have recorded it
        RunResult r = failed_result(spec, e.what(), 0);
        r.splines_from = spec.splines_from;
        try {
          write_run_file(path(spec), r, suite_.text, nullptr);
        } catch (const std::exception& w) {
          cannot_write("run", spec.id, w);
        }
        _exit(0);
      }
    }
    child_run(suite_, spec, path(spec), opts_.threads);
  }

  Stop done(const RunSpec& spec, pid_t pid, int wait_status, double run_s, bool stopping) {
    Stop why;
    RunResult r;
    try {
      r = read_run_file(path(spec));
      if (killed_by_stop_signal(wait_status) && !stopping) why.signal = WTERMSIG(wait_status);
    } catch (const std::exception&) {
      remove_temporaries(plan_.runs_dir, spec.id + ".h5", pid);
      const ChildEnd end = judge_child("run", spec.id, wait_status, stopping);
      if (end.failure.empty()) {  // interrupted, or its result could not be written: left unfinished
        claims_.release(spec.id);
        return end.stop;
      }
      r = failed_result(spec, end.failure, run_s);
      write_run_file(path(spec), r, suite_.text, nullptr);
    }
    claims_.release(spec.id);
    plan_.status[spec.id] = r.status;
    ++done_, ++finished_here_;
    if (opts_.quiet) return why;
    std::cout << "[" << done_ << "/" << total_ << "] " << spec.entry << "  " << spec.model_name << "  seed=" << spec.seed;
    if (!spec.grid.empty()) std::cout << "  " << spec.grid;
    std::cout << "  id=" << fmt_acc(r.metrics.id_acc) << " ood=" << fmt_acc(r.metrics.ood_length_acc)
              << " shift=" << fmt_acc(r.metrics.shift_acc) << "  " << fmt_duration(r.wall_s) << "  " << r.status;
    if (r.status != "ok") std::cout << " (" << r.message << ")";
    std::cout << "\n";
    progress();
    return why;
  }

  // A run finished by another sweep while this one waited or worked.
  void finished_elsewhere(const RunSpec& spec, const std::string& s) {
    plan_.status[spec.id] = s;
    elsewhere_.erase(spec.id);
    ++done_, ++elsewhere_done_;
    if (opts_.quiet) return;
    std::cout << "[" << done_ << "/" << total_ << "] " << spec.entry << "  " << spec.model_name << "  seed=" << spec.seed
              << (spec.grid.empty() ? "" : "  " + spec.grid) << "  " << s << " (finished by another sweep)\n";
    progress();
  }

  void progress() const {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double eta = finished_here_ ? elapsed / static_cast<double>(finished_here_) * static_cast<double>(total_ - done_) : 0;
    std::cout << "  progress: " << done_ << "/" << total_ << " done";
    if (elsewhere_done_) std::cout << " (" << elsewhere_done_ << " by other sweeps)";
    if (!elsewhere_.empty()) std::cout << ", " << elsewhere_.size() << " claimed by other sweeps";
    std::cout << ", elapsed " << fmt_duration(elapsed) << ", ETA " << fmt_duration(eta) << "\n" << std::flush;
  }

  const Suite& suite_;
  const SweepOptions& opts_;
  Plan& plan_;
  const size_t total_;
  size_t done_, finished_here_ = 0, elsewhere_done_ = 0;
  std::map<std::string, Claim> elsewhere_;  // runs claimed by other live sweeps, by id
  const bool leave_claimed_;
  Claims claims_;
  Clock::time_point start_;
};

// ---- finish: the suite file, or the shard's closing line ------------------------------------

// The suite file from every run file of the suite present (results/assemble.hpp); "wrote ..."
void write_sweep_suite_file(const Suite& suite, const SweepOptions& opts, const Plan& plan) {
  RunFiles found = read_run_files(plan.runs_dir);
  const std::vector<std::string> run_warnings = std::move(found.warnings);
  const SuiteContents contents = assemble_suite(std::move(found), plan.splines_dir, suite.text, &suite, OtherRuns::Leave);
  for (const auto* warnings : {&run_warnings, &contents.warnings})
    for (const auto& w : *warnings) std::cerr << "srbench sweep: warning: " << w << "\n";
  const std::vector<RunResult> results = contents.results();
  write_suite_file(opts.out, contents, compute_transfer(results));
  std::cout << "wrote " << opts.out << " (" << contents.runs.size() << " runs)" << evaluation_share(results);
}

SweepOutcome finish_sweep(const Suite& suite, const SweepOptions& opts, const Plan& plan, size_t elsewhere) {
  SweepOutcome outcome;
  outcome.elsewhere = elsewhere;
  for (const RunSpec* r : plan.mine) {
    const auto it = plan.status.find(r->id);
    if (it == plan.status.end()) continue;
    outcome.failed += it->second == "failed";
    outcome.diverged += it->second == "diverged";
  }
  if (opts.shard_count == 1 && outcome.elsewhere == 0) {
    write_sweep_suite_file(suite, opts, plan);
  } else {
    std::cout << "shard " << opts.shard_index << "/" << opts.shard_count << " done; join the shards with: srbench merge "
              << fs::path(plan.runs_dir).parent_path().string() << " --out " << opts.out;
  }
  if (outcome.diverged) std::cout << ", " << outcome.diverged << " run(s) diverged";
  if (outcome.failed) std::cout << ", " << outcome.failed << " run(s) FAILED (srbench merge lists them)";
  if (outcome.elsewhere) std::cout << ", " << outcome.elsewhere << " run(s) left to the other sweeps that claim them";
  std::cout << "\n";
  return outcome;
}

SweepOutcome interrupted(int sig, size_t left) {
  std::cout << "srbench sweep: interrupted by " << signal_name(sig) << ": " << left
            << " run(s) in progress or not started were left unfinished (none recorded as failed); "
               "re-run the same command to resume\n" << std::flush;
  SweepOutcome outcome;
  outcome.signal = sig;
  return outcome;
}

}  // namespace

SweepOutcome run_sweep(const Suite& suite, const SweepOptions& opts) {
  Plan plan = plan_sweep(suite, opts);
  if (opts.dry_run) {
    print_dry_run(suite, opts, plan);
    return {};
  }
  StopSignals signals;  // from here on a stop signal is taken when the sweep is ready for it
  if (!plan.searches_todo.empty()) {
    const Stop stop = run_searches(suite, opts, plan, signals);
    if (stop.signal) return interrupted(stop.signal, plan.todo.size());
    if (!stop.error.empty()) throw std::runtime_error(stop.error);
  }
  if (opts.searches_only) {
    std::cout << "searches done (shard " << opts.shard_index << "/" << opts.shard_count << ")\n";
    return {};
  }
  std::cout << "sweep " << suite.name << ": " << plan.mine.size() << " runs";
  if (opts.shard_count > 1) std::cout << " (shard " << opts.shard_index << "/" << opts.shard_count << ")";
  std::cout << ", " << plan.already << " already finished, " << plan.todo.size() << " to run, " << opts.jobs
            << " at a time, " << opts.threads << " thread(s) each\n" << std::flush;
  fs::create_directories(plan.runs_dir);
  RunPhase runs(suite, opts, plan);
  const Stop stop = runs.run(signals);
  if (stop.signal) return interrupted(stop.signal, runs.left());
  if (!stop.error.empty())
    throw std::runtime_error(stop.error + "; the " + std::to_string(runs.done()) + " finished run(s) are kept, and "
                             "re-running the same command resumes");
  if (const int sig = signals.stop_requested()) return interrupted(sig, runs.left());
  return finish_sweep(suite, opts, plan, runs.elsewhere());
}

}  // namespace srbench::harness
