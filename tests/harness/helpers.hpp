// Helpers shared by the harness tests.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/results/results.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/splines.hpp"

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
inline bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Every field of two runs equal (NaN equal to NaN), each checked.
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
  }
  CHECK(a.conditions == b.conditions);
  REQUIRE(a.eval.size() == b.eval.size());
  for (size_t i = 0; i < a.eval.size(); ++i) {
    CHECK(a.eval[i].length == b.eval[i].length);
    CHECK(a.eval[i].condition == b.eval[i].condition);
    CHECK(same(a.eval[i].loss, b.eval[i].loss));
    CHECK(same(a.eval[i].token_acc, b.eval[i].token_acc));
    CHECK(same(a.eval[i].seq_acc, b.eval[i].seq_acc));
  }
  CHECK(same(a.metrics.id_acc, b.metrics.id_acc));
  CHECK(same(a.metrics.ood_length_acc, b.metrics.ood_length_acc));
  CHECK(same(a.metrics.shift_acc, b.metrics.shift_acc));
  CHECK(same(a.metrics.shortcut_gap, b.metrics.shortcut_gap));
  CHECK(a.metrics.steps_to_target == b.metrics.steps_to_target);
  CHECK(same(a.metrics.final_train_loss, b.metrics.final_train_loss));
  CHECK(a.diag.layers == b.diag.layers);
  CHECK(a.diag.heads == b.diag.heads);
  auto same_vec = [](const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same(x[i], y[i])) return false;
    return true;
  };
  CHECK(same_vec(a.diag.attn_entropy, b.diag.attn_entropy));
  CHECK(same_vec(a.diag.attn_max, b.diag.attn_max));
  CHECK(same_vec(a.diag.value_entropy, b.diag.value_entropy));
  CHECK(same_vec(a.diag.hidden_entropy, b.diag.hidden_entropy));
  CHECK(a.bits_per_byte == b.bits_per_byte);
}

}  // namespace srbench::test
