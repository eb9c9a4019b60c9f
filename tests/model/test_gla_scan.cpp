// GLA's recurrence (model/gla_scan.hpp) against its equations written as linear-rnn.md writes them
// — S_t = S_{t−1} diag(α_t) + v_t k_tᵀ with full V×K matrices, o_t = S_t q_t/√K — its backward
// against central finite differences of a weighted sum of the outputs, and the same bits at 1 and
// 2 threads.
#include <omp.h>

#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/gla_scan.hpp"
#include "tests/model/fd_check.hpp"

using srbench::model::GlaDims;
using srbench::model::GlaScan;

namespace {

struct Inputs {
  std::vector<double> q, k, v, alpha;
};

// O(1) inputs: q, k, v N(0, 1), α in (0.45, 1) (GLA's range: exp(logsigmoid(z)/16)).
Inputs random_inputs(const GlaDims& m, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01;
  std::uniform_real_distribution<double> ua(0.45, 1.0);
  const int64_t N = m.rows(), HK = static_cast<int64_t>(m.H) * m.K, HV = static_cast<int64_t>(m.H) * m.V;
  Inputs x;
  x.q.resize(N * HK), x.k.resize(N * HK), x.v.resize(N * HV), x.alpha.resize(N * HK);
  for (auto* t : {&x.q, &x.k, &x.v})
    for (auto& e : *t) e = n01(gen);
  for (auto& e : x.alpha) e = ua(gen);
  return x;
}

// The equations directly, per sequence and head.
std::vector<double> reference(const Inputs& x, const GlaDims& m, bool gated) {
  const int64_t HK = static_cast<int64_t>(m.H) * m.K, HV = static_cast<int64_t>(m.H) * m.V;
  std::vector<double> o(m.rows() * HV);
  for (int b = 0; b < m.B; ++b)
    for (int h = 0; h < m.H; ++h) {
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(m.V, m.K);
      for (int t = 0; t < m.T; ++t) {
        const int64_t row = static_cast<int64_t>(b) * m.T + t, ok = row * HK + h * m.K, ov = row * HV + h * m.V;
        const Eigen::Map<const Eigen::VectorXd> q(&x.q[ok], m.K), k(&x.k[ok], m.K), v(&x.v[ov], m.V);
        Eigen::VectorXd a = Eigen::VectorXd::Ones(m.K);
        if (gated) a = Eigen::Map<const Eigen::VectorXd>(&x.alpha[ok], m.K);
        S = S * a.asDiagonal() + v * k.transpose();
        const Eigen::VectorXd out = S * q / std::sqrt(static_cast<double>(m.K));
        for (int i = 0; i < m.V; ++i) o[ov + i] = out[i];
      }
    }
  return o;
}

}  // namespace

TEST_CASE("gla scan: forward equals the equations with full matrices (double and float)", "[gla]") {
  for (const bool gated : {false, true})
    for (const GlaDims m : {GlaDims{2, 5, 2, 3, 5}, GlaDims{3, 37, 2, 4, 8}, GlaDims{1, 16, 1, 8, 16}}) {
      INFO("B " << m.B << " T " << m.T << " H " << m.H << " K " << m.K << " V " << m.V << (gated ? ", gated" : ""));
      const Inputs x = random_inputs(m, 7 + m.T);
      const std::vector<double> want = reference(x, m, gated);
      GlaScan<double> g;
      g.reserve(m, false);
      std::vector<double> o(want.size());
      g.forward(o.data(), x.q.data(), x.k.data(), x.v.data(), gated ? x.alpha.data() : nullptr, m);
      double worst = 0, largest = 0;
      for (size_t i = 0; i < o.size(); ++i)
        worst = std::max(worst, std::abs(o[i] - want[i])), largest = std::max(largest, std::abs(want[i]));
      CHECK(largest > 0.1);
      CHECK(worst <= 1e-12 * largest);
      auto f = [](const std::vector<double>& a) { return std::vector<float>(a.begin(), a.end()); };
      const auto q = f(x.q), k = f(x.k), v = f(x.v), alpha = f(x.alpha);
      GlaScan<float> gf;
      gf.reserve(m, false);
      std::vector<float> of(o.size());
      gf.forward(of.data(), q.data(), k.data(), v.data(), gated ? alpha.data() : nullptr, m);
      double worst_f = 0;
      for (size_t i = 0; i < o.size(); ++i) worst_f = std::max(worst_f, std::abs(of[i] - want[i]));
      CHECK(worst_f <= 2e-5 * largest);
    }
}

TEST_CASE("gla scan: backward equals central finite differences on every input", "[gla][gradients]") {
  // T across two chunks: the recomputation from a saved state; V 20: the column sweeps take one
  // block of 16 value channels in registers and 4 one at a time
  for (const bool gated : {false, true})
    for (const GlaDims m : {GlaDims{2, 21, 2, 3, 4}, GlaDims{1, 30, 1, 4, 20}}) {
      INFO((gated ? "gated" : "no gate") << ", V " << m.V);
      Inputs x = random_inputs(m, 11);
      const srbench::test::WeightedSum weighted(m.rows() * m.H * m.V, 5);
      GlaScan<double> g;
      g.reserve(m, true);
      std::vector<double> o(weighted.w.size());
      auto loss = [&] {
        g.forward(o.data(), x.q.data(), x.k.data(), x.v.data(), gated ? x.alpha.data() : nullptr, m);
        return weighted(o);
      };
      loss();
      std::vector<double> dq(x.q.size()), dk(x.k.size()), dv(x.v.size()), dalpha(x.alpha.size());
      g.backward(dq.data(), dk.data(), dv.data(), gated ? dalpha.data() : nullptr, weighted.w.data(), x.q.data(), x.k.data(),
                 x.v.data(), gated ? x.alpha.data() : nullptr, m);
      const double h = 1e-6;
      int64_t checked = 0;
      auto check = [&](std::vector<double>& in, const std::vector<double>& grad, const char* name) {
        checked += srbench::test::check_elements(in, grad, loss, name, h, 1e-7, 1e-6, 1e-3);
      };
      check(x.q, dq, "q");
      check(x.k, dk, "k");
      check(x.v, dv, "v");
      if (gated) check(x.alpha, dalpha, "alpha");
      CHECK(checked > 700);
    }
}

TEST_CASE("gla scan: the same bits at 1 and 2 threads, forward and backward", "[gla]") {
  const GlaDims m{4, 40, 4, 8, 16};
  const Inputs xd = random_inputs(m, 3);
  auto f = [](const std::vector<double>& a) { return std::vector<float>(a.begin(), a.end()); };
  const auto q = f(xd.q), k = f(xd.k), v = f(xd.v), alpha = f(xd.alpha);
  std::vector<float> dout(v.size());
  for (size_t i = 0; i < dout.size(); ++i) dout[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  std::vector<std::vector<float>> outs;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    GlaScan<float> g;
    g.reserve(m, true);
    std::vector<float> o(v.size()), dq(q.size()), dk(k.size()), dv(v.size()), da(alpha.size());
    g.forward(o.data(), q.data(), k.data(), v.data(), alpha.data(), m);
    g.backward(dq.data(), dk.data(), dv.data(), da.data(), dout.data(), q.data(), k.data(), v.data(), alpha.data(), m);
    std::vector<float> all;
    for (const auto* a : {&o, &dq, &dk, &dv, &da}) all.insert(all.end(), a->begin(), a->end());
    outs.push_back(all);
  }
  omp_set_num_threads(1);
  REQUIRE(outs[0].size() == outs[1].size());
  CHECK(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)) == 0);
}
