// Statistics of one metric across the seeds of a group (harness.md, "Across seeds").
#pragma once

#include <vector>

#include "harness/core/records.hpp"

namespace srbench::harness {

// Statistics of one metric across seeds; NaN values (undefined metrics) are left out.
struct SeedStats {
  int n = 0;             // values that entered
  double mean = kNaN;
  double std = kNaN;     // sample standard deviation (n − 1); NaN for n < 2
  double min = kNaN, median = kNaN, max = kNaN;
  double ci_lo = kNaN, ci_hi = kNaN;  // 95% interval of the mean (bootstrap_mean_interval); NaN for n < 2
};
SeedStats seed_stats(const std::vector<double>& values);

// A percentile-bootstrap interval of the mean of `values` (the seeds of a group): `resamples`
// resamples of n values drawn with replacement, their means sorted, and the interval between the
// (1 − level)/2 and (1 + level)/2 quantiles (nearest rank). Deterministic: the draws come from a
// fixed seed, over the values in ascending order, so the same values in any order give the same
// interval. With few seeds it is narrow (for n = 2 it spans the two values at most, and it
// never leaves [min, max]): it describes the seeds at hand, not a population. NaN for n < 2.
struct Interval {
  double lo = kNaN, hi = kNaN;
};
Interval bootstrap_mean_interval(const std::vector<double>& values, double level = 0.95, int resamples = 10000);

}  // namespace srbench::harness
