// `srbench slurm`: a suite as a Slurm job array on a shared results folder (harness.md: --shard,
// SLURM_ARRAY_*, merge). It writes, under <dir>/<suite>/slurm/,
//   suite-<hash>.yaml  the suite text as validated now (with its --set lines), so that every task
//                      expands the same runs even if the suite file is edited while tasks wait
//   sweep.sbatch       the array: task I runs `srbench sweep --shard I/N` (one run at a time, one
//                      OpenMP thread per allotted CPU), log <dir>/<suite>/logs/<job>_<task>.out
//   merge.sbatch       `srbench merge <dir>/<suite> --out FILE`, log <dir>/<suite>/logs/merge-<job>.out
// and with --submit submits them as a chain: the array, then the merge job with
// --dependency=afterany on it (it runs however the tasks end, and lists missing and failed runs).
//
// Re-submitting resumes: each task skips its finished runs, so a task killed by the scheduler
// loses only its runs in progress. A suite with spline searches (stage 1) gets a first array,
//   searches.sbatch    task I runs `srbench sweep --searches-only --shard I/S` (S = min(N, searches))
// and the sweep array waits for it with --dependency=afterany: however its tasks end, the sweep
// starts, and a shard whose runs need a search that is not finished runs it itself (docs/harness.md).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/cli/cli.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/slurm.hpp"
#include "harness/sweep/splines.hpp"
#include "harness/sweep/sweep.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace srbench::harness {

namespace {

// --array "N" or "N%K" (at most K tasks at once).
struct ArraySize {
  int tasks = 0;
  int throttle = 0;  // 0: no limit
};

ArraySize parse_array(const std::string& text) {
  auto number = [&](const std::string& s) {
    char* end = nullptr;
    const long v = s.empty() ? -1 : std::strtol(s.c_str(), &end, 10);
    return (s.empty() || *end != '\0' || v < 1 || v > 1000000) ? -1 : static_cast<int>(v);
  };
  const auto pct = text.find('%');
  ArraySize a;
  a.tasks = number(text.substr(0, pct));
  if (pct != std::string::npos) a.throttle = number(text.substr(pct + 1));
  if (a.tasks < 1 || (pct != std::string::npos && a.throttle < 1))
    throw UsageError("--array must be N or N%K (N array tasks, at most K at once; N, K >= 1), got '" + text + "'");
  return a;
}

// The sbatch options srbench sets itself; an --sbatch-arg may not change them.
void check_sbatch_arg(const std::string& arg) {
  if (arg.empty() || arg[0] != '-' || arg.find('\n') != std::string::npos)
    throw UsageError("--sbatch-arg must be one sbatch option such as --sbatch-arg=--time=02:00:00, got '" + arg + "'");
  static const char* const kOwn[][2] = {
      {"--array", "-a"}, {"--dependency", "-d"}, {"--output", "-o"}, {"--error", "-e"}};
  for (const auto& own : kOwn) {
    const std::string name = own[0], letter = own[1];
    if (arg == name || arg.rfind(name + "=", 0) == 0 || arg.rfind(letter, 0) == 0)
      throw UsageError("--sbatch-arg " + arg + ": " + name + " is set by srbench slurm (" +
                       (name == "--array" ? "use --array N" : name == "--dependency" ? "the merge job waits for the array"
                                                                                     : "logs go to <dir>/<suite>/logs") +
                       "); edit the written script to change it");
  }
}

// A path Slurm reads in an #SBATCH line: no whitespace (the line is split there) and no '%'
// (a filename pattern to Slurm).
void check_sbatch_path(const fs::path& p) {
  const std::string s = p.string();
  if (s.find_first_of(" \t%") != std::string::npos)
    throw UsageError("the log folder " + s + " holds a space or '%', which #SBATCH --output cannot take; use --out in another folder");
}

void write_text(const fs::path& path, const std::string& text, bool executable) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
  if (executable) fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
}

// Runs a program found on PATH, waits for it, and returns its exit code (127: could not start);
// its stdout is captured, its stderr goes to ours.
int run_program(const std::vector<std::string>& argv, std::string& out) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  out.clear();
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  return s;
}

// One job of the chain `--submit` sends, in order; a step after the first waits for the one
// before it (`after`, a Slurm dependency type): [the searches array,] the sweep array, the merge.
struct Step {
  std::string what;  // "array job", "merge job"
  fs::path script;
  std::string after;  // "" for the first step
};

std::string submit_by_hand(const std::vector<Step>& steps) {
  std::string cmd;
  for (size_t i = 0; i < steps.size(); ++i) {
    const bool last = i + 1 == steps.size();
    std::string sb = "sbatch " + std::string(last ? "" : "--parsable ") +
                     (steps[i].after.empty() ? "" : "--dependency=" + steps[i].after + ":$j" + std::to_string(i - 1) + " ") +
                     shell_quote(steps[i].script.string());
    cmd += last ? sb : "j" + std::to_string(i) + "=$(" + sb + ") && ";
  }
  return cmd;
}

// Jobs of this suite still queued or running: a second submission would train the same runs
// twice at once (harmless for the results — one file per run id — but wasted).
void warn_if_queued(const std::string& job_name) {
  std::string out;
  if (run_program({"squeue", "--noheader", "--format=%i",
                   "--name=" + job_name + "," + job_name + "-merge," + job_name + "-searches"},
                  out) != 0)
    return;
  std::string ids;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!trim(line).empty()) ids += (ids.empty() ? "" : ", ") + trim(line);
  if (!ids.empty())
    std::cerr << "srbench slurm: warning: jobs of this suite are still queued or running (" << ids
              << "); their tasks and the new ones may train the same runs at once (the results stay "
                 "correct, the work is wasted)\n";
}

std::string submit(const Step& step, const std::string& previous_id) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  if (!step.after.empty()) argv.push_back("--dependency=" + step.after + ":" + previous_id);
  argv.push_back(step.script.string());
  std::string out;
  const int code = run_program(argv, out);
  if (code == 127) throw std::runtime_error("cannot run sbatch: is this a Slurm login node? (the scripts are written; submit them by hand)");
  // --parsable prints "<job id>" or "<job id>;<cluster>"
  const std::string id = trim(out.substr(0, out.find(';')));
  if (code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("sbatch " + step.script.string() + " failed (exit code " + std::to_string(code) +
                             (trim(out).empty() ? "" : ", printed '" + trim(out) + "'") + ")");
  return id;
}

// Writes the suite's snapshot and the job scripts (searches array if any, sweep array, merge
// job), and says what they do. The steps, in the order they are submitted.
std::vector<Step> write_scripts(SlurmPlan& p, const Suite& suite) {
  fs::create_directories(p.suite_dir / "logs");
  fs::create_directories(p.suite_dir / "slurm");
  write_text(p.snapshot, suite.text, false);
  std::vector<Step> steps;
  if (p.searches > 0) {
    p.search_tasks = static_cast<int>(std::min(p.searches, static_cast<size_t>(p.tasks)));
    steps.push_back({"searches array job", p.suite_dir / "slurm" / "searches.sbatch", ""});
    write_text(steps.back().script, searches_array_script(p), true);
  }
  steps.push_back({"array job", p.suite_dir / "slurm" / "sweep.sbatch", steps.empty() ? "" : "afterany"});
  write_text(steps.back().script, sweep_array_script(p), true);
  steps.push_back({"merge job", p.suite_dir / "slurm" / "merge.sbatch", "afterany"});
  write_text(steps.back().script, merge_job_script(p), true);
  const size_t sweep_step = steps.size() - 2;

  const size_t per_lo = p.runs / static_cast<size_t>(p.tasks);
  const size_t per_hi = (p.runs + static_cast<size_t>(p.tasks) - 1) / static_cast<size_t>(p.tasks);
  std::cout << "suite " << p.suite_name << ": " << p.runs << " runs over " << p.tasks << " array task(s) ("
            << per_lo << (per_hi != per_lo ? "-" + std::to_string(per_hi) : "") << " each"
            << (p.throttle ? ", at most " + std::to_string(p.throttle) + " at once" : "") << ")\n"
            << "wrote ";
  if (p.searches > 0)
    std::cout << steps[0].script.string() << "  (" << p.searches << " search(es); task I: srbench sweep --searches-only --shard I/"
              << p.search_tasks << ")\n      ";
  std::cout << steps[sweep_step].script.string() << "  (task I: srbench sweep --shard I/" << p.tasks
            << (p.searches > 0 ? ", after the searches array" : "") << ")\n"
            << "      " << steps.back().script.string() << "  (srbench merge, after the array)\n";
  return steps;
}

// Submits the steps as a chain (each after the one before) and says how to follow them.
void submit_chain(const SlurmPlan& p, const std::vector<Step>& steps) {
  const size_t sweep_step = steps.size() - 2;
  const std::string logs = (p.suite_dir / "logs").string();
  warn_if_queued("srbench-" + p.suite_name);
  std::vector<std::string> ids;
  for (const Step& step : steps) {
    try {
      ids.push_back(submit(step, ids.empty() ? "" : ids.back()));
    } catch (const std::exception& e) {
      std::string done;
      for (size_t i = 0; i < ids.size(); ++i) done += " " + steps[i].what + " " + ids[i];
      throw std::runtime_error(std::string(e.what()) + (done.empty() ? "" : "; already submitted:" + done));
    }
  }
  std::string follow;
  for (const auto& id : ids) follow += (follow.empty() ? "" : ",") + id;
  if (p.searches > 0)
    std::cout << "submitted searches array job " << ids[0] << " (tasks 0-" << p.search_tasks - 1 << "), then ";
  else
    std::cout << "submitted ";
  std::cout << "array job " << ids[sweep_step] << " (tasks 0-" << p.tasks - 1 << ")"
            << (p.searches > 0 ? " (--dependency=afterany:" + ids[0] + ")" : "") << " and merge job " << ids.back()
            << " (--dependency=afterany:" << ids[sweep_step] << ")\n"
            << "results: " << (p.suite_dir / "runs").string() << "/ (one file per run); suite file " << p.out.string()
            << " when the merge job is done\n"
            << "logs:    " << (p.searches > 0 ? logs + "/searches-" + ids[0] + "_<task>.out, " : "") << logs << "/"
            << ids[sweep_step] << "_<task>.out, " << logs << "/merge-" << ids.back() << ".out\n"
            << "follow:  squeue -j " << follow << "   resume or retry: run this command again\n";
}

}  // namespace

int cmd_slurm(const Args& args) {
  po::options_description opts(
      "srbench slurm SUITE.yaml --array N [options]: run a suite as a Slurm job array\n"
      "Writes <dir>/<suite>/slurm/sweep.sbatch (array task I runs `srbench sweep --shard I/N`) and merge.sbatch\n"
      "(`srbench merge`, after the array); --submit submits both. Submitting again resumes: finished runs are skipped.\n\n"
      "options");
  std::string suite_path, array_text, out;
  std::vector<std::string> sbatch_args, sets;
  int signal_grace = 120;
  opts.add_options()
      ("help,h", "show this help")
      ("array", po::value(&array_text), "N or N%K: N array tasks (shards), at most K running at once (required)")
      ("out", po::value(&out), "suite file (default results/<suite>.h5); runs, logs and scripts go to <its folder>/<suite>/")
      ("sbatch-arg", po::value(&sbatch_args)->composing(),
       "an sbatch option for both jobs, e.g. --sbatch-arg=--time=02:00:00 --sbatch-arg=--cpus-per-task=4 (repeatable)")
      ("set", po::value(&sets)->composing(), "override KEY=VALUE for every run (model.X, train.X, eval.X, params.X)")
      ("signal-grace", po::value(&signal_grace)->default_value(120),
       "seconds before the time limit at which a task is warned (USR1), stops its sweep and requeues itself")
      ("submit", "submit the array and the merge job (without it: only write the scripts)")
      ("suite", po::value(&suite_path), "the suite YAML (positional)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, "suite")) return 0;
  if (suite_path.empty()) throw UsageError("missing SUITE.yaml");
  if (array_text.empty()) throw UsageError("missing --array N, the number of array tasks (shards)");
  SlurmPlan p;
  const ArraySize array = parse_array(array_text);
  p.tasks = array.tasks, p.throttle = array.throttle;
  if (signal_grace < 10 || signal_grace > 65535)
    throw UsageError("--signal-grace must be 10 to 65535 seconds, got " + std::to_string(signal_grace));
  p.signal_grace = signal_grace;
  for (const auto& a : sbatch_args) check_sbatch_arg(a);
  p.sbatch_args = sbatch_args;
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const auto& s : sets) overrides.push_back(split_assignment(s, "--set"));

  Suite suite = load_suite(suite_path, overrides);  // nothing is written unless it validates
  resolve_splines_files(suite);
  if (suite.runs.empty()) throw UsageError(suite_path + ": the suite has no runs");
  p.suite_name = suite.name;
  p.suite_source = suite_path;
  p.runs = suite.runs.size();
  p.searches = suite.searches.size();
  if (static_cast<size_t>(p.tasks) > p.runs) {
    std::cerr << "srbench slurm: note: --array " << p.tasks << " but the suite has " << p.runs
              << " runs; using " << p.runs << " array tasks\n";
    p.tasks = static_cast<int>(p.runs);
  }
  std::error_code ec;
  p.srbench = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the srbench binary's own path (/proc/self/exe): " + ec.message());
  p.workdir = fs::current_path();
  p.out = fs::absolute(suite_file_out(out, suite.name)).lexically_normal();
  p.suite_dir = fs::path(runs_dir_for(p.out.string(), suite.name)).parent_path();
  p.snapshot = p.suite_dir / "slurm" / ("suite-" + short_hash(suite.text) + ".yaml");
  check_sbatch_path(p.suite_dir / "logs");
  p.command_line = "srbench slurm " + suite_path + " --array " + array_text;
  if (!out.empty()) p.command_line += " --out " + out;
  for (const auto& a : sbatch_args) p.command_line += " --sbatch-arg=" + a;
  for (const auto& s : sets) p.command_line += " --set " + s;

  const std::vector<Step> steps = write_scripts(p, suite);
  const std::string logs = (p.suite_dir / "logs").string();
  if (!vm.count("submit")) {
    std::cout << "not submitted (add --submit); by hand, from " << p.workdir.string() << ":\n  " << submit_by_hand(steps) << "\n"
              << "results: " << (p.suite_dir / "runs").string() << "/, suite file " << p.out.string()
              << " (written by the merge job); logs: " << logs << "/\n";
    return 0;
  }

  submit_chain(p, steps);
  return 0;
}

}  // namespace srbench::harness
