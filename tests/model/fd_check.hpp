// The backward pass of a double-precision model against central finite differences, on every
// element of every parameter tensor: the one check of the whole-model gradient tests
// (test_gradients, test_splines, test_lime, test_bidirectional, test_recurrent, the linear archs');
// and check_elements, the same for one layer's input or weight (the linear archs' layer tests).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/model/helpers.hpp"

namespace srbench::test {

struct FdReport {
  double worst = 0;   // the largest |analytic − numeric| checked
  std::string where;  // its tensor
  int64_t checked = 0, skipped = 0;
  int tensors = 0;
};

// `loss(need_grads)`: the model's loss on the test's batch at its current parameters,
// forward_backward(…, need_grads, …) (with need_grads it adds the gradients). The analytic
// gradients are those of one call with need_grads after zero_grads(); they stay in m.grads().
// With probe h, every element must satisfy |analytic − numeric| ≤ 1e-7 + 1e-5·|numeric|, numeric
// = (loss(θ + h) − loss(θ − h)) / 2h. Under `kinks` (a spline, or |·|: piecewise-linear
// functions) an element whose error is larger but explained by the gap between the one-sided
// differences — a keypoint or a zero inside the probe — is skipped; at most 2% may be. Every
// tensor's gradient must be non-zero somewhere (> 1e-6) unless zero_in_theory(name), and then
// below 1e-8 everywhere.
template <typename Loss, typename ZeroInTheory>
FdReport check_finite_differences(model::BasicModel<double>& m, Loss loss, double h, bool kinks,
                                  ZeroInTheory zero_in_theory) {
  m.zero_grads();
  const double f0 = loss(true);
  const std::vector<double> analytic(m.grads(), m.grads() + m.num_params());
  FdReport r;
  for (const auto& p : m.layout().tensors()) {
    INFO(p.name);
    double largest = 0;
    for (size_t i = 0; i < p.size; ++i) {
      double& x = m.params()[p.offset + i];
      const double x0 = x;
      x = x0 + h;
      const double plus = loss(false);
      x = x0 - h;
      const double minus = loss(false);
      x = x0;
      const double fd = (plus - minus) / (2 * h);
      const double err = std::abs(analytic[p.offset + i] - fd), tol = 1e-7 + 1e-5 * std::abs(fd);
      ++r.checked;
      if (kinks && err > tol && err <= std::abs((plus - f0) / h - (f0 - minus) / h)) {
        ++r.skipped;
        continue;
      }
      CHECK(err <= tol);
      largest = std::max(largest, std::abs(fd));
      if (err > r.worst) r.worst = err, r.where = p.name;
    }
    if (zero_in_theory(p.name)) CHECK(largest < 1e-8);
    else CHECK(largest > 1e-6);
    ++r.tensors;
  }
  CHECK(r.skipped <= r.checked / 50);
  return r;
}

// The same on a Batch (helpers.hpp), its row lengths passed to the model.
template <typename ZeroInTheory>
FdReport check_finite_differences(model::BasicModel<double>& m, const Batch& batch, double h, bool kinks,
                                  ZeroInTheory zero_in_theory) {
  auto loss = [&](bool need_grads) {
    return m.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, need_grads, batch.rows());
  };
  return check_finite_differences(m, loss, h, kinks, zero_in_theory);
}

// No tensor whose gradient is zero in theory.
inline bool none_zero(const std::string&) { return false; }

// A layer's gradient `grad` with respect to the elements of `x` (one of its inputs or weights,
// probed in place and restored) against central finite differences of loss() with probe h: every
// element within atol + rtol·|numeric|, and the largest |numeric| above `least` (x matters).
// Returns the elements checked.
template <typename Loss>
int64_t check_elements(std::vector<double>& x, const std::vector<double>& grad, Loss loss, const std::string& name,
                       double h, double atol, double rtol, double least) {
  INFO(name);
  double largest = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double x0 = x[i];
    x[i] = x0 + h;
    const double plus = loss();
    x[i] = x0 - h;
    const double minus = loss();
    x[i] = x0;
    const double fd = (plus - minus) / (2 * h);
    CHECK(std::abs(grad[i] - fd) <= atol + rtol * std::abs(fd));
    largest = std::max(largest, std::abs(fd));
  }
  CHECK(largest > least);
  return static_cast<int64_t>(x.size());
}

// The loss of a layer's finite-difference test: Σ_i o_i·w_i over the layer's output o, with the
// weights w drawn N(0, 1) from std::mt19937(seed); its gradient with respect to o is w, the
// backward's input.
struct WeightedSum {
  std::vector<double> w;
  WeightedSum(size_t n, unsigned seed) : w(n) {
    std::mt19937 gen(seed);
    std::normal_distribution<double> n01;
    for (auto& e : w) e = n01(gen);
  }
  double operator()(const std::vector<double>& o) const {
    double s = 0;
    for (size_t i = 0; i < o.size(); ++i) s += o[i] * w[i];
    return s;
  }
};

}  // namespace srbench::test
