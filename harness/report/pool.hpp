// One value per cell of runs, as the papers aggregate (harness.md, "Aggregation across seeds"):
// runs pooled by (task entry, model entry, grid point without the `over` axes) — over their seeds
// and the values of those axes — and a quantity of each run reduced by mean, median, max or min.
// `report --agg/--over` and `report --check` (check.hpp) are built on it.
//
//   for (const PoolCell& c : pool_runs(runs, {"train.lr"}))
//     PooledValue v = pooled_value(c, {"id_acc"}, "max", false);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/report/stats.hpp"

namespace srbench::harness {

// mean | median | max | min; nullopt otherwise.
std::optional<std::string> parse_agg(const std::string& text);

// What is measured of one run: a metric of metric_fields(), seq_acc / token_acc of the evaluation
// row at (length, condition), or with a condition shift_acc of that one shift (its rows' mean seq_acc).
struct Quantity {
  std::string metric;
  int64_t length = 0;
  std::string condition;      // seq_acc / token_acc: the row's; shift_acc: one shift ("": the lowest, the metric)
  std::string label() const;  // "id_acc", "seq_acc[length=16,condition=id]", "shift_acc[condition=p1=0.9]"
};
// NaN where the run lacks it: no such row, a NaN metric, or an integer metric below 0 (steps_to_target
// −1: never reached; fitted −1: undefined).
double run_value(const RunResult& r, const Quantity& q);

struct PoolCell {
  std::string task, entry, model, arch, grid;  // grid: without the pooled axes
  std::vector<const RunResult*> runs;         // every run of the cell, any status
};
// Cells in order of first appearance. `over` holds grid axes ("train.lr"); "seed" in it is the
// seeds, which every cell pools anyway.
std::vector<PoolCell> pool_runs(const std::vector<RunResult>& runs, const std::vector<std::string>& over);

// A cell's value: `agg` (mean, median, max, min; and for `expect:` claims ci_lo / ci_hi, the ends
// of the mean's 95% bootstrap interval) of the quantity over the runs that entered (k of them: the metric defined,
// and fitted with `fitted_only`), with the 95% bootstrap interval of their mean; n counts all the
// cell's runs (ok, diverged, failed), as the report's `runs`. k/n = 0/n: no value (NaN).
struct PooledValue {
  double value = kNaN;
  SeedStats stats;  // of the values that entered: stats.n is k
  int k = 0, n = 0;
};
PooledValue pooled_value(const PoolCell& cell, const Quantity& q, const std::string& agg, bool fitted_only);
// The same of the paired differences quantity(run) − quantity(its partner): for each run of the cell,
// the run of model entry `minus` with the same task entry, grid point (all axes, the pooled ones
// included) and seed. A pair enters when both values are defined (and, with `fitted_only`, both runs
// fitted); k counts the pairs, n the cell's runs.
PooledValue paired_value(const PoolCell& cell, const std::vector<RunResult>& runs, const std::string& minus,
                         const Quantity& q, const std::string& agg, bool fitted_only);

// "max over seeds × train.lr" (over: the axes besides seed).
std::string agg_label(const std::string& agg, const std::vector<std::string>& over);

}  // namespace srbench::harness
