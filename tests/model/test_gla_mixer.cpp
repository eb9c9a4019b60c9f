// GLA's mixer (model/gla_mixer.hpp) against linear-rnn.md's equations computed directly, position
// by position with full V×K states (double), its backward against central finite differences on
// every weight and input element, and the same bits at 1 and 2 threads.
#include <omp.h>

#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/gla_mixer.hpp"
#include "tests/model/fd_check.hpp"
#include "tests/model/helpers.hpp"

using srbench::model::GlaGrads;
using srbench::model::GlaMixer;
using srbench::model::GlaMixerDims;
using srbench::model::GlaWeights;

namespace {

// Every tensor of one mixer, flat, with its name; O(1) values (linear-rnn.md's perturbation: the
// gate's bias U(−10, 1) with gain 2 on gk_proj.1, so logsigmoid works in its bend and its linear part).
using Params = srbench::test::NamedTensors;

constexpr int R = GlaMixerDims::kGateRank;

Params make_params(const GlaMixerDims& m, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01;
  std::uniform_real_distribution<double> ub(-10.0, 1.0);
  Params p;
  auto add = [&](const std::string& name, int64_t size, double scale, double shift = 0) {
    std::vector<double> v(size);
    for (auto& e : v) e = shift + scale * n01(gen);
    p.names.push_back(name), p.values.push_back(v);
  };
  const int d = m.d, d2 = d / 2;
  const double s = 1 / std::sqrt(static_cast<double>(d));
  add("q_proj", d2 * d, s), add("k_proj", d2 * d, s), add("v_proj", d * d, s), add("g_proj", d * d, s);
  if (m.gated) {
    add("gk0", R * d, s), add("gk1", d2 * R, 2.0 / std::sqrt(static_cast<double>(R)));
    std::vector<double> b(d2);
    for (auto& e : b) e = ub(gen);
    p.names.push_back("gk1_bias"), p.values.push_back(b);
  }
  add("o_norm", d / m.H, 0.3, 1.0), add("o_proj", d * d, s);
  return p;
}

template <typename S, typename P>
GlaWeights<S> weights_of(P get) {
  return {get("q_proj"), get("k_proj"), get("v_proj"), get("g_proj"), get("gk0"),
          get("gk1"),    get("gk1_bias"), get("o_norm"), get("o_proj")};
}
template <typename S, typename P>
GlaGrads<S> grads_of(P get) {
  return {get("q_proj"), get("k_proj"), get("v_proj"), get("g_proj"), get("gk0"),
          get("gk1"),    get("gk1_bias"), get("o_norm"), get("o_proj")};
}

double sig(double x) { return 1 / (1 + std::exp(-x)); }
double silu(double x) { return x * sig(x); }
double logsigmoid(double x) { return x < -20 ? x : -std::log1p(std::exp(-x)); }

// The equations directly: out (N, d).
std::vector<double> reference(Params& p, const std::vector<double>& u, const GlaMixerDims& m) {
  const int d = m.d, d2 = d / 2, H = m.H, K = m.key_dim(), V = m.value_dim(), T = m.T;
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto mat = [&](const char* n, int rows, int cols) { return Eigen::Map<const Mat>(p.at(n).data(), rows, cols); };
  std::vector<double> top(m.rows() * d);
  for (int b = 0; b < m.B; ++b) {
    const Eigen::Map<const Mat> U(&u[static_cast<int64_t>(b) * T * d], T, d);
    const Mat Q = U * mat("q_proj", d2, d).transpose(), Kt = U * mat("k_proj", d2, d).transpose();
    const Mat Vt = U * mat("v_proj", d, d).transpose(), G = U * mat("g_proj", d, d).transpose();
    Mat A = Mat::Ones(T, d2);
    if (m.gated) {
      Mat Z = (U * mat("gk0", R, d).transpose()) * mat("gk1", d2, R).transpose();
      for (int t = 0; t < T; ++t)
        for (int j = 0; j < d2; ++j) A(t, j) = std::exp(logsigmoid(Z(t, j) + p.at("gk1_bias")[j]) / 16.0);
    }
    for (int h = 0; h < H; ++h) {
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(V, K);
      for (int t = 0; t < T; ++t) {
        const Eigen::VectorXd q = Q.row(t).segment(h * K, K).transpose(), k = Kt.row(t).segment(h * K, K).transpose();
        const Eigen::VectorXd v = Vt.row(t).segment(h * V, V).transpose();
        const Eigen::VectorXd a = A.row(t).segment(h * K, K).transpose();
        S = S * a.asDiagonal();
        S += v * k.transpose();
        const Eigen::VectorXd o = S * q / std::sqrt(static_cast<double>(K));
        const double rms = std::sqrt(o.squaredNorm() / V + 1e-6);
        for (int i = 0; i < V; ++i)
          top[(static_cast<int64_t>(b) * T + t) * d + h * V + i] = o[i] / rms * p.at("o_norm")[i] * silu(G(t, h * V + i));
      }
    }
  }
  std::vector<double> res(top.size());
  const auto Wo = mat("o_proj", d, d);
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int i = 0; i < d; ++i) {
      double s = 0;
      for (int j = 0; j < d; ++j) s += Wo(i, j) * top[r * d + j];
      res[r * d + i] = s;
    }
  return res;
}

const GlaMixerDims kCases[] = {
    {2, 9, 8, 2, true},  // B T d H gated
    {2, 20, 12, 3, true},
    {1, 18, 8, 1, false},
};

std::vector<double> random_u(const GlaMixerDims& m, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01;
  std::vector<double> u(m.rows() * m.d);
  for (auto& e : u) e = n01(gen);
  return u;
}

}  // namespace

TEST_CASE("gla mixer: forward equals the equations computed directly", "[gla]") {
  for (const GlaMixerDims& m : kCases) {
    INFO("d " << m.d << " H " << m.H << " gated " << m.gated);
    Params p = make_params(m, 3);
    const std::vector<double> u = random_u(m, 4);
    const std::vector<double> want = reference(p, u, m);
    GlaMixer<double> mix;
    mix.reserve(m, false);
    std::vector<double> out(want.size());
    mix.forward(out.data(), u.data(), weights_of<double>([&](const char* n) -> const double* {
                  auto& v = p.at(n);
                  return v.empty() ? nullptr : v.data();
                }),
                m);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < out.size(); ++i)
      worst = std::max(worst, std::abs(out[i] - want[i])), largest = std::max(largest, std::abs(want[i]));
    CHECK(largest > 0.3);
    CHECK(worst <= 1e-12 * largest);
  }
}

TEST_CASE("gla mixer: backward equals central finite differences on every weight and input element",
          "[gla][gradients]") {
  for (const GlaMixerDims& m : kCases) {
    INFO("d " << m.d << " H " << m.H << " gated " << m.gated);
    Params p = make_params(m, 7);
    std::vector<double> u = random_u(m, 8), wts = random_u(m, 9);
    GlaMixer<double> mix;
    mix.reserve(m, true);
    std::vector<double> out(u.size());
    auto wget = [&](const char* n) -> const double* {
      auto& v = p.at(n);
      return v.empty() ? nullptr : v.data();
    };
    auto loss = [&] {
      mix.forward(out.data(), u.data(), weights_of<double>(wget), m);
      double s = 0;
      for (size_t i = 0; i < out.size(); ++i) s += out[i] * wts[i];
      return s;
    };
    loss();
    Params grads = p;
    for (auto& v : grads.values) std::fill(v.begin(), v.end(), 0.0);
    std::vector<double> du(u.size());
    mix.backward(du.data(), grads_of<double>([&](const char* n) -> double* {
                   auto& v = grads.at(n);
                   return v.empty() ? nullptr : v.data();
                 }),
                 wts.data(), u.data(), weights_of<double>(wget), m);
    const double h = 1e-6;
    auto check = [&](std::vector<double>& x, const std::vector<double>& grad, const std::string& name) {
      srbench::test::check_elements(x, grad, loss, name, h, 1e-7, 1e-5, 1e-4);
    };
    for (size_t t = 0; t < p.names.size(); ++t) check(p.values[t], grads.values[t], p.names[t]);
    check(u, du, "u");
  }
}

TEST_CASE("gla mixer: the same bits at 1 and 2 threads, forward and backward", "[gla]") {
  const GlaMixerDims m{4, 40, 32, 2, true};
  Params pd = make_params(m, 1);
  std::vector<std::vector<float>> pf;
  for (const auto& v : pd.values) pf.emplace_back(v.begin(), v.end());
  auto fget = [&](const char* n) -> const float* {
    for (size_t i = 0; i < pd.names.size(); ++i)
      if (pd.names[i] == n) return pf[i].data();
    return nullptr;
  };
  const std::vector<double> ud = random_u(m, 2), dd = random_u(m, 5);
  const std::vector<float> u(ud.begin(), ud.end()), dout(dd.begin(), dd.end());
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<std::vector<float>> gs;
    for (const auto& v : pf) gs.emplace_back(v.size(), 0.0f);
    auto gget = [&](const char* n) -> float* {
      for (size_t i = 0; i < pd.names.size(); ++i)
        if (pd.names[i] == n) return gs[i].data();
      return nullptr;
    };
    GlaMixer<float> mix;
    mix.reserve(m, true);
    std::vector<float> out(u.size()), du(u.size());
    mix.forward(out.data(), u.data(), weights_of<float>(fget), m);
    mix.backward(du.data(), grads_of<float>(gget), dout.data(), u.data(), weights_of<float>(fget), m);
    std::vector<float> all(out);
    all.insert(all.end(), du.begin(), du.end());
    for (const auto& v : gs) all.insert(all.end(), v.begin(), v.end());
    results.push_back(all);
  }
  omp_set_num_threads(1);
  CHECK(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)) == 0);
}
