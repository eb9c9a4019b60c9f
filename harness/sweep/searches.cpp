// The searches phase of a sweep (phases.hpp): each unfinished search in a worker process
// (children.hpp), its splines file written there; searches claimed by another sweep are waited for.
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "harness/results/results.hpp"
#include "harness/run/search.hpp"
#include "harness/sweep/phases.hpp"

namespace fs = std::filesystem;

namespace srbench::harness::sweep {

namespace {

// In a worker: run the search, write its splines file (or end the worker: cannot_write).
void child_search(const Suite& suite, const SearchSpec& search, const std::string& path, int threads) {
  omp_set_num_threads(threads);
  try {
    const SearchResult r = run_search(search);
    write_splines_file(path, r, suite.text);
  } catch (const std::exception& e) {
    cannot_write("search", search.name, e);
  }
}

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

}  // namespace

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

}  // namespace srbench::harness::sweep
