// The Mamba-1 mixer (model/mamba_mixer.hpp) against an independent loop written from
// linear-rnn.md's equations (every state kept), its backward against central finite differences
// on every weight and input element, positive and signed eigenvalues, over several scan chunks;
// and the same bits at 1 and 2 threads.
#include <omp.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/mamba_mixer.hpp"
#include "tests/model/fd_check.hpp"

using srbench::model::MambaDims;
using srbench::model::MambaGrads;
using srbench::model::MambaMixer;
using srbench::model::MambaWeights;

namespace {

// One mixer's parameters as plain arrays, named as in the reference.
template <typename S>
struct Params {
  std::vector<S> in_proj, conv_w, conv_b, x_proj, dt_w, dt_b, A_log, D, out_proj;
  std::vector<std::vector<S>*> all() {
    return {&in_proj, &conv_w, &conv_b, &x_proj, &dt_w, &dt_b, &A_log, &D, &out_proj};
  }
  MambaWeights<S> weights() const {
    return {in_proj.data(), conv_w.data(), conv_b.data(), x_proj.data(), dt_w.data(),
            dt_b.data(), A_log.data(), D.data(),      out_proj.data()};
  }
  MambaGrads<S> grads() {
    return {in_proj.data(), conv_w.data(), conv_b.data(), x_proj.data(), dt_w.data(),
            dt_b.data(), A_log.data(), D.data(),      out_proj.data()};
  }
};

const char* const kNames[] = {"in_proj", "conv_w", "conv_b", "x_proj", "dt_w", "dt_b", "A_log", "D", "out_proj"};

template <typename S>
Params<S> sized(const MambaDims& m) {
  Params<S> p;
  p.in_proj.resize(2 * m.E * m.d), p.conv_w.resize(m.E * m.K), p.conv_b.resize(m.E);
  p.x_proj.resize((m.R + 2 * m.N) * m.E), p.dt_w.resize(m.E * m.R), p.dt_b.resize(m.E);
  p.A_log.resize(m.E * m.N), p.D.resize(m.E), p.out_proj.resize(m.d * m.E);
  return p;
}

// Weights of order one (so that every term matters), Δ's bias spread over softplus's range.
Params<double> random_params(const MambaDims& m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-0.6, 0.6);
  Params<double> p = sized<double>(m);
  for (auto* v : p.all())
    for (double& x : *v) x = U(rng);
  std::uniform_real_distribution<double> bias(-3.0, 1.0), alog(-1.0, 1.5);
  for (double& x : p.dt_b) x = bias(rng);
  for (double& x : p.A_log) x = alog(rng);
  return p;
}

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }
double silu(double v) { return v * sigmoid(v); }

// The mixer straight from the equations (double; every state kept).
std::vector<double> reference(const std::vector<double>& u, const Params<double>& p, const MambaDims& m) {
  const int B = m.B, T = m.T, d = m.d, E = m.E, N = m.N, R = m.R, K = m.K;
  std::vector<double> out(static_cast<size_t>(B) * T * d, 0.0);
  for (int b = 0; b < B; ++b) {
    std::vector<std::vector<double>> xt(T, std::vector<double>(E)), z(T, std::vector<double>(E));
    for (int t = 0; t < T; ++t)
      for (int o = 0; o < 2 * E; ++o) {
        double acc = 0;
        for (int i = 0; i < d; ++i) acc += p.in_proj[o * d + i] * u[(b * T + t) * d + i];
        (o < E ? xt[t][o] : z[t][o - E]) = acc;
      }
    std::vector<double> s(static_cast<size_t>(E) * N, 0.0);
    for (int t = 0; t < T; ++t) {
      std::vector<double> x(E), y(E);
      for (int e = 0; e < E; ++e) {
        double c = p.conv_b[e];
        for (int i = 0; i < K; ++i) {
          const int src = t - K + 1 + i;
          if (src >= 0) c += p.conv_w[e * K + i] * xt[src][e];
        }
        x[e] = silu(c);
      }
      std::vector<double> dbl(R + 2 * N, 0.0);
      for (int o = 0; o < R + 2 * N; ++o)
        for (int e = 0; e < E; ++e) dbl[o] += p.x_proj[o * E + e] * x[e];
      for (int e = 0; e < E; ++e) {
        double v = p.dt_b[e];
        for (int r = 0; r < R; ++r) v += p.dt_w[e * R + r] * dbl[r];
        const double delta = v > 20 ? v : std::log1p(std::exp(v));
        double acc = 0;
        for (int k = 0; k < N; ++k) {
          const double A = -std::exp(p.A_log[e * N + k]);
          double a = std::exp(delta * A);
          if (m.signed_eigenvalues) a = 2 * a - 1;
          s[e * N + k] = a * s[e * N + k] + delta * x[e] * dbl[R + k];
          acc += s[e * N + k] * dbl[R + N + k];
        }
        y[e] = (acc + p.D[e] * x[e]) * silu(z[t][e]);
      }
      for (int o = 0; o < d; ++o) {
        double acc = 0;
        for (int e = 0; e < E; ++e) acc += p.out_proj[o * E + e] * y[e];
        out[(b * T + t) * d + o] = acc;
      }
    }
  }
  return out;
}

template <typename S>
std::vector<S> run_forward(MambaMixer<S>& mix, const std::vector<S>& u, const Params<S>& p, const MambaDims& m,
                           bool need_grads) {
  std::vector<S> out(static_cast<size_t>(m.rows()) * m.d);
  mix.reserve(m, need_grads);
  mix.forward(out.data(), u.data(), p.weights(), m);
  return out;
}

template <typename To>
std::vector<To> cast(const std::vector<double>& v) {
  return std::vector<To>(v.begin(), v.end());
}
Params<float> cast_params(const Params<double>& p) {
  Params<float> f;
  f.in_proj = cast<float>(p.in_proj), f.conv_w = cast<float>(p.conv_w), f.conv_b = cast<float>(p.conv_b);
  f.x_proj = cast<float>(p.x_proj), f.dt_w = cast<float>(p.dt_w), f.dt_b = cast<float>(p.dt_b);
  f.A_log = cast<float>(p.A_log), f.D = cast<float>(p.D), f.out_proj = cast<float>(p.out_proj);
  return f;
}

MambaDims dims(bool signed_eig) {
  MambaDims m;
  m.B = 2, m.T = 37, m.d = 5, m.E = 6, m.N = 3, m.R = 2, m.K = 4;  // 37 positions: three scan chunks
  m.signed_eigenvalues = signed_eig;
  return m;
}

}  // namespace

TEST_CASE("mamba mixer: forward equals the equations computed directly (double and float)", "[model][mamba]") {
  for (const bool signed_eig : {false, true}) {
    INFO("signed eigenvalues: " << signed_eig);
    const MambaDims m = dims(signed_eig);
    const Params<double> p = random_params(m, 7);
    std::mt19937_64 rng(11);
    std::normal_distribution<double> G(0.0, 1.0);
    std::vector<double> u(static_cast<size_t>(m.rows()) * m.d);
    for (double& x : u) x = G(rng);
    const std::vector<double> want = reference(u, p, m);
    MambaMixer<double> md;
    const std::vector<double> got = run_forward(md, u, p, m, false);
    double scale = 0;
    for (double x : want) scale = std::max(scale, std::abs(x));
    REQUIRE(scale > 0.1);  // the outputs are not all near zero
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-12 * scale);
    MambaMixer<float> mf;
    const std::vector<float> gotf = run_forward(mf, cast<float>(u), cast_params(p), m, false);
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(gotf[i] - want[i]) <= 2e-5 * scale);
  }
}

TEST_CASE("mamba mixer: backward equals central finite differences on every weight and input element",
          "[model][mamba]") {
  for (const bool signed_eig : {false, true}) {
    INFO("signed eigenvalues: " << signed_eig);
    const MambaDims m = dims(signed_eig);
    Params<double> p = random_params(m, 3);
    std::mt19937_64 rng(5);
    std::normal_distribution<double> G(0.0, 1.0);
    std::vector<double> u(static_cast<size_t>(m.rows()) * m.d), r(u.size());
    for (double& x : u) x = G(rng);
    for (double& x : r) x = G(rng);
    MambaMixer<double> mix;
    auto loss = [&] {  // L = Σ out ⊙ r
      const std::vector<double> out = run_forward(mix, u, p, m, false);
      double acc = 0;
      for (size_t i = 0; i < out.size(); ++i) acc += out[i] * r[i];
      return acc;
    };
    run_forward(mix, u, p, m, true);
    Params<double> g = sized<double>(m);
    std::vector<double> du(u.size());
    mix.backward(du.data(), g.grads(), r.data(), u.data(), p.weights(), m);
    const double h = 1e-6;
    auto check = [&](std::vector<double>& x, const std::vector<double>& analytic, const std::string& name) {
      srbench::test::check_elements(x, analytic, loss, name, h, 1e-7, 1e-6, 1e-4);  // not zero everywhere
    };
    auto params = p.all();
    auto grads = g.all();
    for (size_t t = 0; t < params.size(); ++t) check(*params[t], *grads[t], kNames[t]);
    check(u, du, "u");
  }
}

TEST_CASE("mamba mixer: the same bits at 1 and 2 threads, forward and backward", "[model][mamba]") {
  MambaDims m;
  m.B = 4, m.T = 40, m.d = 8, m.E = 16, m.N = 16, m.R = 2, m.K = 4, m.signed_eigenvalues = true;
  const Params<float> p = cast_params(random_params(m, 9));
  std::mt19937_64 rng(2);
  std::normal_distribution<float> G(0.0f, 1.0f);
  std::vector<float> u(static_cast<size_t>(m.rows()) * m.d), r(u.size());
  for (float& x : u) x = G(rng);
  for (float& x : r) x = G(rng);
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    MambaMixer<float> mix;
    std::vector<float> out = run_forward(mix, u, p, m, true);
    Params<float> g = sized<float>(m);
    std::vector<float> du(u.size());
    mix.backward(du.data(), g.grads(), r.data(), u.data(), p.weights(), m);
    for (auto* v : g.all()) out.insert(out.end(), v->begin(), v->end());
    out.insert(out.end(), du.begin(), du.end());
    return out;
  };
  const std::vector<float> one = run(1), two = run(2);
  omp_set_num_threads(1);
  REQUIRE(one.size() == two.size());
  size_t differ = 0;
  for (size_t i = 0; i < one.size(); ++i) differ += std::memcmp(&one[i], &two[i], sizeof(float)) != 0;
  CHECK(differ == 0);
}
