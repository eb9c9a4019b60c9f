#include "harness/sweep/python_runs.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/process.hpp"
#include "common/version.hpp"
#include "harness/results/results.hpp"
#include "harness/sweep/children.hpp"
#include "harness/sweep/phases.hpp"

namespace srbench::harness::sweep {

namespace fs = std::filesystem;

namespace {

// Imports srbench.suite_run — from the package beside the binary (argv[1]) when there is one and
// it loads in this interpreter, else the interpreter's own — and runs it with the rest of argv.
constexpr const char* kBoot = R"(import sys
folder = sys.argv.pop(1)
if folder:
    sys.path.insert(0, folder)
try:
    import srbench.suite_run as run
except ImportError:
    if not folder:
        raise
    sys.path.remove(folder)
    for name in [n for n in sys.modules if n == "srbench" or n.startswith("srbench.")]:
        del sys.modules[name]
    import srbench.suite_run as run
sys.exit(run.main(sys.argv[1:]))
)";

// suite_run.main's exit codes for a run it could not start.
constexpr int kSourceChanged = 5;
constexpr int kOtherBuild = 6;

// The last 2,000 characters of what a Python process wrote to stderr, after `lead`; "" when it
// wrote nothing.
std::string error_tail(const ProcessResult& p, const std::string& lead) {
  if (p.err.empty()) return "";
  return lead + (p.err.size() > 2000 ? p.err.substr(p.err.size() - 2000) : p.err);
}

std::vector<std::string> python_argv(const Suite& suite, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {python_interpreter(suite), "-c", kBoot, package_folder()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

std::string package_folder() {
  const std::string exe = executable_path();
  if (exe.empty()) return "";
  const fs::path dir = fs::path(exe).parent_path();
  std::error_code ec;
  for (const fs::path& candidate : {dir.parent_path() / "python",                  // build/harness/srbench
                                    dir.parent_path().parent_path()})              // site-packages/srbench/bin/srbench
    if (fs::exists(candidate / "srbench" / "suite_run.py", ec)) return fs::weakly_canonical(candidate, ec).string();
  return "";
}

void run_python_model(const Suite& suite, const RunSpec& spec, const std::string& path, int threads) {
  const std::vector<std::string> argv =
      python_argv(suite, {"run", "--file", suite.file, "--run", spec.id, "--index", std::to_string(spec.index), "--out",
                          path, "--threads", std::to_string(threads), "--commit", srbench::commit()});
  std::string why;
  int status = 0;
  try {
    const pid_t pid = start_process(argv, suite.text, {{"OMP_NUM_THREADS", std::to_string(threads)}});
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (killed_by_stop_signal(status)) {
      signal(WTERMSIG(status), SIG_DFL);  // stopped with the sweep: so is this worker, the run left unfinished
      raise(WTERMSIG(status));
    }
    if (!finished_status(path).empty()) return;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kSourceChanged)
      why = "the source of " + spec.python.module + " changed after the sweep started (this run's id hashes it): run the sweep again";
    else if (WIFEXITED(status) && WEXITSTATUS(status) == kOtherBuild)
      why = "the srbench module " + argv[0] + " imports is not this binary's build (" + srbench::commit() + ")";
    else
      why = "the Python process (" + argv[0] + ") " + ProcessResult{status, "", ""}.describe() +
            " without writing the run's result; its error output is in the sweep's";
  } catch (const std::exception& e) {
    why = e.what();
  }
  RunResult r = result_of(spec);
  r.status = "failed";
  r.message = why;
  write_run_file(path, r, suite.text, nullptr);
}

void check_python_setup(const Suite& suite) {
  if (!suite.has_python_models()) return;
  const std::vector<std::string> argv = python_argv(suite, {"setup"});
  ProcessResult p;
  try {
    p = run_process(argv, "");
  } catch (const std::exception& e) {
    throw ConfigError(suite.file, 0, "python",
                      std::string(e.what()) + " (the interpreter of the suite's Python models: its `python:`, "
                      "$SRBENCH_PYTHON or /usr/bin/python3)");
  }
  const std::string mark = "srbench-setup\t";
  const auto at = p.out.rfind(mark);
  if (!p.exited_ok() || at == std::string::npos) {
    throw ConfigError(suite.file, 0, "python",
                      argv[0] + " cannot import srbench (" + p.describe() + "): build it (cmake --build build), "
                      "pip install it into that interpreter, or give the suite a `python:` that has it" +
                      error_tail(p, "\n"));
  }
  std::istringstream f(p.out.substr(at + mark.size()));
  std::string commit, where;
  std::getline(f, commit, '\t'), std::getline(f, where);
  if (commit != srbench::commit())
    throw ConfigError(suite.file, 0, "python",
                      "the srbench module " + argv[0] + " imports (" + where + ") was built from " + commit +
                      ", this binary from " + srbench::commit() + ": a Python model must train on this binary's "
                      "batch stream; rebuild, or give the suite a `python:` whose srbench is this build");
}

void check_python_models(const Suite& suite, const std::vector<const RunSpec*>& runs) {
  // one run per distinct model (its config without seed, entry and train/eval settings)
  std::set<std::string> keys;
  std::vector<const RunSpec*> distinct;  // in the suite's order: the first failure is the first written
  for (const RunSpec* r : runs)
    if (r->python.on && keys.insert(r->python.module + "|" + r->python.kwargs + "|" + r->python.device + "|" +
                                    std::to_string(r->model.vocab) + "|" + std::to_string(r->model.max_len)).second)
      distinct.push_back(r);
  if (distinct.empty()) return;
  std::vector<std::string> args = {"check", "--file", suite.file};
  std::map<std::string, const RunSpec*> by_id;
  for (const RunSpec* r : distinct) {
    args.push_back("--run");
    args.push_back(r->id);
    by_id[r->id] = r;
  }
  const std::vector<std::string> argv = python_argv(suite, args);
  ProcessResult p;
  try {
    p = run_process(argv, suite.text);
  } catch (const std::exception& e) {
    const RunSpec& r = *distinct.front();
    throw ConfigError(r.python.loc.file, r.python.loc.line, "python",
                      std::string(e.what()) + " (the suite's `python:`, $SRBENCH_PYTHON or /usr/bin/python3)");
  }
  // "srbench-check<TAB>id<TAB>ok" or "srbench-check<TAB>id<TAB>error<TAB>message" per run
  std::istringstream in(p.out);
  std::string line;
  size_t answered = 0;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string mark, id, verdict, message;
    std::getline(f, mark, '\t'), std::getline(f, id, '\t'), std::getline(f, verdict, '\t'), std::getline(f, message);
    if (mark != "srbench-check" || !by_id.count(id)) continue;
    ++answered;
    if (verdict == "ok") continue;
    const RunSpec& r = *by_id[id];
    r.python.loc.fail("model entry '" + r.model_name + "' (task entry '" + r.entry + "'): " + message);
  }
  if (answered < by_id.size() || !p.exited_ok()) {
    const RunSpec& r = *distinct.front();
    throw ConfigError(r.python.loc.file, r.python.loc.line, r.python.loc.path,
                      "could not check the Python models: " + argv[0] + " " + p.describe() + error_tail(p, ":\n"));
  }
}

}  // namespace srbench::harness::sweep
