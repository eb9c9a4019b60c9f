// `srbench slurm` without --submit, where no Slurm is needed: the scripts it writes and the input it
// refuses. (test_slurm.sh submits them to a real Slurm.)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "harness/results/results.hpp"
#include "tests/support.hpp"

using srbench::test::read_file;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

const char* kSuite = R"(name: tiny
seeds: [0, 1, 2]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 60, batch: 8, eval_every: 20}
tasks:
  - task: parity
    train: {length: [1, 4]}
  - task: flipflop
    train: {length: [1, 6]}
)";

// Runs `srbench slurm ARGS...` from folder `dir` (the scripts cd to where it was run).
srbench::test::RunResult slurm_in(const std::string& dir, std::vector<std::string> args) {
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  args.insert(args.begin(), "slurm");
  auto r = run_srbench(args);
  fs::current_path(before);
  return r;
}

}  // namespace

TEST_CASE("slurm: the array and merge scripts run srbench by absolute path, one shard a task", "[slurm]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kSuite);
  const auto r = slurm_in(dir.path(), {"tiny.yaml", "--array", "4%2", "--out", "res/tiny.h5",
                                       "--sbatch-arg=--time=00:10:00", "--sbatch-arg=--cpus-per-task=3",
                                       "--set", "train.steps=30"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("6 runs over 4 array task(s) (1-2 each, at most 2 at once)"));
  CHECK_THAT(r.out, Catch::Contains("not submitted"));
  const std::string root = fs::canonical(dir.path()).string();
  const std::string sweep = read_file(dir.file("res/tiny/slurm/sweep.sbatch"));
  const std::string merge = read_file(dir.file("res/tiny/slurm/merge.sbatch"));
  CHECK(fs::is_directory(dir.file("res/tiny/logs")));  // Slurm does not create the log folder

  CHECK_THAT(sweep, Catch::StartsWith("#!/bin/bash\n"));
  CHECK_THAT(sweep, Catch::Contains("#SBATCH --array=0-3%2\n"));
  CHECK_THAT(sweep, Catch::Contains("#SBATCH --output=" + root + "/res/tiny/logs/%A_%a.out\n"));
  CHECK_THAT(sweep, Catch::Contains("#SBATCH --time=00:10:00\n#SBATCH --cpus-per-task=3\n"));
  CHECK_THAT(sweep, Catch::Contains("cd '" + root + "'\n"));
  CHECK_THAT(sweep, Catch::Contains("\n'" + fs::canonical(SRBENCH_BIN).string() + "' sweep '" + root +
                                    "/res/tiny/slurm/suite-"));
  CHECK_THAT(sweep, Catch::Contains("--out '" + root + "/res/tiny.h5' --shard \"${SLURM_ARRAY_TASK_ID}/4\""));
  CHECK_THAT(sweep, Catch::Contains("--jobs 1 --threads \"${SLURM_CPUS_PER_TASK:-1}\" &\n"));
  // preemption and time limits: requeue, a warning 120 s before the limit
  CHECK_THAT(sweep, Catch::Contains("#SBATCH --requeue\n#SBATCH --signal=B:USR1@120\n"));
  CHECK_THAT(sweep, Catch::Contains("scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\""));

  // the merge job: after the user's options, one CPU; merges the suite folder into --out
  CHECK_THAT(merge, Catch::Contains("#SBATCH --cpus-per-task=3\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"));
  CHECK_THAT(merge, Catch::Contains("#SBATCH --output=" + root + "/res/tiny/logs/merge-%j.out\n"));
  CHECK_THAT(merge, Catch::Contains("merge '" + root + "/res/tiny' --out '" + root + "/res/tiny.h5'\n"));

  // The frozen suite carries the --set: sweeping it gives the same runs as the suite with --set.
  std::string frozen;
  for (const auto& e : fs::directory_iterator(dir.file("res/tiny/slurm")))
    if (e.path().extension() == ".yaml") frozen = e.path().string();
  REQUIRE(!frozen.empty());
  CHECK_THAT(read_file(frozen), Catch::Contains("# srbench --set train.steps=30"));
  const auto a = run_srbench({"sweep", frozen, "--dry-run", "--out", dir.file("x/tiny.h5")});
  const auto b = run_srbench({"sweep", dir.file("tiny.yaml"), "--set", "train.steps=30", "--dry-run", "--out", dir.file("x/tiny.h5")});
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("slurm: more tasks than runs become one task per run", "[slurm]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kSuite);
  const auto r = slurm_in(dir.path(), {"tiny.yaml", "--array", "10"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("using 6 array tasks"));
  CHECK_THAT(read_file(dir.file("results/tiny/slurm/sweep.sbatch")), Catch::Contains("#SBATCH --array=0-5\n"));
}

TEST_CASE("slurm: bad input is refused with exit code 2 and no script written", "[slurm]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kSuite);
  std::string bad = kSuite;
  bad.replace(bad.find("d_model"), 7, "d_modle");
  srbench::test::write_file(dir.file("bad.yaml"), bad);
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"tiny.yaml"}, "missing --array N"},
      {{"tiny.yaml", "--array", "0"}, "--array must be N or N%K"},
      {{"tiny.yaml", "--array", "3%"}, "--array must be N or N%K"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=--array=0-9"}, "--array is set by srbench slurm"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=-o/tmp/x"}, "--output is set by srbench slurm"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=--dependency=afterok:1"}, "--dependency is set by srbench slurm"},
      {{"tiny.yaml", "--array", "3", "--sbatch-arg=time=1:00"}, "--sbatch-arg must be one sbatch option"},
      {{"bad.yaml", "--array", "3"}, "did you mean 'd_model'"},
      {{"tiny.yaml", "--array", "3", "--set", "model.d_model=-4"}, "d_model"},
      {{"tiny.yaml", "--array", "3", "--out", "a-folder"}, "--out a-folder: is a folder; give the suite file, e.g. a-folder/"},
  };
  fs::create_directories(dir.file("a-folder"));
  for (const auto& c : cases) {
    const auto r = slurm_in(dir.path(), c.args);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
  CHECK(!fs::exists(dir.file("results")));
  CHECK(fs::is_empty(dir.file("a-folder")));
}

namespace {

// `bash SCRIPT` as Slurm would start an array task (its environment), in its own process group;
// `scontrol` is a stand-in on PATH that records its arguments in `scontrol_log`.
pid_t start_task(const std::string& script, const std::string& fake_bin, int restart, const std::string& log) {
  std::fflush(stdout);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(127);
    setenv("SLURM_ARRAY_TASK_ID", "0", 1), setenv("SLURM_ARRAY_TASK_MIN", "0", 1), setenv("SLURM_ARRAY_TASK_COUNT", "1", 1);
    setenv("SLURM_ARRAY_JOB_ID", "77", 1), setenv("SLURM_JOB_ID", "78", 1);
    setenv("SLURM_RESTART_COUNT", std::to_string(restart).c_str(), 1);
    setenv("PATH", (fake_bin + ":" + std::getenv("PATH")).c_str(), 1);
    execl("/bin/bash", "bash", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int wait_status(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 12000 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(10000);
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL("the array task did not end within two minutes");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs in the folder: "ok" files, and anything that is not a finished run file.
std::pair<int, std::vector<std::string>> look_runs(const std::string& runs) {
  int ok = 0;
  std::vector<std::string> other;
  if (!fs::exists(runs)) return {0, other};
  for (const auto& e : fs::directory_iterator(runs)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".h5") other.push_back(name);
    else if (srbench::harness::read_run_file(e.path().string()).status == "ok") ++ok;
    else other.push_back(name + " (not ok)");
  }
  return {ok, other};
}

}  // namespace

TEST_CASE("slurm: an array task warned of its time limit stops its sweep, requeues itself and resumes its shard; "
          "SIGTERM to the whole task (preemption, scontrol requeue) leaves nothing failed",
          "[slurm][signals]") {
  TempDir dir;
  srbench::test::write_file(dir.file("long.yaml"), R"(name: long
seeds: [0, 1, 2]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 2500, batch: 8, eval_every: 500, lr: 0.003, warmup: 5}
  eval: {examples: 32, val_examples: 16}
tasks:
  - task: parity
    train: {length: [1, 4]}
  - task: flipflop
    train: {length: [1, 6]}
)");
  REQUIRE(slurm_in(dir.path(), {"long.yaml", "--array", "1", "--out", "res/long.h5"}).exit_code == 0);
  const std::string script = dir.file("res/long/slurm/sweep.sbatch"), runs = dir.file("res/long/runs");
  fs::create_directories(dir.file("bin"));
  srbench::test::write_file(dir.file("bin/scontrol"), "#!/bin/sh\necho \"$@\" >> '" + dir.file("scontrol.log") + "'\n");
  fs::permissions(dir.file("bin/scontrol"), fs::perms::owner_all);
  auto started_runs = [&](pid_t task) {  // waits until the sweep has a run process (or a run is done)
    for (int i = 0; i < 3000; ++i) {
      if (fs::exists(runs) && !fs::is_empty(runs)) return;
      usleep(10000);
    }
    kill(-task, SIGKILL);
    FAIL("no run started");
  };

  // The warning (USR1 to the batch shell, as --signal=B:USR1@120 sends it).
  pid_t task = start_task(script, dir.file("bin"), 0, dir.file("task.log"));
  started_runs(task);
  usleep(800000);
  kill(task, SIGUSR1);
  int code = wait_status(task);
  std::string log = read_file(dir.file("task.log"));
  INFO(log);
  CHECK(code == 143);  // the sweep's own code: stopped by SIGTERM
  CHECK_THAT(log, Catch::Contains("interrupted by SIGTERM") && Catch::Contains("requeueing 77_0"));
  CHECK(read_file(dir.file("scontrol.log")) == "requeue 77_0\n");
  auto [ok, other] = look_runs(runs);
  CHECK(other.empty());
  CHECK(ok < 6);

  // SIGTERM to every process of the task, as Slurm stops a job step: no requeue of its own.
  task = start_task(script, dir.file("bin"), 1, dir.file("task.log"));
  usleep(1500000);
  kill(-task, SIGTERM);
  code = wait_status(task);
  log = read_file(dir.file("task.log"));
  INFO(log);
  CHECK(code == 143);
  CHECK(read_file(dir.file("scontrol.log")) == "requeue 77_0\n");
  std::tie(ok, other) = look_runs(runs);
  CHECK(other.empty());

  // Requeued: the same script again resumes the shard and completes it.
  task = start_task(script, dir.file("bin"), 2, dir.file("task.log"));
  code = wait_status(task);
  log = read_file(dir.file("task.log"));
  INFO(log);
  CHECK(code == 0);
  CHECK_THAT(log, Catch::Contains("already finished"));
  std::tie(ok, other) = look_runs(runs);
  CHECK(ok == 6);
  CHECK(other.empty());
}
