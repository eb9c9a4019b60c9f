// harness.md's metric arithmetic on hand-made evaluation rows and curves.
#include <catch2/catch.hpp>
#include <cmath>

#include <set>
#include <stdexcept>

#include "harness/core/metric_fields.hpp"
#include "harness/run/metrics.hpp"
#include "harness/report/stats.hpp"
#include "tests/harness/helpers.hpp"

using namespace srbench::harness;

TEST_CASE("metrics: harness.md's worked example", "[harness][metrics]") {
  // train lengths [4, 8], eval lengths [2, 8, 16], one shift {p1: 0.9}
  const std::vector<std::string> conditions = {"id", "p1=0.9"};
  const std::vector<EvalRow> rows = {
      {2, 0, 0.1, 0.99, 0.97},   // length 2: reported, enters no derived metric
      {8, 0, 0.2, 0.95, 0.90},   // id_acc
      {16, 0, 1.5, 0.60, 0.25},  // ood_length_acc
      {8, 1, 0.9, 0.70, 0.40},   // shift_acc
  };
  const std::vector<CurvePoint> curve = {{100, 0.9, 0.5, 1e-3, 1.0}, {200, 0.5, 0.995, 1e-3, 1.0}, {300, 0.3, 0.97, 1e-3, 1.0}};
  const RunMetrics m = derive_metrics(rows, conditions, 4, 8, curve, 0.99);
  CHECK(m.id_acc == 0.90);
  CHECK(m.ood_length_acc == 0.25);
  CHECK(m.shift_acc == 0.40);
  CHECK(m.shortcut_gap == Approx(0.90 - 0.25));
  CHECK(m.steps_to_target == 200);
  CHECK(m.final_train_loss == 0.3);
  CHECK(m.ood_token_acc == 0.60);  // token_acc of the one id row beyond the training range
}

TEST_CASE("metrics: ood_token_acc is the mean token_acc of the id rows beyond train_max (chomsky.md §7.1)",
          "[harness][metrics]") {
  // train lengths [1, 40]; evaluation at 40 (in distribution), 41, 60 and 500, and a shift at 41
  const std::vector<EvalRow> rows = {
      {40, 0, 0, 0.99, 0.9}, {41, 0, 0, 0.8, 0.1}, {60, 0, 0, 0.6, 0.0}, {500, 0, 0, 0.55, 0.0}, {41, 1, 0, 0.1, 0.0},
  };
  const RunMetrics m = derive_metrics(rows, {"id", "p1=0.9"}, 1, 40, {}, 0.99);
  CHECK(m.ood_token_acc == Approx((0.8 + 0.6 + 0.55) / 3));
  CHECK(m.ood_length_acc == Approx(0.1 / 3));
  CHECK(std::isnan(derive_metrics({{40, 0, 0, 1, 1}}, {"id"}, 1, 40, {}, 0.99).ood_token_acc));
}

TEST_CASE("metrics: means over lengths, the worst shift, NaN where undefined", "[harness][metrics]") {
  const std::vector<std::string> conditions = {"id", "p1=0.1", "p1=0.9", "train"};
  const std::vector<EvalRow> rows = {
      {4, 0, 0, 0, 1.0}, {6, 0, 0, 0, 0.5},   // id: (1.0 + 0.5) / 2
      {12, 0, 0, 0, 0.2}, {24, 0, 0, 0, 0.0},  // ood: 0.1
      {4, 1, 0, 0, 0.9}, {6, 1, 0, 0, 0.7},    // shift p1=0.1: 0.8
      {4, 2, 0, 0, 0.6}, {6, 2, 0, 0, 0.8},    // shift p1=0.9: 0.7 — the lowest
      {6, 3, 0, 0, 0.0},                       // "train" (modadd) is not a shift
  };
  RunMetrics m = derive_metrics(rows, conditions, 1, 8, {}, 0.99);
  CHECK(m.id_acc == Approx(0.75));
  CHECK(m.ood_length_acc == Approx(0.1));
  CHECK(m.shift_acc == Approx(0.7));
  CHECK(m.shortcut_gap == Approx(0.75 - 0.1));
  CHECK(m.steps_to_target == -1);
  CHECK(std::isnan(m.final_train_loss));

  // no OOD lengths and no shifts: only id_acc is defined
  m = derive_metrics({{4, 0, 0, 0, 0.5}}, {"id"}, 1, 8, {{50, 0.7, 0.2, 0, 0}}, 0.99);
  CHECK(m.id_acc == 0.5);
  CHECK(std::isnan(m.ood_length_acc));
  CHECK(std::isnan(m.shift_acc));
  CHECK(std::isnan(m.shortcut_gap));
  CHECK(m.steps_to_target == -1);
  // shortcut_gap takes whichever of ood / shift is defined
  m = derive_metrics({{4, 0, 0, 0, 0.9}, {4, 1, 0, 0, 0.3}}, {"id", "p=1"}, 1, 8, {}, 0.99);
  CHECK(m.shortcut_gap == Approx(0.6));
}

TEST_CASE("metrics: statistics across seeds", "[harness][metrics]") {
  SeedStats s = seed_stats({1.0, 0.5, 0.75});
  CHECK(s.n == 3);
  CHECK(s.mean == Approx(0.75));
  CHECK(s.std == Approx(0.25));  // sqrt((0.0625 + 0.0625 + 0) / 2)
  CHECK(s.min == 0.5);
  CHECK(s.median == 0.75);
  CHECK(s.max == 1.0);
  s = seed_stats({2.0, std::nan(""), 4.0, 1.0, 3.0});  // NaN left out; even count: mean of the middle two
  CHECK(s.n == 4);
  CHECK(s.median == 2.5);
  CHECK(s.std == Approx(std::sqrt(5.0 / 3.0)));
  s = seed_stats({0.3});
  CHECK(std::isnan(s.std));
  CHECK(s.median == 0.3);
  CHECK(seed_stats({}).n == 0);
}

TEST_CASE("metric_fields: one row per RunMetrics member, by name, in the report's order", "[harness][metrics]") {
  const auto& t = metric_fields();
  // every member is 8 bytes (double or int64_t): a member without a row makes RunMetrics larger
  CHECK(sizeof(RunMetrics) == t.size() * 8);
  // each row its own member: set through the table, every value differs from the defaults and the others
  RunMetrics m;
  srbench::test::set_every_metric(m, 0.5);
  const RunMetrics defaults;
  std::set<double> values;
  std::set<std::string> names;
  for (const auto& f : t) {
    INFO(f.name);
    CHECK(f.value(m) != f.value(defaults));
    CHECK(values.insert(f.value(m)).second);
    CHECK(names.insert(f.name).second);
    CHECK(&metric_field(f.name) == &f);
  }
  CHECK(metric_field("fitted").integer());
  CHECK_FALSE(metric_field("id_acc").integer());
  CHECK(metric_field("steps_to_target").value(m) == static_cast<double>(m.steps_to_target));
  CHECK_THROWS_WITH(metric_field("id_accuracy"), Catch::Contains("no metric 'id_accuracy'") && Catch::Contains("ood_token_acc"));
  // the report's list (its columns' order; a metric added later comes after these)
  const std::vector<std::string> report = {"id_acc",    "ood_length_acc", "ood_token_acc",
                                           "shift_acc", "shortcut_gap",   "final_train_loss"};
  const auto listed = report_metrics();
  REQUIRE(listed.size() >= report.size());
  CHECK(std::vector<std::string>(listed.begin(), listed.begin() + 6) == report);
  // the first files' metrics, and those files written before them lack (read as their default)
  for (const char* name : {"id_acc", "ood_length_acc", "shift_acc", "shortcut_gap", "steps_to_target", "final_train_loss"})
    CHECK_FALSE(metric_field(name).optional);
  CHECK(metric_field("ood_token_acc").optional);
  CHECK(metric_field("fitted").optional);
}

TEST_CASE("metrics: gen_length is the longest evaluated id length up to which every id length reaches the target",
          "[harness][metrics]") {
  // EvalRow: {length, condition, loss, token_acc, seq_acc}; conditions {"id", "p1=0.9"}; train lengths [1, 8]
  const std::vector<std::string> conditions = {"id", "p1=0.9"};
  // evaluated lengths with gaps, out of order; a shift row that misses is not an id row
  const std::vector<EvalRow> rows = {
      {16, 0, 0, 0.995, 0.99}, {4, 0, 0, 1.0, 1.0}, {8, 0, 0, 0.999, 0.995},
      {32, 0, 0, 0.99, 0.50},  {64, 0, 0, 0.97, 0.2}, {128, 0, 0, 0.999, 1.0},  // passes again after a miss: no matter
      {8, 1, 0, 0.2, 0.0},
  };
  CHECK(derive_metrics(rows, conditions, 1, 8, {}, 0.99).gen_length == 16);  // 4, 8, 16 reach 0.99; 32 misses
  CHECK(derive_metrics(rows, conditions, 1, 8, {}, 0.99, FitMetric::token_acc).gen_length == 32);  // 64 misses
  CHECK(gen_length(rows, 0.5, FitMetric::seq_acc) == 32);   // the target decides: 64's 0.2 misses 0.5
  CHECK(gen_length(rows, 0.95, FitMetric::token_acc) == 128);  // every length reaches it: the longest
  // 0 when the shortest evaluated length already misses (even though longer ones reach it)
  CHECK(gen_length({{2, 0, 0, 0.5, 0.1}, {4, 0, 0, 1, 1}}, 0.99, FitMetric::seq_acc) == 0);
  // a NaN accuracy (nothing scored) does not reach the target
  CHECK(gen_length({{2, 0, 0, 1, 1}, {4, 0, 0, kNaN, kNaN}, {8, 0, 0, 1, 1}}, 0.99, FitMetric::seq_acc) == 2);
  // undefined without id rows
  CHECK(std::isnan(gen_length({{8, 1, 0, 1, 1}}, 0.99, FitMetric::seq_acc)));
  CHECK(std::isnan(derive_metrics({}, {"id"}, 1, 8, {}, 0.99).gen_length));
}

TEST_CASE("metrics: under fit_metric token_acc, fitted and steps_to_target read token accuracy", "[harness][metrics]") {
  // train lengths [4, 8]: id_acc's rows are 4 and 8 (2 and 16 are outside)
  const std::vector<EvalRow> rows = {
      {2, 0, 0, 0.0, 0.0}, {4, 0, 0, 0.995, 0.80}, {8, 0, 0, 0.989, 0.70}, {16, 0, 0, 0.1, 0.0},
  };
  // step, train_loss, val_acc, lr, grad_norm, val_token_acc
  const std::vector<CurvePoint> curve = {{100, 1, 0.5, 0, 0, 0.95}, {200, 1, 0.6, 0, 0, 0.991}, {300, 1, 0.99, 0, 0, 0.999}};
  const RunMetrics seq = derive_metrics(rows, {"id"}, 4, 8, curve, 0.99);
  const RunMetrics tok = derive_metrics(rows, {"id"}, 4, 8, curve, 0.99, FitMetric::token_acc);
  CHECK(seq.id_acc == Approx(0.75));
  CHECK(tok.id_acc == seq.id_acc);  // id_acc stays sequence accuracy
  CHECK(seq.fitted == 0);
  CHECK(tok.fitted == 1);  // (0.995 + 0.989) / 2 = 0.992 >= 0.99
  CHECK(derive_metrics(rows, {"id"}, 4, 8, curve, 0.993, FitMetric::token_acc).fitted == 0);
  CHECK(seq.steps_to_target == 300);  // val_acc
  CHECK(tok.steps_to_target == 200);  // val_token_acc
  // a curve without val_token_acc (not measured) never reaches a token target
  CHECK(derive_metrics(rows, {"id"}, 4, 8, {{100, 1, 1.0, 0, 0}}, 0.99, FitMetric::token_acc).steps_to_target == -1);
  // no rows inside the training lengths: undefined
  CHECK(derive_metrics({{16, 0, 0, 1, 1}}, {"id"}, 4, 8, {}, 0.99, FitMetric::token_acc).fitted == -1);
}
