// Helpers of the kernel tests (test_kernels.cpp, test_sgemm.cpp): random inputs, relative error.
#pragma once

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace srbench::test {

inline std::vector<float> random_vec(size_t n, uint64_t seed, double sd = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd(0.0, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(nd(gen));
  return v;
}

// max |a − b| / max |b|
inline double rel_err(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

}  // namespace srbench::test
