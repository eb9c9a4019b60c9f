#include "harness/report/stats.hpp"

#include <algorithm>
#include <cmath>

#include "tasks/rng.hpp"

namespace srbench::harness {

SeedStats seed_stats(const std::vector<double>& values) {
  std::vector<double> v;
  for (double x : values)
    if (!std::isnan(x)) v.push_back(x);
  SeedStats s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  if (s.n > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / (s.n - 1));
  }
  s.min = v.front();
  s.max = v.back();
  s.median = s.n % 2 ? v[s.n / 2] : 0.5 * (v[s.n / 2 - 1] + v[s.n / 2]);
  const Interval ci = bootstrap_mean_interval(v);
  s.ci_lo = ci.lo, s.ci_hi = ci.hi;
  return s;
}

Interval bootstrap_mean_interval(const std::vector<double>& unordered, double level, int resamples) {
  Interval out;
  const size_t n = unordered.size();
  if (n < 2 || resamples < 1) return out;
  std::vector<double> values = unordered;  // resampled in ascending order: the interval does not
  std::sort(values.begin(), values.end());  // depend on the order the values come in
  tasks::Rng rng(0x626f6f7473747261ULL);  // fixed: the same values give the same interval
  std::vector<double> means(static_cast<size_t>(resamples));
  for (auto& m : means) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += values[rng.below(n)];
    m = sum / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  auto quantile = [&](double q) {  // nearest rank
    const auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(resamples)));
    return means[std::min(means.size() - 1, k == 0 ? 0 : k - 1)];
  };
  out.lo = quantile((1 - level) / 2);
  out.hi = quantile((1 + level) / 2);
  return out;
}

}  // namespace srbench::harness
