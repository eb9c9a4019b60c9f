// The delta rule's scan (model/delta_rule.hpp) against its equations written as linear-rnn.md
// writes them — S_t = α_t S_{t−1} (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ with full K×K matrices, a
// different order of operations from the scan's — its backward against central finite
// differences of a weighted sum of the outputs, and the same bits at 1 and 2 threads.
#include <omp.h>

#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/delta_rule.hpp"
#include "tests/model/fd_check.hpp"

using srbench::model::DeltaDims;
using srbench::model::DeltaRule;

namespace {

struct Inputs {
  std::vector<double> q, k, v, beta, alpha;
};

// O(1) inputs: q, k unit vectors per head (as the mixer's l2 gives them), v N(0, 1), β in
// (0.1, 1.9) (both signs of 1 − β), α in (0.3, 1).
Inputs random_inputs(const DeltaDims& m, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01;
  std::uniform_real_distribution<double> ub(0.1, 1.9), ua(0.3, 1.0);
  const int64_t N = m.rows(), HK = static_cast<int64_t>(m.H) * m.K;
  Inputs x;
  x.q.resize(N * HK), x.k.resize(N * HK), x.v.resize(N * HK), x.beta.resize(N * m.H), x.alpha.resize(N * m.H);
  for (auto* t : {&x.q, &x.k})
    for (int64_t r = 0; r < N * m.H; ++r) {
      double s = 0;
      for (int j = 0; j < m.K; ++j) s += ((*t)[r * m.K + j] = n01(gen)) * (*t)[r * m.K + j];
      for (int j = 0; j < m.K; ++j) (*t)[r * m.K + j] /= std::sqrt(s);
    }
  for (auto& e : x.v) e = n01(gen);
  for (auto& e : x.beta) e = ub(gen);
  for (auto& e : x.alpha) e = ua(gen);
  return x;
}

// The equations directly, per sequence and head.
std::vector<double> reference(const Inputs& x, const DeltaDims& m, bool gated) {
  const int64_t HK = static_cast<int64_t>(m.H) * m.K;
  std::vector<double> o(m.rows() * HK);
  for (int b = 0; b < m.B; ++b)
    for (int h = 0; h < m.H; ++h) {
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(m.K, m.K);
      for (int t = 0; t < m.T; ++t) {
        const int64_t row = static_cast<int64_t>(b) * m.T + t, off = row * HK + h * m.K;
        const Eigen::Map<const Eigen::VectorXd> q(&x.q[off], m.K), k(&x.k[off], m.K), v(&x.v[off], m.K);
        const double beta = x.beta[row * m.H + h], alpha = gated ? x.alpha[row * m.H + h] : 1.0;
        const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(m.K, m.K);
        S = alpha * S * (I - beta * k * k.transpose()) + beta * v * k.transpose();
        const Eigen::VectorXd out = S * q / std::sqrt(static_cast<double>(m.K));
        for (int i = 0; i < m.K; ++i) o[off + i] = out[i];
      }
    }
  return o;
}

}  // namespace

TEST_CASE("delta rule: forward equals the equations with full matrices (double and float)", "[deltanet]") {
  for (const bool gated : {false, true})
    for (const DeltaDims m : {DeltaDims{2, 5, 2, 3}, DeltaDims{3, 37, 2, 4}, DeltaDims{1, 16, 1, 8}}) {
      INFO("B " << m.B << " T " << m.T << " H " << m.H << " K " << m.K << (gated ? ", gated" : ""));
      const Inputs x = random_inputs(m, 7 + m.T);
      const std::vector<double> want = reference(x, m, gated);
      DeltaRule<double> d;
      d.reserve(m, false);
      std::vector<double> o(want.size());
      d.forward(o.data(), x.q.data(), x.k.data(), x.v.data(), x.beta.data(), gated ? x.alpha.data() : nullptr, m);
      double worst = 0, largest = 0;
      for (size_t i = 0; i < o.size(); ++i) worst = std::max(worst, std::abs(o[i] - want[i])), largest = std::max(largest, std::abs(want[i]));
      CHECK(largest > 0.1);
      CHECK(worst <= 1e-12 * largest);
      // float: the same within float rounding
      auto f = [](const std::vector<double>& a) { return std::vector<float>(a.begin(), a.end()); };
      const auto q = f(x.q), k = f(x.k), v = f(x.v), beta = f(x.beta), alpha = f(x.alpha);
      DeltaRule<float> df;
      df.reserve(m, false);
      std::vector<float> of(o.size());
      df.forward(of.data(), q.data(), k.data(), v.data(), beta.data(), gated ? alpha.data() : nullptr, m);
      double worst_f = 0;
      for (size_t i = 0; i < o.size(); ++i) worst_f = std::max(worst_f, std::abs(of[i] - want[i]));
      CHECK(worst_f <= 2e-5 * largest);
    }
}

TEST_CASE("delta rule: backward equals central finite differences on every input", "[deltanet][gradients]") {
  // T across two chunks: the recomputation from a saved state; K 20: the backward's column sweeps
  // take one block of 16 columns in registers and 4 one at a time
  for (const bool gated : {false, true})
    for (const DeltaDims m : {DeltaDims{2, 21, 2, 3}, DeltaDims{1, 18, 1, 20}}) {
      INFO((gated ? "gated" : "no gate") << ", K " << m.K);
      Inputs x = random_inputs(m, 11);
      const srbench::test::WeightedSum weighted(m.rows() * m.H * m.K, 5);
      DeltaRule<double> d;
      d.reserve(m, true);
      std::vector<double> o(weighted.w.size());
      auto loss = [&] {
        d.forward(o.data(), x.q.data(), x.k.data(), x.v.data(), x.beta.data(), gated ? x.alpha.data() : nullptr, m);
        return weighted(o);
      };
      loss();
      std::vector<double> dq(x.q.size()), dk(x.k.size()), dv(x.v.size()), dbeta(x.beta.size()), dalpha(x.alpha.size());
      d.backward(dq.data(), dk.data(), dv.data(), dbeta.data(), gated ? dalpha.data() : nullptr, weighted.w.data(), x.q.data(),
                 x.k.data(), x.v.data(), x.beta.data(), gated ? x.alpha.data() : nullptr, m);
      const double h = 1e-6;
      int64_t checked = 0;
      auto check = [&](std::vector<double>& in, const std::vector<double>& grad, const char* name) {
        checked += srbench::test::check_elements(in, grad, loss, name, h, 1e-7, 1e-6, 1e-3);
      };
      check(x.q, dq, "q");
      check(x.k, dk, "k");
      check(x.v, dv, "v");
      check(x.beta, dbeta, "beta");
      if (gated) check(x.alpha, dalpha, "alpha");
      CHECK(checked > 700);
    }
}

TEST_CASE("delta rule: the same bits at 1 and 2 threads, forward and backward", "[deltanet]") {
  const DeltaDims m{4, 40, 4, 16};
  const Inputs xd = random_inputs(m, 3);
  auto f = [](const std::vector<double>& a) { return std::vector<float>(a.begin(), a.end()); };
  const auto q = f(xd.q), k = f(xd.k), v = f(xd.v), beta = f(xd.beta), alpha = f(xd.alpha);
  std::vector<float> dout(q.size());
  for (size_t i = 0; i < dout.size(); ++i) dout[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  std::vector<std::vector<float>> outs;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    DeltaRule<float> d;
    d.reserve(m, true);
    std::vector<float> o(q.size()), dq(q.size()), dk(q.size()), dv(q.size()), db(beta.size()), da(beta.size());
    d.forward(o.data(), q.data(), k.data(), v.data(), beta.data(), alpha.data(), m);
    d.backward(dq.data(), dk.data(), dv.data(), db.data(), da.data(), dout.data(), q.data(), k.data(), v.data(),
               beta.data(), alpha.data(), m);
    std::vector<float> all;
    for (const auto* a : {&o, &dq, &dk, &dv, &db, &da}) all.insert(all.end(), a->begin(), a->end());
    outs.push_back(all);
  }
  omp_set_num_threads(1);
  REQUIRE(outs[0].size() == outs[1].size());
  CHECK(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)) == 0);
}
