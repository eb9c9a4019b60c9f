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

}  // namespace

SweepOutcome run_sweep(const Suite& suite, const SweepOptions& opts) {
  SweepOutcome outcome;
  const std::string runs_dir = runs_dir_for(opts.out, suite.name);
  const std::string splines_dir = fs::path(runs_dir).parent_path() / "splines";
  std::vector<const RunSpec*> mine;
  for (const auto& r : suite.runs)
    if (static_cast<int>(r.index % static_cast<size_t>(opts.shard_count)) == opts.shard_index) mine.push_back(&r);

  std::vector<MemoryEstimate> estimates;
  if (!opts.searches_only) {
    for (const RunSpec* r : mine) estimates.push_back(estimate_memory(*r, opts.threads));
    check_memory(suite, mine, estimates, opts);
  }

  std::vector<const RunSpec*> todo;
  std::map<std::string, std::string> status;  // of every finished run of mine, by id
  for (const RunSpec* r : mine) {
    if (opts.searches_only) break;
    const std::string s = finished_status(run_file(runs_dir, *r));
    if (s.empty()) todo.push_back(r);
    else status[r->id] = s;
  }
  const size_t already = status.size();

  // Searches first: unsharded, every search of the suite; a shard, those its unfinished runs
  // need; --searches-only, the searches whose index mod N is I. Finished ones are not redone.
  std::vector<bool> wanted(suite.searches.size(), false);
  for (const auto& sp : suite.searches)
    wanted[sp.index] = opts.searches_only ? static_cast<int>(sp.index % static_cast<size_t>(opts.shard_count)) == opts.shard_index
                                          : opts.shard_count == 1;
  for (const RunSpec* r : todo)
    if (r->search >= 0) wanted[static_cast<size_t>(r->search)] = true;
  std::vector<const SearchSpec*> searches_todo;
  size_t searches_done = 0;
  for (const auto& sp : suite.searches) {
    if (!wanted[sp.index]) continue;
    if (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp)) ++searches_done;
    else searches_todo.push_back(&sp);
  }
  check_search_memory(suite, searches_todo, opts);

  auto claimed_note = [&](const std::string& dir, const std::string& name) -> std::string {
    const auto c = read_claim(dir + "/" + name + ".claim");
    if (!c) return "";
    return claim_alive(*c, opts.claim_timeout) ? "  [claimed: " + describe_claim(*c) + "]" : "";
  };
  if (opts.dry_run) {
    std::cout << "suite " << suite.name << ": " << suite.runs.size() << " runs";
    if (opts.shard_count > 1) std::cout << ", shard " << opts.shard_index << "/" << opts.shard_count << ": " << mine.size();
    std::cout << " (" << already << " finished, " << todo.size() << " to run); results in " << runs_dir << "\n";
    if (!suite.searches.empty()) {
      std::cout << "searches: " << suite.searches.size() << " (" << searches_done << " of this call's finished, "
                << searches_todo.size() << " to run)\n";
      for (const auto& sp : suite.searches)
        std::cout << "  search " << sp.index << "  " << sp.id << "  " << sp.name << "  task=" << sp.task
                  << "  population=" << sp.population << "  steps=" << sp.train.steps
                  << "  memory ~" << bytes_text(estimate_search_memory(sp, opts.threads).total())
                  << (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp) ? "  [done]" : "")
                  << claimed_note(splines_dir, sp.name) << "\n";
    }
    if (opts.searches_only) return outcome;
    print_bidirectional_notes(suite);
    for (size_t k = 0; k < mine.size(); ++k) {
      const RunSpec* r = mine[k];
      std::cout << "  " << r->index << "  " << r->id << "  " << r->entry << "  " << r->model_name << "  seed=" << r->seed;
      if (!r->grid.empty()) std::cout << "  " << r->grid;
      std::cout << "  memory ~" << bytes_text(estimates[k].total());
      std::cout << (status.count(r->id) ? "  [done]" : claimed_note(runs_dir, r->id)) << "\n";
    }
    // recurrent.md: per model entry (and arch), the inherited keys that do not apply and were dropped
    std::vector<std::pair<std::string, std::vector<std::string>>> dropped;
    for (const RunSpec* r : mine) {
      if (r->dropped.empty()) continue;
      const std::string who = "model entry '" + r->model_name + "' (arch " + model::to_string(r->model.arch) + ")";
      auto it = std::find_if(dropped.begin(), dropped.end(), [&](const auto& d) { return d.first == who; });
      if (it == dropped.end()) it = dropped.insert(dropped.end(), {who, {}});
      for (const auto& k : r->dropped)
        if (std::find(it->second.begin(), it->second.end(), k) == it->second.end()) it->second.push_back(k);
    }
    if (!dropped.empty()) {
      std::cout << "dropped keys (inherited, not applying to the entry's arch; not in its resolved config):\n";
      for (const auto& [who, keys] : dropped) {
        std::cout << "  " << who << ":";
        for (size_t i = 0; i < keys.size(); ++i) std::cout << (i ? ", " : " ") << keys[i];
        std::cout << "\n";
      }
    }
    return outcome;
  }

  StopSignals signals;  // from here on a stop signal is taken when the sweep is ready for it
  auto interrupted = [&](int sig, size_t left) {
    std::cout << "srbench sweep: interrupted by " << signal_name(sig) << ": " << left
              << " run(s) in progress or not started were left unfinished (none recorded as failed); "
                 "re-run the same command to resume\n" << std::flush;
    outcome.signal = sig;
    return outcome;
  };

  if (!searches_todo.empty()) {
    fs::create_directories(splines_dir);
    Claims claims(splines_dir, opts.claim_timeout);
    std::cout << "searches: " << searches_todo.size() << " to run, " << searches_done << " already finished\n" << std::flush;
    auto path_of = [&](size_t i) { return splines_file_for(opts.out, suite.name, searches_todo[i]->name); };
    const Stop stop = run_in_children(
        searches_todo.size(), opts.jobs, signals,
        {.start =
             [&](size_t i) {
               const SearchSpec& sp = *searches_todo[i];
               if (search_finished(path_of(i), sp)) return Start::Never;
               if (!claims.take(sp.name)) return Start::Later;  // its runs need it: wait for its claimer
               if (search_finished(path_of(i), sp)) {  // finished just before the claim was free
                 claims.release(sp.name);
                 return Start::Never;
               }
               remove_temporaries(splines_dir, sp.name + ".h5");
               return Start::Now;
             },
         .child = [&](size_t i) { child_search(suite, *searches_todo[i], path_of(i), opts.threads); },
         .started = [&](size_t i, pid_t pid) { claims.set_run_pid(searches_todo[i]->name, pid); },
         .done =
             [&](size_t i, pid_t pid, int wait_status, double secs, bool stopping) {
               const SearchSpec& sp = *searches_todo[i];
               std::string line = "search " + sp.name + "  " + fmt_duration(secs) + "  ";
               Stop why;
               try {
                 const SplinesFile f = read_splines_file(path_of(i));
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
               claims.release(sp.name);
               if (!opts.quiet && !line.empty()) std::cout << line << "\n" << std::flush;
               return why;
             },
         .tick = [&] { claims.heartbeat(); },
         .waiting = [&] { std::cout << "waiting for searches claimed by another sweep\n" << std::flush; }});
    if (stop.signal) return interrupted(stop.signal, todo.size());
    if (!stop.error.empty()) throw std::runtime_error(stop.error);
  }
  if (opts.searches_only) {
    std::cout << "searches done (shard " << opts.shard_index << "/" << opts.shard_count << ")\n";
    return outcome;
  }

  const size_t total = mine.size();
  size_t done = already, finished_here = 0, elsewhere_done = 0;
  std::map<std::string, Claim> elsewhere;  // runs claimed by other live sweeps, by id
  std::cout << "sweep " << suite.name << ": " << total << " runs";
  if (opts.shard_count > 1) std::cout << " (shard " << opts.shard_index << "/" << opts.shard_count << ")";
  std::cout << ", " << already << " already finished, " << todo.size() << " to run, " << opts.jobs << " at a time, "
            << opts.threads << " thread(s) each\n" << std::flush;

  fs::create_directories(runs_dir);
  Claims claims(runs_dir, opts.claim_timeout);
  const bool leave_claimed = opts.shard_count > 1 || opts.sharded;
  const auto start = Clock::now();
  auto progress = [&] {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double eta = finished_here ? elapsed / static_cast<double>(finished_here) * static_cast<double>(total - done) : 0;
    std::cout << "  progress: " << done << "/" << total << " done";
    if (elsewhere_done) std::cout << " (" << elsewhere_done << " by other sweeps)";
    if (!elsewhere.empty()) std::cout << ", " << elsewhere.size() << " claimed by other sweeps";
    std::cout << ", elapsed " << fmt_duration(elapsed) << ", ETA " << fmt_duration(eta) << "\n" << std::flush;
  };
  // A run finished by another sweep while this one waited or worked.
  auto finished_elsewhere = [&](const RunSpec& spec, const std::string& s) {
    status[spec.id] = s;
    elsewhere.erase(spec.id);
    ++done, ++elsewhere_done;
    if (opts.quiet) return;
    std::cout << "[" << done << "/" << total << "] " << spec.entry << "  " << spec.model_name << "  seed=" << spec.seed
              << (spec.grid.empty() ? "" : "  " + spec.grid) << "  " << s << " (finished by another sweep)\n";
    progress();
  };

  const Stop stop = run_in_children(
      todo.size(), opts.jobs, signals,
      {.start =
           [&](size_t i) {
             const RunSpec& spec = *todo[i];
             const std::string path = run_file(runs_dir, spec);
             if (const std::string s = finished_status(path); !s.empty()) {
               finished_elsewhere(spec, s);
               return Start::Never;
             }
             Claim holder;
             std::string taken_over;
             if (!claims.take(spec.id, &holder, &taken_over)) {
               if (!elsewhere.count(spec.id) && !opts.quiet)
                 std::cout << "run " << spec.id << " is claimed by another sweep (" << describe_claim(holder) << ")"
                           << (leave_claimed ? "; left to it\n" : "; waiting for it\n") << std::flush;
               elsewhere[spec.id] = holder;
               return leave_claimed ? Start::Never : Start::Later;
             }
             elsewhere.erase(spec.id);
             if (const std::string s = finished_status(path); !s.empty()) {  // written just before the claim was free
               claims.release(spec.id);
               finished_elsewhere(spec, s);
               return Start::Never;
             }
             if (!taken_over.empty() && !opts.quiet)
               std::cout << "run " << spec.id << ": taking over the claim of " << taken_over << "\n" << std::flush;
             remove_temporaries(runs_dir, spec.id + ".h5");  // of killed runs: nobody else writes this run now
             return Start::Now;
           },
       .child =
           [&](size_t i) {
             RunSpec spec = *todo[i];
             if (spec.search >= 0) {  // stage 2: the splines of its search, finished by now
               try {
                 take_search_splines(spec, splines_file_for(opts.out, suite.name, suite.searches[spec.search].name));
               } catch (const std::exception& e) {  // recorded as the run itself would have recorded it
                 RunResult r = failed_result(spec, e.what(), 0);
                 r.splines_from = spec.splines_from;
                 try {
                   write_run_file(run_file(runs_dir, spec), r, suite.text, nullptr);
                 } catch (const std::exception& w) {
                   cannot_write("run", spec.id, w);
                 }
                 _exit(0);
               }
             }
             child_run(suite, spec, run_file(runs_dir, spec), opts.threads);
           },
       .started = [&](size_t i, pid_t pid) { claims.set_run_pid(todo[i]->id, pid); },
       .done =
           [&](size_t i, pid_t pid, int wait_status, double run_s, bool stopping) {
             const RunSpec& spec = *todo[i];
             const std::string path = run_file(runs_dir, spec);
             Stop why;
             RunResult r;
             try {
               r = read_run_file(path);
               if (killed_by_stop_signal(wait_status) && !stopping) why.signal = WTERMSIG(wait_status);
             } catch (const std::exception&) {
               remove_temporaries(runs_dir, spec.id + ".h5", pid);
               const ChildEnd end = judge_child("run", spec.id, wait_status, stopping);
               if (end.failure.empty()) {  // interrupted, or its result could not be written: left unfinished
                 claims.release(spec.id);
                 return end.stop;
               }
               r = failed_result(spec, end.failure, run_s);
               write_run_file(path, r, suite.text, nullptr);
             }
             claims.release(spec.id);
             status[spec.id] = r.status;
             ++done, ++finished_here;
             if (opts.quiet) return why;
             std::cout << "[" << done << "/" << total << "] " << spec.entry << "  " << spec.model_name << "  seed=" << spec.seed;
             if (!spec.grid.empty()) std::cout << "  " << spec.grid;
             std::cout << "  id=" << fmt_acc(r.metrics.id_acc) << " ood=" << fmt_acc(r.metrics.ood_length_acc)
                       << " shift=" << fmt_acc(r.metrics.shift_acc) << "  " << fmt_duration(r.wall_s) << "  " << r.status;
             if (r.status != "ok") std::cout << " (" << r.message << ")";
             std::cout << "\n";
             progress();
             return why;
           },
       .tick = [&] { claims.heartbeat(); },
       .waiting =
           [&] {
             std::cout << "waiting for " << elsewhere.size() << " run(s) claimed by other sweeps (they are taken over "
                          "if their sweep dies)\n" << std::flush;
           }});
  if (stop.signal) return interrupted(stop.signal, total - done);
  if (!stop.error.empty())
    throw std::runtime_error(stop.error + "; the " + std::to_string(done) + " finished run(s) are kept, and re-running "
                             "the same command resumes");
  if (const int sig = signals.stop_requested()) return interrupted(sig, total - done);

  outcome.elsewhere = elsewhere.size();
  for (const RunSpec* r : mine) {
    const auto it = status.find(r->id);
    if (it == status.end()) continue;
    outcome.failed += it->second == "failed";
    outcome.diverged += it->second == "diverged";
  }
  if (opts.shard_count == 1 && outcome.elsewhere == 0) {
    std::vector<RunFile> files;
    std::vector<RunResult> results;
    for (const auto& r : suite.runs)
      if (fs::exists(run_file(runs_dir, r))) {
        files.push_back(read_run_file_at(run_file(runs_dir, r)));
        results.push_back(files.back().result);
      }
    std::vector<std::string> splines;
    for (const auto& sp : suite.searches)
      if (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp))
        splines.push_back(splines_file_for(opts.out, suite.name, sp.name));
    write_suite_file(opts.out, suite.text, files, splines, compute_transfer(results));
    std::cout << "wrote " << opts.out << " (" << files.size() << " runs)" << evaluation_share(results);
  } else {
    std::cout << "shard " << opts.shard_index << "/" << opts.shard_count << " done; join the shards with: srbench merge "
              << fs::path(runs_dir).parent_path().string() << " --out " << opts.out;
  }
  if (outcome.diverged) std::cout << ", " << outcome.diverged << " run(s) diverged";
  if (outcome.failed) std::cout << ", " << outcome.failed << " run(s) FAILED (srbench merge lists them)";
  if (outcome.elsewhere) std::cout << ", " << outcome.elsewhere << " run(s) left to the other sweeps that claim them";
  std::cout << "\n";
  return outcome;
}

}  // namespace srbench::harness
