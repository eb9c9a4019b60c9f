// `srbench sweep` as a user runs it: resumption after SIGKILL, truncated run files redone,
// shards merged, a diverging run recorded while the sweep completes, thread-count independence.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <thread>

#include "harness/results/results.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

const char* kTiny = R"(name: tiny
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 60, batch: 8, eval_every: 20, lr: 0.003, warmup: 5}
  eval: {examples: 32, val_examples: 16}
tasks:
  - task: parity
    train: {length: [1, 4]}
    eval: {lengths: [4, 8], shifts: [{p1: 0.9}]}
  - task: flipflop
    train: {length: [1, 6]}
    eval: {lengths: [6, 12]}
models:
  - name: learned
  - name: alibi
    model: {position: alibi}
)";

// The summary rows by run id, all fields but the timings.
std::map<std::string, SummaryRow> rows_of(const std::string& suite_file) {
  std::map<std::string, SummaryRow> out;
  for (auto r : read_suite_file(suite_file).summary) {
    r.wall_s = 0, r.tokens_per_s = 0;
    REQUIRE(out.count(r.run_id) == 0);  // no run twice
    out[r.run_id] = r;
  }
  return out;
}

bool same_double(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void require_same_rows(const std::map<std::string, SummaryRow>& a, const std::map<std::string, SummaryRow>& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [id, x] : a) {
    INFO("run " << id);
    REQUIRE(b.count(id) == 1);
    const SummaryRow& y = b.at(id);
    CHECK(x.task == y.task);
    CHECK(x.entry == y.entry);
    CHECK(x.model == y.model);
    CHECK(x.seed == y.seed);
    CHECK(x.grid == y.grid);
    CHECK(x.status == y.status);
    CHECK(same_double(x.id_acc, y.id_acc));
    CHECK(same_double(x.ood_length_acc, y.ood_length_acc));
    CHECK(same_double(x.shift_acc, y.shift_acc));
    CHECK(same_double(x.shortcut_gap, y.shortcut_gap));
    CHECK(x.steps_to_target == y.steps_to_target);
    CHECK(same_double(x.final_train_loss, y.final_train_loss));
  }
}

size_t count_run_files(const std::string& dir) {
  if (!fs::exists(dir)) return 0;
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".h5" && e.path().string().find(".tmp") == std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("sweep: finishes, writes the suite file, and a re-run skips every finished run", "[harness][sweep]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kTiny);
  const std::string out = dir.file("res/tiny.h5");
  auto r = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", out, "--jobs", "2"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("[8/8]") && Catch::Contains("ETA"));
  const auto first = rows_of(out);
  REQUIRE(first.size() == 8);
  for (const auto& [id, row] : first) {
    CHECK(row.status == "ok");
    CHECK(fs::exists(dir.file("res/tiny/runs/" + id + ".h5")));
  }
  r = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", out});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("8 already finished, 0 to run"));
  require_same_rows(first, rows_of(out));

  // A truncated run file does not open cleanly: the next sweep redoes that run, and only it.
  const std::string victim = dir.file("res/tiny/runs/" + first.begin()->first + ".h5");
  fs::resize_file(victim, fs::file_size(victim) / 2);
  r = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", out});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("7 already finished, 1 to run"));
  require_same_rows(first, rows_of(out));
}

TEST_CASE("sweep: killed with SIGKILL mid-way, the re-run loses and duplicates nothing", "[harness][sweep]") {
  TempDir ref_dir, dir;
  std::string slow = kTiny;
  slow.replace(slow.find("steps: 60"), 9, "steps: 600");
  srbench::test::write_file(ref_dir.file("tiny.yaml"), slow);
  srbench::test::write_file(dir.file("tiny.yaml"), slow);
  const auto ref = run_srbench({"sweep", ref_dir.file("tiny.yaml"), "--out", ref_dir.file("res/tiny.h5"), "--jobs", "2"});
  REQUIRE(ref.exit_code == 0);

  const std::string out = dir.file("res/tiny.h5"), runs = dir.file("res/tiny/runs");
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    execl(SRBENCH_BIN, SRBENCH_BIN, "sweep", dir.file("tiny.yaml").c_str(), "--out", out.c_str(), "--jobs", "1", nullptr);
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (count_run_files(runs) < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const size_t done = count_run_files(runs);
  INFO("run files when killed: " << done);
  REQUIRE(done >= 2);
  REQUIRE(done < 8);
  CHECK(!fs::exists(out));

  const auto again = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", out, "--jobs", "2"});
  INFO(again.out << again.err);
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains(std::to_string(done) + " already finished"));
  require_same_rows(rows_of(ref_dir.file("res/tiny.h5")), rows_of(out));
}

TEST_CASE("sweep: two shards run concurrently, then merge, equal one plain sweep", "[harness][sweep]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kTiny);
  const auto plain = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", dir.file("plain/tiny.h5"), "--jobs", "2"});
  REQUIRE(plain.exit_code == 0);
  const std::string out = dir.file("sharded/tiny.h5");
  srbench::test::RunResult a, b;
  std::thread ta([&] { a = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", out, "--shard", "0/2", "--jobs", "1"}); });
  std::thread tb([&] { b = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", out, "--shard", "1/2", "--jobs", "1"}); });
  ta.join();
  tb.join();
  INFO(a.out << a.err << b.out << b.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK_THAT(a.out, Catch::Contains("4 runs (shard 0/2)"));
  CHECK(!fs::exists(out));  // shards leave the suite file to merge
  const auto m = run_srbench({"merge", dir.file("sharded/tiny"), "--out", out});
  INFO(m.out << m.err);
  REQUIRE(m.exit_code == 0);
  require_same_rows(rows_of(dir.file("plain/tiny.h5")), rows_of(out));
}

TEST_CASE("sweep: a diverging run is recorded as diverged and the sweep completes", "[harness][sweep]") {
  TempDir dir;
  std::string text = kTiny;
  text += "  - name: huge-lr\n    train: {lr: 1e30, clip: 0, warmup: 0}\n";
  srbench::test::write_file(dir.file("tiny.yaml"), text);
  const auto r = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", dir.file("res/tiny.h5"), "--jobs", "2"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = rows_of(dir.file("res/tiny.h5"));
  REQUIRE(rows.size() == 12);
  int diverged = 0, ok = 0;
  for (const auto& [id, row] : rows) {
    if (row.model == "huge-lr") {
      CHECK(row.status == "diverged");
      diverged += row.status == "diverged";
    } else {
      CHECK(row.status == "ok");
      ok += row.status == "ok";
    }
  }
  CHECK(diverged == 4);
  CHECK(ok == 8);
  CHECK_THAT(r.out, Catch::Contains("diverged (non-finite"));
}

TEST_CASE("sweep: results are identical with 1 and 2 threads per run", "[harness][sweep]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kTiny);
  const auto one = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", dir.file("t1/tiny.h5"), "--jobs", "1", "--threads", "1"});
  const auto two = run_srbench({"sweep", dir.file("tiny.yaml"), "--out", dir.file("t2/tiny.h5"), "--jobs", "1", "--threads", "2"});
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  require_same_rows(rows_of(dir.file("t1/tiny.h5")), rows_of(dir.file("t2/tiny.h5")));
}

TEST_CASE("eval: a run saved with save_checkpoint reproduces its evaluation rows", "[harness][sweep][eval]") {
  TempDir dir;
  srbench::test::write_file(dir.file("s.yaml"), R"(name: ev
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 64}
  train: {steps: 100, batch: 16, eval_every: 50, lr: 0.003, save_checkpoint: true}
  eval: {examples: 64, val_examples: 32}
tasks:
  - task: flipflop
    train: {length: [1, 8]}
    eval: {lengths: [8, 16], shifts: [{p_write: 0.1}]}
)");
  REQUIRE(run_srbench({"sweep", dir.file("s.yaml"), "--out", dir.file("r/ev.h5")}).exit_code == 0);
  const auto suite = read_suite_file(dir.file("r/ev.h5"));
  REQUIRE(suite.runs.size() == 1);
  const RunResult& run = suite.runs[0];
  const std::string run_file = dir.file("r/ev/runs/" + run.run_id + ".h5");
  const auto e = run_srbench({"eval", "--checkpoint", run_file, "--task", "flipflop", "--lengths", "8,16", "--shift",
                              "p_write=0.1", "--examples", "64"});
  INFO(e.out << e.err);
  REQUIRE(e.exit_code == 0);
  // One printed line per row of the run's own evaluation, with the same numbers (4 decimals).
  for (const auto& row : run.eval) {
    char line[160];
    std::snprintf(line, sizeof line, "%-8lld %-20s %10.4f %10.4f %10.4f", static_cast<long long>(row.length),
                  run.conditions[row.condition].c_str(), row.loss, row.token_acc, row.seq_acc);
    CHECK_THAT(e.out, Catch::Contains(line));
  }
  // errors: a task whose vocabulary does not match, a length beyond max_len
  auto bad = run_srbench({"eval", "--checkpoint", run_file, "--task", "parity", "--lengths", "8"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("vocabulary"));
  bad = run_srbench({"eval", "--checkpoint", run_file, "--task", "flipflop", "--lengths", "100"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("max_len"));
}
