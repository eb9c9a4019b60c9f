// Damaged results files, as a cluster leaves them (a copy cut short, a disk or network that
// flips bytes): every file srbench writes carries a checksum (common/h5.hpp), so `merge`,
// `report`, `eval` and `sweep` refuse a truncated or corrupted one with a message naming the
// file — never a crash or a hang inside HDF5's parser — and `sweep` redoes such a run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

#include "harness/results/results.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

const char* kSuite = R"(name: dmg
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 20, batch: 8, eval_every: 10, save_checkpoint: true}
  eval: {examples: 16, val_examples: 8}
tasks:
  - task: parity
    train: {length: [1, 4]}
    eval: {lengths: [4, 8]}
)";

// Mutations of a file's bytes, the same every time: truncations at spread-out lengths (nothing,
// a header, most of it) and runs of random bytes written over random places.
std::vector<std::string> mutations(const std::string& bytes, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int k = 0; k < n; ++k) {
    std::string m = bytes;
    if (k % 3 == 0) {
      m.resize(std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng));
    } else {
      const int flips = 1 << (k % 6);
      for (int f = 0; f < flips; ++f) {
        const size_t at = std::uniform_int_distribution<size_t>(0, m.size() - 1)(rng);
        const char was = m[at];
        do m[at] = static_cast<char>(rng() & 0xff);
        while (m[at] == was);
      }
    }
    out.push_back(m);
  }
  return out;
}

// A clean refusal: exit 1 or 2 (or 0 where the command may go on without the file), never a
// signal (run_srbench reports 128 + N), and a message on stderr.
void require_clean(const srbench::test::RunResult& r, const std::string& what) {
  INFO(what << ": exit " << r.exit_code << "\n" << r.out << r.err);
  REQUIRE(r.exit_code < 128);
  if (r.exit_code != 0) REQUIRE(!r.err.empty());
}

}  // namespace

TEST_CASE("damaged files: merge, report and eval refuse truncated and corrupted files cleanly", "[harness][results][damaged]") {
  TempDir dir;
  srbench::test::write_file(dir.file("dmg.yaml"), kSuite);
  const auto sweep = run_srbench({"sweep", dir.file("dmg.yaml"), "--out", dir.file("res/dmg.h5"), "--jobs", "2"});
  INFO(sweep.out << sweep.err);
  REQUIRE(sweep.exit_code == 0);
  std::vector<std::string> runs;
  for (const auto& e : fs::directory_iterator(dir.file("res/dmg/runs"))) runs.push_back(e.path().string());
  REQUIRE(runs.size() == 2);
  const std::string run_bytes = srbench::test::read_file(runs[0]);
  const std::string suite_bytes = srbench::test::read_file(dir.file("res/dmg.h5"));

  fs::create_directories(dir.file("m/runs"));
  fs::copy_file(runs[1], dir.file("m/runs/good.h5"));
  int refused_merge = 0, refused_eval = 0, refused_report = 0;
  const auto run_cases = mutations(run_bytes, 45, 1);
  for (size_t k = 0; k < run_cases.size(); ++k) {
    const std::string bad = dir.file("m/runs/bad.h5");
    srbench::test::write_file(bad, run_cases[k]);
    const auto merged = run_srbench({"merge", dir.file("m"), "--out", dir.file("m.h5")});
    require_clean(merged, "merge, mutation " + std::to_string(k));
    CHECK(merged.exit_code == 0);  // the good run is merged, the bad one skipped with a warning
    refused_merge += merged.err.find("skipping " + bad + ": run file " + bad + ": ") != std::string::npos;
    const auto eval = run_srbench({"eval", "--checkpoint", bad, "--task", "parity", "--lengths", "4", "--examples", "8"});
    require_clean(eval, "eval, mutation " + std::to_string(k));
    refused_eval += eval.exit_code == 2 && eval.err.find(bad) != std::string::npos;
  }
  const auto suite_cases = mutations(suite_bytes, 45, 2);
  for (size_t k = 0; k < suite_cases.size(); ++k) {
    srbench::test::write_file(dir.file("bad-suite.h5"), suite_cases[k]);
    const auto report = run_srbench({"report", dir.file("bad-suite.h5")});
    require_clean(report, "report, mutation " + std::to_string(k));
    refused_report += report.exit_code == 2 && report.err.find("bad-suite.h5") != std::string::npos;
  }
  // Every mutation changes the file, and every change is noticed.
  CHECK(refused_merge == 45);
  CHECK(refused_eval == 45);
  CHECK(refused_report == 45);
  // The messages say what happened.
  srbench::test::write_file(dir.file("m/runs/bad.h5"), run_bytes.substr(0, run_bytes.size() - 100));
  CHECK_THAT(run_srbench({"merge", dir.file("m"), "--out", dir.file("m.h5")}).err,
             Catch::Contains("truncated (" + std::to_string(run_bytes.size() - 612) + " of the " +
                             std::to_string(run_bytes.size() - 512) + " bytes"));
  std::string flipped = run_bytes;
  flipped[run_bytes.size() / 2] ^= 0x40;
  srbench::test::write_file(dir.file("m/runs/bad.h5"), flipped);
  CHECK_THAT(run_srbench({"merge", dir.file("m"), "--out", dir.file("m.h5")}).err,
             Catch::Contains("damaged (its contents differ from the checksum"));
}

TEST_CASE("damaged files: a sweep redoes every run whose file is truncated or corrupted", "[harness][sweep][damaged]") {
  TempDir dir;
  srbench::test::write_file(dir.file("dmg.yaml"), kSuite);
  const std::string out = dir.file("res/dmg.h5");
  REQUIRE(run_srbench({"sweep", dir.file("dmg.yaml"), "--out", out}).exit_code == 0);
  const auto first = read_suite_file(out);
  std::vector<std::string> runs;
  for (const auto& e : fs::directory_iterator(dir.file("res/dmg/runs"))) runs.push_back(e.path().string());
  std::sort(runs.begin(), runs.end());
  REQUIRE(runs.size() == 2);
  const auto bytes = srbench::test::read_file(runs[0]);
  const auto cases = mutations(bytes, 6, 3);
  for (size_t k = 0; k < cases.size(); ++k) {
    INFO("mutation " << k);
    srbench::test::write_file(runs[0], cases[k]);
    const auto again = run_srbench({"sweep", dir.file("dmg.yaml"), "--out", out});
    INFO(again.out << again.err);
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.out, Catch::Contains("1 already finished, 1 to run"));
    const auto now = read_suite_file(out);
    REQUIRE(now.runs.size() == first.runs.size());
    for (size_t i = 0; i < now.runs.size(); ++i) srbench::test::require_same_run_but_timings(first.runs[i], now.runs[i]);
  }
}
