// run_sweep (sweep.hpp): its phases in order (phases.hpp), the finish (the suite file, or the
// shard's closing line), and the small helpers the phases share.
#include "harness/sweep/sweep.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "harness/report/transfer.hpp"
#include "harness/results/assemble.hpp"
#include "harness/results/results.hpp"
#include "harness/sweep/phases.hpp"
#include "harness/sweep/python_runs.hpp"

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

// ---- shared by the phases (phases.hpp) -------------------------------------------------------

namespace sweep {

bool search_finished(const std::string& path, const SearchSpec& search) {
  if (!fs::exists(path)) return false;
  try {
    return read_splines_file(path).config == search.resolved_yaml;
  } catch (const std::exception&) {
    return false;
  }
}

[[noreturn]] void cannot_write(const std::string& what, const std::string& id, const std::exception& e) {
  std::fprintf(stderr, "srbench sweep: %s %s: cannot write its result: %s\n", what.c_str(), id.c_str(), e.what());
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(kChildCannotWrite);
}

std::string run_file(const std::string& runs_dir, const RunSpec& r) { return runs_dir + "/" + r.id + ".h5"; }

std::string finished_status(const std::string& path) {
  if (!fs::exists(path)) return "";
  try {
    return read_run_file(path).status;
  } catch (const std::exception&) {
    return "";
  }
}

void remove_temporaries(const std::string& dir, const std::string& file, pid_t pid) {
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

ChildEnd judge_child(const std::string& what, const std::string& id, int status, bool stopping) {
  ChildEnd e;
  if (killed_by_stop_signal(status) && !stopping) e.stop.signal = WTERMSIG(status);
  if (killed_by_stop_signal(status) || (stopping && WIFSIGNALED(status))) e.interrupted = true;
  else if (WIFEXITED(status) && WEXITSTATUS(status) == kChildCannotWrite)
    e.stop.error = what + " " + id + ": its result could not be written (the reason is above); nothing was recorded";
  else e.failure = "the " + what + " process " + exit_text(status) + " before writing its result";
  return e;
}

// ---- finish: the suite file, or the shard's closing line ------------------------------------

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

// The suite file from every run file of the suite present (results/assemble.hpp); "wrote ..."
void write_sweep_suite_file(const Suite& suite, const SweepOptions& opts, const Plan& plan, RunFileCache& read) {
  RunFiles found = read_run_files(plan.runs_dir, &read);
  const std::vector<std::string> run_warnings = std::move(found.warnings);
  const SuiteContents contents = assemble_suite(std::move(found), plan.splines_dir, suite.text, &suite, OtherRuns::Leave);
  for (const auto* warnings : {&run_warnings, &contents.warnings})
    for (const auto& w : *warnings) std::cerr << "srbench sweep: warning: " << w << "\n";
  const std::vector<RunResult> results = contents.results();
  write_suite_file(opts.out, contents, compute_transfer(results));
  std::cout << "wrote " << opts.out << " (" << contents.runs.size() << " runs)" << evaluation_share(results);
}

SweepOutcome finish_sweep(const Suite& suite, const SweepOptions& opts, const Plan& plan, size_t elsewhere,
                          RunFileCache& read) {
  SweepOutcome outcome;
  outcome.elsewhere = elsewhere;
  for (const RunSpec* r : plan.mine) {
    const auto it = plan.status.find(r->id);
    if (it == plan.status.end()) continue;
    outcome.failed += it->second == "failed";
    outcome.diverged += it->second == "diverged";
  }
  if (opts.shard_count == 1 && outcome.elsewhere == 0) {
    write_sweep_suite_file(suite, opts, plan, read);
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

}  // namespace sweep

SweepOutcome run_sweep(const Suite& suite, const SweepOptions& opts) {
  using namespace sweep;  // the phases (phases.hpp)
  Plan plan = plan_sweep(suite, opts);
  check_python_setup(suite);
  if (opts.dry_run) {
    check_python_models(suite, plan.mine);  // each factory imported and built once
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
  return finish_sweep(suite, opts, plan, runs.elsewhere(), runs.run_files());
}

}  // namespace srbench::harness
