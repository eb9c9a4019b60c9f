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
};
SeedStats seed_stats(const std::vector<double>& values);

}  // namespace srbench::harness
