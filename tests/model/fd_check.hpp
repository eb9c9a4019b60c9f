// The backward pass of a double-precision model against central finite differences, on every
// element of every parameter tensor (test_bidirectional.cpp, test_relative.cpp).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/model/helpers.hpp"

namespace srbench::test {

struct FdReport {
  double worst = 0;   // the largest |analytic − numeric| checked
  std::string where;  // its tensor
  int64_t checked = 0, skipped = 0;
};

// With probe h, every element must satisfy |analytic − numeric| ≤ 1e-7 + 1e-5·|numeric|. Under
// `kinks` (a spline, or |·|: piecewise-linear functions) an element whose error is larger but
// explained by the gap between the one-sided differences — a keypoint or a zero inside the
// probe — is skipped; at most 2% may be. Every tensor's gradient must be non-zero somewhere
// (> 1e-6) unless zero_in_theory(name), and then below 1e-8 everywhere.
template <typename ZeroInTheory>
FdReport check_finite_differences(model::BasicModel<double>& m, const Batch& batch, double h, bool kinks,
                                  ZeroInTheory zero_in_theory) {
  m.zero_grads();
  const double f0 =
      m.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true, batch.rows());
  const std::vector<double> analytic(m.grads(), m.grads() + m.num_params());
  FdReport r;
  for (const auto& p : m.layout().tensors()) {
    INFO(p.name);
    double largest = 0;
    for (size_t i = 0; i < p.size; ++i) {
      const Probe pr = probe(m, batch, p.offset + i, h);
      const double err = std::abs(analytic[p.offset + i] - pr.fd), tol = 1e-7 + 1e-5 * std::abs(pr.fd);
      ++r.checked;
      if (kinks && err > tol && err <= std::abs((pr.plus - f0) / h - (f0 - pr.minus) / h)) {
        ++r.skipped;
        continue;
      }
      CHECK(err <= tol);
      largest = std::max(largest, std::abs(pr.fd));
      if (err > r.worst) r.worst = err, r.where = p.name;
    }
    if (zero_in_theory(p.name)) CHECK(largest < 1e-8);
    else CHECK(largest > 1e-6);
  }
  CHECK(r.skipped <= r.checked / 50);
  return r;
}

}  // namespace srbench::test
