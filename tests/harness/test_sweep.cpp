// `srbench sweep` as a user runs it: resumption after SIGKILL, truncated run files redone,
// shards merged, a diverging run recorded while the sweep completes, thread-count independence
// (with a second thread shown to run the backward pass: tests/harness/omp_probe).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "harness/results/results.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::require_same_run;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kTiny = srbench::test::tiny_suite({.name = "tiny", .seeds = "[0, 1]"});

// A suite whose training steps cross the parallel thresholds of model/layers.cpp: batches of 32
// examples of 9–16 tokens (B·T > 256 rows: the row loops, and two row halves of every linear
// layer), d_model 48 (> 32 input features: two halves of every weight gradient; GeLU over
// B·T·4d >= 65536 elements), attention over B·H·T²·hs >= 65536 multiply-adds; learned positions
// with LayerNorm, RoPE with RMSNorm.
const char* kParallel = R"(name: parallel
seeds: [0]
defaults:
  model: {layers: 2, d_model: 48, heads: 2, max_len: 64}
  train: {steps: 40, batch: 32, eval_every: 20, lr: 0.003, warmup: 5}
  eval: {examples: 32, val_examples: 16}
tasks:
  - task: parity
    train: {length: [9, 16]}
    eval: {lengths: [16, 32]}
  - task: flipflop
    train: {length: [9, 16]}
    eval: {lengths: [16, 32]}
models:
  - name: learned
  - name: rope-rms
    model: {position: rope, norm: rms}
)";

// Sets an environment variable for the commands a test runs, restored when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Runs `srbench ARGS` with tests/harness/omp_probe preloaded; returns the result and the parallel
// regions of srbench that a second OpenMP thread ran, by their functions' names (`nm -C`).
std::pair<srbench::test::RunResult, std::set<std::string>> run_srbench_probed(const std::vector<std::string>& args,
                                                                              const std::string& probe_file) {
  std::set<std::string> regions;
  srbench::test::RunResult r;
  {
    const ScopedEnv preload("LD_PRELOAD", SRBENCH_OMP_PROBE_LIB), out("SRBENCH_OMP_PROBE", probe_file);
    r = run_srbench(args);
  }
  std::map<uint64_t, std::vector<std::string>> names;  // srbench's symbols by address
  FILE* nm = popen(("nm -C --defined-only '" + std::string(SRBENCH_BIN) + "'").c_str(), "r");
  REQUIRE(nm);
  char line[8192];
  while (std::fgets(line, sizeof line, nm)) {
    char* end = nullptr;
    const uint64_t address = std::strtoull(line, &end, 16);
    if (end == line || std::strlen(end) < 4) continue;
    std::string name(end + 3);  // after " t "
    if (!name.empty() && name.back() == '\n') name.pop_back();
    names[address].push_back(name);
  }
  REQUIRE(pclose(nm) == 0);
  std::istringstream probe(srbench::test::read_file(probe_file));
  for (std::string entry; std::getline(probe, entry);) {
    const size_t tab = entry.find('\t');
    if (tab == std::string::npos || tab + 1 != entry.size()) continue;  // not srbench itself
    const auto it = names.find(std::stoull(entry.substr(0, tab), nullptr, 16));
    INFO("probe line " << entry);
    REQUIRE(it != names.end());
    regions.insert(it->second.begin(), it->second.end());
  }
  return {r, regions};
}

// How many of `regions` are lambdas of model/layers.cpp's float `function` (parallel_for bodies).
size_t regions_of(const std::set<std::string>& regions, const std::string& function) {
  const std::string key = "srbench::model::" + function + "<float>(";
  return std::count_if(regions.begin(), regions.end(),
                       [&](const std::string& r) { return r.find(key) != std::string::npos && r.find("::{lambda(") != std::string::npos; });
}

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
    srbench::test::check_same_metrics(x.metrics, y.metrics);
  }
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
  // every run records the build that ran it: what `srbench --version` prints
  const auto version = run_srbench({"--version"});
  REQUIRE(version.exit_code == 0);
  const auto at = version.out.find("build: ");
  REQUIRE(at != std::string::npos);
  const std::string build = version.out.substr(at + 7, version.out.find('\n', at) - at - 7);
  CHECK_THAT(build, (Catch::StartsWith("GCC ") || Catch::StartsWith("Clang ")) && Catch::Contains("-O"));
  for (const auto& run : read_suite_file(out).runs) CHECK(run.build == build);
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

TEST_CASE("sweep: --out naming a folder is refused before any run starts", "[harness][sweep]") {
  TempDir dir;
  srbench::test::write_file(dir.file("tiny.yaml"), kTiny);
  fs::create_directories(dir.file("res"));
  for (const bool dry : {false, true}) {
    std::vector<std::string> args = {"sweep", dir.file("tiny.yaml"), "--out", dir.file("res")};
    if (dry) args.push_back("--dry-run");
    const auto r = run_srbench(args);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--out " + dir.file("res") + ": is a folder") &&
                          Catch::Contains(dir.file("res") + "/tiny.h5"));
    CHECK_FALSE(fs::exists(dir.path() + "/tiny"));  // no run folder beside it, no run trained
    CHECK(fs::is_empty(dir.file("res")));
  }
}

TEST_CASE("sweep: killed with SIGKILL mid-way, the re-run loses and duplicates nothing", "[harness][sweep]") {
  TempDir ref_dir, dir;
  const std::string slow = srbench::test::tiny_suite({.name = "tiny", .seeds = "[0, 1]", .steps = 600});
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
  while (srbench::test::list_runs_folder(runs).finished.size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const size_t done = srbench::test::list_runs_folder(runs).finished.size();
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

TEST_CASE("sweep: results are identical with 1 and 2 threads per run, the backward pass run on both",
          "[harness][sweep]") {
  TempDir dir;
  srbench::test::write_file(dir.file("parallel.yaml"), kParallel);
  // Threads that sleep while they wait (the results do not depend on it): spinning ones would
  // take minutes on a busy 2-core machine.
  const ScopedEnv passive("OMP_WAIT_POLICY", "PASSIVE");
  const auto [one, one_regions] = run_srbench_probed(
      {"sweep", dir.file("parallel.yaml"), "--out", dir.file("t1/p.h5"), "--jobs", "1", "--threads", "1"}, dir.file("t1.probe"));
  const auto [two, two_regions] = run_srbench_probed(
      {"sweep", dir.file("parallel.yaml"), "--out", dir.file("t2/p.h5"), "--jobs", "1", "--threads", "2"}, dir.file("t2.probe"));
  for (const auto* r : {&one, &two}) {
    INFO(r->out << r->err);
    REQUIRE(r->exit_code == 0);
  }

  // A second thread ran: never with --threads 1; with --threads 2 in each of these parallel loops
  // of the training step's backward pass (matmul_backward has two: row halves of the input
  // gradient, input-feature halves of the weight gradient).
  CHECK(one_regions.empty());
  for (const char* f : {"encoder_backward", "layernorm_backward", "rmsnorm_backward", "rope_backward",
                        "attention_backward", "gelu_backward", "crossentropy_forward_backward"}) {
    INFO(f);
    CHECK(regions_of(two_regions, f) >= 1);
  }
  CHECK(regions_of(two_regions, "matmul_backward") == 2);

  // ... and the results are the same bits: every field of every run but the timings (summary,
  // curve, evaluation rows, metrics, diagnostics).
  require_same_rows(rows_of(dir.file("t1/p.h5")), rows_of(dir.file("t2/p.h5")));
  REQUIRE(read_suite_file(dir.file("t1/p.h5")).runs.size() == 4);
  srbench::test::require_same_suite_files(dir.file("t1/p.h5"), dir.file("t2/p.h5"));
}

TEST_CASE("eval: a run saved with save_checkpoint reproduces its evaluation rows", "[harness][sweep][eval]") {
  TempDir dir;
  const std::string run_file = srbench::test::check_eval_reproduces_run(dir, "{layers: 1, d_model: 16, heads: 2, max_len: 64}");
  // errors: a task whose vocabulary does not match, a length beyond max_len
  auto bad = run_srbench({"eval", "--checkpoint", run_file, "--task", "parity", "--lengths", "8"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("vocabulary"));
  bad = run_srbench({"eval", "--checkpoint", run_file, "--task", "flipflop", "--lengths", "100"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("max_len"));
  // not a length: zero, a word, past an int (4294967304 would wrap to 8)
  for (const char* text : {"0", "8x", "4294967304"}) {
    INFO("--lengths " << text);
    bad = run_srbench({"eval", "--checkpoint", run_file, "--task", "flipflop", "--lengths", text});
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains(std::string("--lengths: '") + text + "' is not a length >= 1"));
  }
}
