// Helpers shared by the harness tests.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "harness/core/metric_fields.hpp"
#include "harness/core/records.hpp"
#include "harness/results/results.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/splines.hpp"
#include "tests/support.hpp"

namespace srbench::test {

// The ConfigError message for a suite `text` read as "s.yaml", as the commands report it (the
// suite parsed, then its splines files read), or "" if it validated.
inline std::string config_error_of(const std::string& text) {
  try {
    harness::Suite suite = harness::parse_suite(text, "s.yaml");
    harness::resolve_splines_files(suite);
  } catch (const harness::ConfigError& e) {
    return e.what();
  }
  return "";
}

// The suite file of run files `paths` (read in that order), with no splines and no transfer.
inline void write_suite_file_of(const std::string& out, const std::string& suite_yaml,
                                const std::vector<std::string>& paths) {
  std::vector<harness::RunFile> files;
  for (const auto& p : paths) files.push_back(harness::read_run_file_at(p));
  harness::write_suite_file(out, suite_yaml, files, {}, {});
}

// Equal, with NaN equal to NaN.
// The first run of model entry `model` in `s` (fails the test when there is none).
inline const harness::RunSpec& run_of(const harness::Suite& s, const std::string& model) {
  for (const auto& r : s.runs)
    if (r.model_name == model) return r;
  FAIL("no run of model entry " << model);
  return s.runs.front();
}

// `text` with the first `from` replaced by `to` (`from` must occur).
// A hand-made run for the report tests: task entry "parity", conditions id and p1=0.9, its
// evaluation rows {length, condition, loss, token_acc, seq_acc}; run id model + seed.
inline harness::RunResult hand_run(const std::string& model, uint64_t seed, std::vector<harness::EvalRow> eval) {
  harness::RunResult r;
  r.run_id = model + std::to_string(seed);
  r.task = r.entry = "parity";
  r.model = model;
  r.seed = seed;
  r.conditions = {"id", "p1=0.9"};
  r.eval = std::move(eval);
  return r;
}

inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

inline bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
inline bool same(int64_t a, int64_t b) { return a == b; }
inline bool same_vec(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!same(x[i], y[i])) return false;
  return true;
}

// Every metric of metric_fields() equal (NaN equal to NaN), each checked by name.
inline void check_same_metrics(const harness::RunMetrics& a, const harness::RunMetrics& b) {
  for (const auto& f : harness::metric_fields()) {
    INFO("metric " << f.name << ": " << f.value(a) << " vs " << f.value(b));
    std::visit([&](auto member) { CHECK(same(a.*member, b.*member)); }, f.member);
  }
}

// Sets every metric of metric_fields() to a value of its own (none its default), `base` apart
// from another run's: what a round trip must carry.
inline void set_every_metric(harness::RunMetrics& m, double base) {
  int64_t i = 1;
  for (const auto& f : harness::metric_fields()) {
    std::visit([&](auto member) {
      using T = std::remove_reference_t<decltype(m.*member)>;
      m.*member = std::is_same_v<T, int64_t> ? static_cast<T>(100 * i + static_cast<int64_t>(base))
                                             : static_cast<T>(base + 0.0625 * static_cast<double>(i));
    }, f.member);
    ++i;
  }
}

// Two sets of diagnostics equal in shape and every value (NaN equal to NaN), each field checked.
inline void check_same_diag(const harness::Diagnostics& a, const harness::Diagnostics& b) {
  CHECK(a.layers == b.layers);
  CHECK(a.heads == b.heads);
  CHECK(same_vec(a.attn_entropy, b.attn_entropy));
  CHECK(same_vec(a.attn_max, b.attn_max));
  CHECK(same_vec(a.value_entropy, b.value_entropy));
  CHECK(same_vec(a.hidden_entropy, b.hidden_entropy));
  CHECK(same_vec(a.value_entropy_lime, b.value_entropy_lime));
  CHECK(same_vec(a.hidden_entropy_lime, b.hidden_entropy_lime));
}

// Every field of two runs a run file holds equal (NaN equal to NaN), each checked.
inline void require_same_run(const harness::RunResult& a, const harness::RunResult& b) {
  CHECK(a.run_id == b.run_id);
  CHECK(a.task == b.task);
  CHECK(a.entry == b.entry);
  CHECK(a.model == b.model);
  CHECK(a.grid == b.grid);
  CHECK(a.seed == b.seed);
  CHECK(a.config_yaml == b.config_yaml);
  CHECK(a.status == b.status);
  CHECK(a.message == b.message);
  CHECK(same(a.wall_s, b.wall_s));
  CHECK(same(a.tokens_per_s, b.tokens_per_s));
  CHECK(same(a.eval_s, b.eval_s));
  CHECK(same(a.chance, b.chance));
  REQUIRE(a.curve.size() == b.curve.size());
  for (size_t i = 0; i < a.curve.size(); ++i) {
    CHECK(a.curve[i].step == b.curve[i].step);
    CHECK(same(a.curve[i].train_loss, b.curve[i].train_loss));
    CHECK(same(a.curve[i].val_acc, b.curve[i].val_acc));
    CHECK(same(a.curve[i].lr, b.curve[i].lr));
    CHECK(same(a.curve[i].grad_norm, b.curve[i].grad_norm));
    CHECK(same(a.curve[i].val_token_acc, b.curve[i].val_token_acc));
  }
  CHECK(a.conditions == b.conditions);
  REQUIRE(a.eval.size() == b.eval.size());
  for (size_t i = 0; i < a.eval.size(); ++i) {
    CHECK(a.eval[i].length == b.eval[i].length);
    CHECK(a.eval[i].condition == b.eval[i].condition);
    CHECK(same(a.eval[i].loss, b.eval[i].loss));
    CHECK(same(a.eval[i].token_acc, b.eval[i].token_acc));
    CHECK(same(a.eval[i].seq_acc, b.eval[i].seq_acc));
    CHECK(same(a.eval[i].seen_frac, b.eval[i].seen_frac));
    CHECK(same_vec(a.eval[i].position_acc, b.eval[i].position_acc));
    CHECK(same(a.eval[i].input_space, b.eval[i].input_space));
  }
  check_same_metrics(a.metrics, b.metrics);
  check_same_diag(a.diag, b.diag);
  check_same_diag(a.diag_init, b.diag_init);
  CHECK(a.routers == b.routers);
  CHECK(a.bits_per_byte == b.bits_per_byte);
  CHECK(a.splines == b.splines);
  CHECK(a.splines_from == b.splines_from);
  CHECK(a.splines_task == b.splines_task);
}

// Two runs equal but for their timings (wall_s, tokens_per_s, eval_s), every other field checked.
inline void require_same_run_but_timings(harness::RunResult a, harness::RunResult b) {
  a.wall_s = b.wall_s = 0, a.tokens_per_s = b.tokens_per_s = 0, a.eval_s = b.eval_s = 0;
  require_same_run(a, b);
}

// Every run of two suite files equal, in the same order, timings aside.
inline void require_same_suite_files(const std::string& a, const std::string& b) {
  const auto x = harness::read_suite_file(a), y = harness::read_suite_file(b);
  REQUIRE(x.runs.size() == y.runs.size());
  for (size_t i = 0; i < x.runs.size(); ++i) {
    INFO("run " << x.runs[i].run_id);
    require_same_run_but_timings(x.runs[i], y.runs[i]);
  }
}

// The tiny suite of the sweep tests: parity (lengths 1-4, evaluated at 4 and 8, also under p1 0.9
// with `shift`) and flip-flop (lengths 1-6, evaluated at 6 and 12) on a one-layer transformer of
// width 16, batches of 8, 32 evaluation and 16 validation examples; with `two_models`, the models
// `learned` and `alibi`. Runs: 2 tasks x seeds (x 2 models).
struct TinySuite {
  std::string name = "tiny";
  std::string seeds = "[0, 1, 2]";
  int steps = 60;
  int eval_every = 20;
  bool shift = true;
  bool two_models = true;
};
inline std::string tiny_suite(const TinySuite& s) {
  return "name: " + s.name + "\nseeds: " + s.seeds +
         "\ndefaults:\n  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}\n  train: {steps: " +
         std::to_string(s.steps) + ", batch: 8, eval_every: " + std::to_string(s.eval_every) +
         ", lr: 0.003, warmup: 5}\n  eval: {examples: 32, val_examples: 16}\ntasks:\n  - task: parity\n"
         "    train: {length: [1, 4]}\n    eval: {lengths: [4, 8]" +
         (s.shift ? ", shifts: [{p1: 0.9}]" : "") +
         "}\n  - task: flipflop\n    train: {length: [1, 6]}\n    eval: {lengths: [6, 12]}\n" +
         (s.two_models ? "models:\n  - name: learned\n  - name: alibi\n    model: {position: alibi}\n" : "");
}

// What a sweep's runs folder holds: the names of its finished run files (<run_id>.h5), and of
// everything else (temporary files, claims). A folder not there holds nothing.
struct RunsFolder {
  std::vector<std::string> finished;
  std::vector<std::string> leftovers;
};
inline RunsFolder list_runs_folder(const std::string& runs) {
  RunsFolder f;
  if (!std::filesystem::exists(runs)) return f;
  for (const auto& e : std::filesystem::directory_iterator(runs)) {
    const std::string name = e.path().filename().string();
    const bool run_file = e.path().extension() == ".h5" && name.find(".tmp") == std::string::npos;
    (run_file ? f.finished : f.leftovers).push_back(name);
  }
  return f;
}

// A flip-flop suite (lengths 1-8, evaluated at 8 and 16 and under p_write 0.1) whose one run saves
// its checkpoint, with `model` as its defaults' model section: swept into `dir`, then
// `srbench eval` of the run file must print the run's own evaluation rows, the same numbers at 4
// decimals. Returns the run file.
inline std::string check_eval_reproduces_run(const TempDir& dir, const std::string& model) {
  write_file(dir.file("s.yaml"), "name: ev\ndefaults:\n  model: " + model +
                                     "\n  train: {steps: 100, batch: 16, eval_every: 50, lr: 0.003, save_checkpoint: true}\n"
                                     "  eval: {examples: 64, val_examples: 32}\ntasks:\n  - task: flipflop\n"
                                     "    train: {length: [1, 8]}\n    eval: {lengths: [8, 16], shifts: [{p_write: 0.1}]}\n");
  REQUIRE(run_srbench({"sweep", dir.file("s.yaml"), "--out", dir.file("r/ev.h5")}).exit_code == 0);
  const auto suite = harness::read_suite_file(dir.file("r/ev.h5"));
  REQUIRE(suite.runs.size() == 1);
  const harness::RunResult& run = suite.runs[0];
  REQUIRE(run.status == "ok");
  REQUIRE(run.eval.size() == 3);
  const std::string run_file = dir.file("r/ev/runs/" + run.run_id + ".h5");
  const auto e = run_srbench({"eval", "--checkpoint", run_file, "--task", "flipflop", "--lengths", "8,16", "--shift",
                              "p_write=0.1", "--examples", "64"});
  INFO(e.out << e.err);
  REQUIRE(e.exit_code == 0);
  for (const auto& row : run.eval) {
    char line[160];
    std::snprintf(line, sizeof line, "%-8lld %-20s %10.4f %10.4f %10.4f", static_cast<long long>(row.length),
                  run.conditions[row.condition].c_str(), row.loss, row.token_acc, row.seq_acc);
    CHECK_THAT(e.out, Catch::Contains(line));
  }
  return run_file;
}

}  // namespace srbench::test
