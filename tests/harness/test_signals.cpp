// Signals to a sweep, as a cluster and a terminal send them: SIGTERM (Slurm's preemption, time
// limit, scancel), SIGINT (Ctrl-C), SIGHUP (a closed terminal), delivered to the sweep, to its
// run processes, or to both in either order, at moments spread over a sweep. None may record a
// run as failed or leave a temporary file or claim; the sweep exits 128 + the signal; re-running
// it completes the suite with results identical to a sweep never interrupted. A run process that
// really crashes is still recorded failed, and the sweep then exits 3.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "common/process.hpp"
#include "harness/results/results.hpp"
#include "harness/sweep/children.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Twelve runs of about a second each.
const std::string kSuite = srbench::test::tiny_suite({.name = "sig", .steps = 2500, .eval_every = 500});
constexpr size_t kRuns = 12;

// `srbench ARGS` started in its own process group, its output to `log`, signal dispositions
// as given (`ignore`: a signal set to SIG_IGN before exec, as nohup does; 0 for none).
pid_t start_srbench(const std::vector<std::string>& args, const std::string& log, int ignore = 0) {
  std::fflush(stdout);  // the child's copy of unwritten output must not be written twice
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(127);
    if (ignore) signal(ignore, SIG_IGN);
    std::vector<char*> argv = {const_cast<char*>(SRBENCH_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(SRBENCH_BIN, argv.data());
    _exit(127);
  }
  return pid;
}

// The run processes of sweep `pid` now.
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

// CPU time (user + system, in clock ticks: fields 14 and 15 of /proc/PID/stat) `pid` has used so
// far; -1 if it is gone.
long cpu_ticks(pid_t pid) {
  const std::vector<std::string> f = srbench::proc_stat_fields(pid);
  return f.size() > 15 - 3 ? std::stol(f[14 - 3]) + std::stol(f[15 - 3]) : -1;
}

// Waits for `pid` (at most two minutes); its wait status.
int wait_for(pid_t pid) {
  const auto deadline = Clock::now() + std::chrono::minutes(2);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL("srbench did not end within two minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

// What a results folder holds: finished run files (with their status), temporaries, claims.
struct Folder {
  std::map<std::string, std::string> status;
  std::vector<std::string> leftovers;
};
Folder look(const std::string& runs) {
  const auto listed = srbench::test::list_runs_folder(runs);
  Folder f{{}, listed.leftovers};
  for (const auto& name : listed.finished) f.status[name] = read_run_file(runs + "/" + name).status;
  return f;
}

// Every run of two suite files equal, timings aside; and scripts/compare_h5.py agrees.
void require_same_suite_files_checked(const std::string& a, const std::string& b) {
  srbench::test::require_same_suite_files(a, b);
  const std::string cmd = "/usr/bin/python3 '" SRBENCH_SOURCE_DIR "/scripts/compare_h5.py' '" + a + "' '" + b + "' >/dev/null";
  CHECK(std::system(cmd.c_str()) == 0);
}

}  // namespace

TEST_CASE("signals: SIGTERM, SIGINT, SIGHUP to the sweep, its runs, or both in either order leave nothing failed, "
          "and the resumed sweep equals an uninterrupted one",
          "[harness][sweep][signals]") {
  TempDir dir;
  srbench::test::write_file(dir.file("sig.yaml"), kSuite);
  const auto ref_start = Clock::now();
  const auto ref = run_srbench({"sweep", dir.file("sig.yaml"), "--out", dir.file("ref/sig.h5"), "--jobs", "2"});
  INFO(ref.out << ref.err);
  REQUIRE(ref.exit_code == 0);
  // The signal comes at a random moment after the first run process starts, within half the time
  // the six or more runs left take (half the uninterrupted sweep), and never later than a second:
  // on a fast machine a fixed second outlasted them and the sweep finished before its signal.
  const auto ref_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - ref_start).count();
  const int max_wait_ms = static_cast<int>(std::clamp<long long>(ref_ms / 4, 0, 1000));

  enum Target { Sweep, OneRun, RunsThenSweep, SweepThenRuns, Group };
  const char* target_name[] = {"the sweep", "one run process", "the run processes, then the sweep",
                               "the sweep, then the run processes", "the whole process group"};
  std::mt19937 rng(20261201);
  std::vector<std::string> folders;
  int rounds = 0, folder = -1;
  for (int sig : {SIGTERM, SIGINT, SIGHUP})
    for (Target target : {Sweep, OneRun, RunsThenSweep, SweepThenRuns, Group}) {
      // A fresh folder when the current one is nearly complete, so that every signal finds runs to stop.
      if (folder < 0 || look(folders.back() + "/sig/runs").status.size() + 6 > kRuns) {
        folders.push_back(dir.file("f" + std::to_string(++folder)));
      }
      const std::string out = folders.back() + "/sig.h5", runs = folders.back() + "/sig/runs";
      const size_t before = look(runs).status.size();
      const pid_t pid = start_srbench({"sweep", dir.file("sig.yaml"), "--out", out, "--jobs", "2"}, dir.file("round.log"));
      // A moment from the first run process's start to max_wait_ms after it (six runs or more are left).
      std::vector<pid_t> runs_now;
      for (int i = 0; i < 1000 && runs_now.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        runs_now = children_of(pid);
      }
      REQUIRE(!runs_now.empty());
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, max_wait_ms)(rng)));
      runs_now = children_of(pid);
      switch (target) {
        case Sweep: kill(pid, sig); break;
        case OneRun:
          if (runs_now.empty()) kill(pid, sig);  // between two runs: none to hit
          else kill(runs_now.front(), sig);
          break;
        case RunsThenSweep:
          for (pid_t c : runs_now) kill(c, sig);
          kill(pid, sig);
          break;
        case SweepThenRuns:
          kill(pid, sig);
          for (pid_t c : runs_now) kill(c, sig);
          break;
        case Group: kill(-pid, sig); break;
      }
      const int status = wait_for(pid);
      const std::string log = srbench::test::read_file(dir.file("round.log"));
      ++rounds;
      INFO("round " << rounds << ": " << strsignal(sig) << " to " << target_name[target] << "\n" << log);
      REQUIRE(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 128 + sig);
      CHECK_THAT(log, Catch::Contains("interrupted by SIG"));
      const Folder f = look(runs);
      CHECK(f.leftovers.empty());
      for (const auto& [file, s] : f.status) {
        INFO(file);
        CHECK(s == "ok");
      }
      CHECK(f.status.size() >= before);
      CHECK(!fs::exists(out));  // an interrupted sweep writes no suite file
    }
  CHECK(rounds == 15);
  for (const auto& f : folders) {
    INFO("folder " << f);
    const auto again = run_srbench({"sweep", dir.file("sig.yaml"), "--out", f + "/sig.h5", "--jobs", "2"});
    INFO(again.out << again.err);
    REQUIRE(again.exit_code == 0);
    CHECK(look(f + "/sig/runs").leftovers.empty());
    require_same_suite_files_checked(dir.file("ref/sig.h5"), f + "/sig.h5");
  }
}

TEST_CASE("signals: a run process that crashes is recorded failed, the others finish, the sweep exits 3",
          "[harness][sweep][signals]") {
  TempDir dir;
  srbench::test::write_file(dir.file("sig.yaml"), kSuite);
  const pid_t pid = start_srbench({"sweep", dir.file("sig.yaml"), "--out", dir.file("r/sig.h5"), "--jobs", "2"}, dir.file("log"));
  // A worker that is running a run: one that has used 30 ms of CPU and is using more. (A worker
  // is a child from its fork on, before the sweep hands it a run; one killed then, or between two
  // runs, costs no run — on a loaded machine the first child seen was sometimes such a one.)
  pid_t victim = 0;
  for (int i = 0; i < 2000 && victim == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (pid_t c : children_of(pid)) {
      const long before = cpu_ticks(c);
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
      const long after = cpu_ticks(c);
      if (before >= sysconf(_SC_CLK_TCK) * 3 / 100 && after > before) {
        victim = c;
        break;
      }
    }
  }
  REQUIRE(victim != 0);
  kill(victim, SIGSEGV);
  const int status = wait_for(pid);
  const std::string log = srbench::test::read_file(dir.file("log"));
  INFO(log);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  CHECK_THAT(log, Catch::Contains("failed (the run process killed by signal 11 (SIGSEGV) before writing its result)"));
  const auto suite = read_suite_file(dir.file("r/sig.h5"));
  REQUIRE(suite.runs.size() == kRuns);
  int failed = 0;
  for (const auto& r : suite.runs) failed += r.status == "failed";
  CHECK(failed == 1);
  // The failed run stays recorded: a re-run skips it and still says so with exit code 3.
  const auto again = run_srbench({"sweep", dir.file("sig.yaml"), "--out", dir.file("r/sig.h5")});
  CHECK(again.exit_code == 3);
  CHECK_THAT(again.out, Catch::Contains("12 already finished, 0 to run") && Catch::Contains("1 run(s) FAILED"));
}

// Sweep `pid` to its end: the wait status, and every process it had as its child meanwhile
// (sampled every 2 ms); `kill_after_ms` > 0: the first child seen is killed with SIGKILL that long
// after it was first seen.
int watch_children(pid_t pid, std::set<pid_t>& seen, int kill_after_ms = 0) {
  const auto deadline = Clock::now() + std::chrono::minutes(2);
  int status = 0;
  Clock::time_point first_seen;
  pid_t first = 0;
  bool killed = false;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL("srbench did not end within two minutes");
    }
    for (pid_t c : children_of(pid)) {
      if (seen.insert(c).second && !first) first = c, first_seen = Clock::now();
    }
    if (kill_after_ms > 0 && first && !killed && Clock::now() - first_seen > std::chrono::milliseconds(kill_after_ms)) {
      kill(first, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status;
}

TEST_CASE("signals: one worker process takes a sweep's runs one after another (--jobs 1); a worker killed "
          "mid-run costs that run only, a new worker takes the rest",
          "[harness][sweep][signals]") {
  TempDir dir;
  srbench::test::write_file(dir.file("w.yaml"), srbench::test::tiny_suite({.name = "w", .steps = 300, .eval_every = 300}));
  std::set<pid_t> seen;
  const int status = watch_children(
      start_srbench({"sweep", dir.file("w.yaml"), "--out", dir.file("r/w.h5"), "--jobs", "1"}, dir.file("log")), seen);
  INFO(srbench::test::read_file(dir.file("log")));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto suite = read_suite_file(dir.file("r/w.h5"));
  REQUIRE(suite.runs.size() == kRuns);
  for (const auto& r : suite.runs) CHECK(r.status == "ok");
  CHECK(seen.size() == 1);  // a process per run would show up to 12

  // Four runs of about a second, the first worker killed 0.3 s after it started: in a run.
  srbench::test::write_file(dir.file("k.yaml"), srbench::test::tiny_suite({.name = "k", .seeds = "[0]", .steps = 2500,
                                                                           .eval_every = 500}));
  std::set<pid_t> workers;
  const int killed_status = watch_children(
      start_srbench({"sweep", dir.file("k.yaml"), "--out", dir.file("k/k.h5"), "--jobs", "1"}, dir.file("log2")),
      workers, 300);
  INFO(srbench::test::read_file(dir.file("log2")));
  REQUIRE(WIFEXITED(killed_status));
  CHECK(WEXITSTATUS(killed_status) == 3);  // a run failed
  const auto killed = read_suite_file(dir.file("k/k.h5"));
  REQUIRE(killed.runs.size() == 4);
  int failed = 0;
  for (const auto& r : killed.runs) {
    if (r.status == "ok") continue;
    ++failed;
    CHECK(r.status == "failed");
    CHECK_THAT(r.message, Catch::Contains("killed by signal 9 (SIGKILL)"));
  }
  CHECK(failed == 1);
  CHECK(workers.size() == 2);
}

TEST_CASE("signals: a signal the sweep was started with ignored (nohup: SIGHUP) stays ignored",
          "[harness][sweep][signals]") {
  TempDir dir;
  srbench::test::write_file(dir.file("sig.yaml"),
                            srbench::test::tiny_suite({.name = "sig", .seeds = "[0]", .steps = 2500, .eval_every = 500}));
  const pid_t pid =
      start_srbench({"sweep", dir.file("sig.yaml"), "--out", dir.file("r/sig.h5"), "--jobs", "2"}, dir.file("log"), SIGHUP);
  std::vector<pid_t> runs_now;
  for (int i = 0; i < 1000 && runs_now.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    runs_now = children_of(pid);
  }
  kill(-pid, SIGHUP);
  const int status = wait_for(pid);
  INFO(srbench::test::read_file(dir.file("log")));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_suite_file(dir.file("r/sig.h5")).runs.size() == 4);
}

TEST_CASE("signals: a worker's answer that arrives while the sweep looks at another run's is taken at once, not a "
          "second later", "[signals]") {
  // Item 0 ends at once; its report (done) waits until item 1's worker has answered and signalled
  // (SIGCHLD), so that signal is pending when the sweep looks for stop signals at the top of its
  // loop. That look used to take the SIGCHLD with the stop signals and drop it: the sweep then
  // waited its full second for a signal already taken, with item 1's answer on its socket.
  TempDir dir;
  const std::string reporting = dir.file("item0-reported"), answered = dir.file("item1-answering");
  StopSignals signals;
  std::vector<size_t> order;
  const auto t0 = Clock::now();
  const Stop stop = run_in_children(
      2, 2, signals,
      {.start = [](size_t) { return Start::Now; },
       .child =
           [&](size_t i) {
             if (i != 1) return;
             while (!fs::exists(reporting)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
             srbench::test::write_file(answered, "");  // its answer and SIGCHLD follow at once
           },
       .started = {},
       .done =
           [&](size_t i, pid_t, int status, double, bool) {
             order.push_back(i);
             CHECK(status == 0);
             if (i == 0) {
               srbench::test::write_file(reporting, "");
               while (!fs::exists(answered)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
               std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its send and kill land
             }
             return Stop{};
           },
       .tick = {},
       .waiting = {}});
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK(!stop);
  CHECK(order == std::vector<size_t>{0, 1});
  // About 0.1 s; dropping the signal costs the second that wait(1000) waits for it.
  CHECK(secs < 0.9);
}
