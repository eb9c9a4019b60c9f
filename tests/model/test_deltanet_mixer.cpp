// DeltaNet's mixer (model/deltanet_mixer.hpp) against linear-rnn.md's equations computed directly,
// position by position with full K×K states (double), its backward against central finite
// differences on every weight and input element, and the same bits at 1 and 2 threads.
#include <omp.h>

#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/deltanet_mixer.hpp"
#include "tests/model/fd_check.hpp"
#include "tests/model/helpers.hpp"

using srbench::model::DeltaNetDims;
using srbench::model::DeltaNetGrads;
using srbench::model::DeltaNetMixer;
using srbench::model::DeltaNetWeights;

namespace {

// Every tensor of one mixer, flat, with its name and shape; O(1) values.
using Params = srbench::test::NamedTensors;

Params make_params(const DeltaNetDims& m, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01;
  Params p;
  auto add = [&](const std::string& name, int64_t size, double scale, double shift = 0) {
    std::vector<double> v(size);
    for (auto& e : v) e = shift + scale * n01(gen);
    p.names.push_back(name), p.values.push_back(v);
  };
  const int d = m.d, H = m.H;
  const double s = 1 / std::sqrt(static_cast<double>(d));
  add("q_proj", d * d, s), add("k_proj", d * d, s), add("v_proj", d * d, 2.5 * s);
  if (m.K > 0) add("q_conv", d * m.K, 0.8 / std::sqrt(m.K)), add("k_conv", d * m.K, 0.8 / std::sqrt(m.K)), add("v_conv", d * m.K, 0.8 / std::sqrt(m.K));
  add("b_proj", H * d, 1.5 * s);
  if (m.gated) {
    add("a_proj", H * d, s), add("dt_bias", H, 0.5, -0.5);
    std::vector<double> a(H);
    for (int h = 0; h < H; ++h) a[h] = std::log(0.3 + 1.2 * (h + 0.5) / H);
    p.names.push_back("A_log"), p.values.push_back(a);
  }
  if (m.output_gate) add("g_proj", d * d, s);
  add("o_norm", d / H, 0.3, 1.0), add("o_proj", d * d, s);
  return p;
}

template <typename S>
DeltaNetWeights<S> weights_of(Params& p) {
  auto get = [&](const char* n) -> const S* {
    auto& v = p.at(n);
    return v.empty() ? nullptr : v.data();
  };
  return {get("q_proj"), get("k_proj"), get("v_proj"), get("q_conv"), get("k_conv"), get("v_conv"), get("b_proj"),
          get("a_proj"), get("A_log"),  get("dt_bias"), get("g_proj"), get("o_norm"), get("o_proj")};
}

double sig(double x) { return 1 / (1 + std::exp(-x)); }
double silu(double x) { return x * sig(x); }
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

// The equations directly: out (N, d).
std::vector<double> reference(Params& p, const std::vector<double>& u, const DeltaNetDims& m) {
  const int d = m.d, H = m.H, K = m.head_dim(), T = m.T, kappa = m.K;
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto mat = [&](const char* n, int rows, int cols) { return Eigen::Map<const Mat>(p.at(n).data(), rows, cols); };
  std::vector<double> out(m.rows() * d);
  for (int b = 0; b < m.B; ++b) {
    const Eigen::Map<const Mat> U(&u[static_cast<int64_t>(b) * T * d], T, d);
    Mat act[3];
    const char* proj[3] = {"q_proj", "k_proj", "v_proj"};
    const char* conv[3] = {"q_conv", "k_conv", "v_conv"};
    for (int x = 0; x < 3; ++x) {
      const Mat P = U * mat(proj[x], d, d).transpose();  // (T, d)
      Mat C = P;
      if (kappa > 0) {
        const auto W = mat(conv[x], d, kappa);  // conv(x)_t[c] = Σ_i w[c,i] x_{t−κ+1+i}[c]
        for (int t = 0; t < T; ++t)
          for (int c = 0; c < d; ++c) {
            double s = 0;
            for (int i = 0; i < kappa; ++i)
              if (t - kappa + 1 + i >= 0) s += W(c, i) * P(t - kappa + 1 + i, c);
            C(t, c) = s;
          }
      }
      act[x] = C.unaryExpr([](double v) { return silu(v); });
    }
    const Mat bz = U * mat("b_proj", H, d).transpose();
    for (int h = 0; h < H; ++h) {
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(K, K);
      for (int t = 0; t < T; ++t) {
        Eigen::VectorXd q = act[0].row(t).segment(h * K, K).transpose(), k = act[1].row(t).segment(h * K, K).transpose();
        const Eigen::VectorXd v = act[2].row(t).segment(h * K, K).transpose();
        q /= std::sqrt(q.squaredNorm() + 1e-6), k /= std::sqrt(k.squaredNorm() + 1e-6);
        const double beta = m.beta_scale * sig(bz(t, h));
        double alpha = 1;
        if (m.gated) {
          const double z = U.row(t).dot(mat("a_proj", H, d).row(h)) + p.at("dt_bias")[h];
          alpha = std::exp(-std::exp(p.at("A_log")[h]) * softplus(z));
        }
        S = alpha * S * (Eigen::MatrixXd::Identity(K, K) - beta * k * k.transpose()) + beta * v * k.transpose();
        const Eigen::VectorXd o = S * q / std::sqrt(static_cast<double>(K));
        const double rms = std::sqrt(o.squaredNorm() / K + 1e-6);
        for (int i = 0; i < K; ++i) {
          double y = o[i] / rms * p.at("o_norm")[i];
          if (m.output_gate) y *= silu(U.row(t).dot(mat("g_proj", d, d).row(h * K + i)));
          out[(static_cast<int64_t>(b) * T + t) * d + h * K + i] = y;  // before o_proj
        }
      }
    }
  }
  // o_proj
  std::vector<double> res(out.size());
  const auto Wo = mat("o_proj", d, d);
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int i = 0; i < d; ++i) {
      double s = 0;
      for (int j = 0; j < d; ++j) s += Wo(i, j) * out[r * d + j];
      res[r * d + i] = s;
    }
  return res;
}

const DeltaNetDims kCases[] = {
    {2, 9, 8, 2, 4, 1, false, false},  // B T d H κ beta_scale gated output_gate
    {2, 20, 8, 2, 0, 2, true, true},
    {1, 18, 12, 3, 2, 2, true, false},
};

std::vector<double> random_u(const DeltaNetDims& m, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01;
  std::vector<double> u(m.rows() * m.d);
  for (auto& e : u) e = n01(gen);
  return u;
}

}  // namespace

TEST_CASE("deltanet mixer: forward equals the equations computed directly", "[deltanet]") {
  for (const DeltaNetDims& m : kCases) {
    INFO("d " << m.d << " H " << m.H << " kappa " << m.K << " beta_scale " << m.beta_scale << " gated " << m.gated
              << " output_gate " << m.output_gate);
    Params p = make_params(m, 3);
    const std::vector<double> u = random_u(m, 4);
    const std::vector<double> want = reference(p, u, m);
    DeltaNetMixer<double> mix;
    mix.reserve(m, false);
    std::vector<double> out(want.size());
    mix.forward(out.data(), u.data(), weights_of<double>(p), m);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < out.size(); ++i)
      worst = std::max(worst, std::abs(out[i] - want[i])), largest = std::max(largest, std::abs(want[i]));
    CHECK(largest > 0.3);
    CHECK(worst <= 1e-12 * largest);
  }
}

TEST_CASE("deltanet mixer: backward equals central finite differences on every weight and input element",
          "[deltanet][gradients]") {
  for (const DeltaNetDims& m : kCases) {
    INFO("d " << m.d << " H " << m.H << " kappa " << m.K << " gated " << m.gated << " output_gate " << m.output_gate);
    Params p = make_params(m, 7);
    std::vector<double> u = random_u(m, 8), wts = random_u(m, 9);
    DeltaNetMixer<double> mix;
    mix.reserve(m, true);
    std::vector<double> out(u.size());
    auto loss = [&] {
      mix.forward(out.data(), u.data(), weights_of<double>(p), m);
      double s = 0;
      for (size_t i = 0; i < out.size(); ++i) s += out[i] * wts[i];
      return s;
    };
    loss();
    Params grads = p;
    for (auto& v : grads.values) std::fill(v.begin(), v.end(), 0.0);
    auto gptr = [&](const char* n) -> double* {
      auto& v = grads.at(n);
      return v.empty() ? nullptr : v.data();
    };
    const DeltaNetGrads<double> g{gptr("q_proj"), gptr("k_proj"), gptr("v_proj"), gptr("q_conv"), gptr("k_conv"),
                                  gptr("v_conv"), gptr("b_proj"), gptr("a_proj"), gptr("A_log"),  gptr("dt_bias"),
                                  gptr("g_proj"), gptr("o_norm"), gptr("o_proj")};
    std::vector<double> du(u.size());
    mix.backward(du.data(), g, wts.data(), u.data(), weights_of<double>(p), m);
    const double h = 1e-6;
    auto check = [&](std::vector<double>& x, const std::vector<double>& grad, const std::string& name) {
      srbench::test::check_elements(x, grad, loss, name, h, 1e-7, 1e-5, 1e-4);
    };
    for (size_t t = 0; t < p.names.size(); ++t) check(p.values[t], grads.values[t], p.names[t]);
    check(u, du, "u");
  }
}

TEST_CASE("deltanet mixer: the same bits at 1 and 2 threads, forward and backward", "[deltanet]") {
  const DeltaNetDims m{4, 40, 32, 2, 4, 2, true, true};
  Params pd = make_params(m, 1);
  std::vector<std::vector<float>> pf;
  for (const auto& v : pd.values) pf.emplace_back(v.begin(), v.end());
  auto fget = [&](const char* n) -> const float* {
    for (size_t i = 0; i < pd.names.size(); ++i)
      if (pd.names[i] == n) return pf[i].data();
    return nullptr;
  };
  const DeltaNetWeights<float> w{fget("q_proj"), fget("k_proj"), fget("v_proj"), fget("q_conv"), fget("k_conv"),
                                 fget("v_conv"), fget("b_proj"), fget("a_proj"), fget("A_log"),  fget("dt_bias"),
                                 fget("g_proj"), fget("o_norm"), fget("o_proj")};
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
    const DeltaNetGrads<float> g{gget("q_proj"), gget("k_proj"), gget("v_proj"), gget("q_conv"), gget("k_conv"),
                                 gget("v_conv"), gget("b_proj"), gget("a_proj"), gget("A_log"),  gget("dt_bias"),
                                 gget("g_proj"), gget("o_norm"), gget("o_proj")};
    DeltaNetMixer<float> mix;
    mix.reserve(m, true);
    std::vector<float> out(u.size()), du(u.size());
    mix.forward(out.data(), u.data(), w, m);
    mix.backward(du.data(), g, dout.data(), u.data(), w, m);
    std::vector<float> all(out);
    all.insert(all.end(), du.begin(), du.end());
    for (const auto& v : gs) all.insert(all.end(), v.begin(), v.end());
    results.push_back(all);
  }
  omp_set_num_threads(1);
  CHECK(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)) == 0);
}
