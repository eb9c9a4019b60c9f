// The runs phase of a sweep (RunPhase, phases.hpp): each unfinished run in a worker process
// (children.hpp), its run file written there; its claims, its count of finished runs and its progress lines.
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "harness/results/results.hpp"
#include "harness/run/trainer.hpp"
#include "harness/sweep/phases.hpp"
#include "harness/sweep/python_runs.hpp"
#include "harness/sweep/splines.hpp"

namespace srbench::harness::sweep {

namespace {

// In a worker: train, write the run file (or end the worker: cannot_write).
void child_run(const Suite& suite, const RunSpec& spec, const std::string& path, int threads) {
  omp_set_num_threads(threads);
  try {
    if (spec.python.on) return run_python_model(suite, spec, path, threads);  // a Python process of its own
    std::unique_ptr<model::Model> trained;
    const RunResult r = run_training(spec, spec.train.save_checkpoint ? &trained : nullptr);
    write_run_file(path, r, suite.text, trained.get());
  } catch (const std::exception& e) {
    cannot_write("run", spec.id, e);
  }
}

// A run whose process died without leaving a readable file.
RunResult failed_result(const RunSpec& spec, const std::string& message, double wall_s) {
  RunResult r = result_of(spec);
  r.status = "failed";
  r.message = message;
  r.wall_s = wall_s;
  return r;
}

}  // namespace

Stop RunPhase::run(StopSignals& signals) {
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

std::string RunPhase::path(const RunSpec& spec) const { return run_file(plan_.runs_dir, spec); }

Start RunPhase::start(const RunSpec& spec) {
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

void RunPhase::child(RunSpec spec) {
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
      return;
    }
  }
  child_run(suite_, spec, path(spec), opts_.threads);
}

Stop RunPhase::done(const RunSpec& spec, pid_t pid, int wait_status, double run_s, bool stopping) {
  Stop why;
  RunResult r;
  try {
    r = read_.read(path(spec)).result;
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

void RunPhase::finished_elsewhere(const RunSpec& spec, const std::string& s) {
  plan_.status[spec.id] = s;
  elsewhere_.erase(spec.id);
  ++done_, ++elsewhere_done_;
  if (opts_.quiet) return;
  std::cout << "[" << done_ << "/" << total_ << "] " << spec.entry << "  " << spec.model_name << "  seed=" << spec.seed
            << (spec.grid.empty() ? "" : "  " + spec.grid) << "  " << s << " (finished by another sweep)\n";
  progress();
}

void RunPhase::progress() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double eta = finished_here_ ? elapsed / static_cast<double>(finished_here_) * static_cast<double>(total_ - done_) : 0;
  std::cout << "  progress: " << done_ << "/" << total_ << " done";
  if (elsewhere_done_) std::cout << " (" << elsewhere_done_ << " by other sweeps)";
  if (!elsewhere_.empty()) std::cout << ", " << elsewhere_.size() << " claimed by other sweeps";
  std::cout << ", elapsed " << fmt_duration(elapsed) << ", ETA " << fmt_duration(eta) << "\n" << std::flush;
}

}  // namespace srbench::harness::sweep
