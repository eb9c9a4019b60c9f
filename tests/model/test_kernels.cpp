// The optimised kernels of model/layers.cpp (float GEMMs on sgemm's register-blocked kernel,
// double ones on Eigen's with persistent packing buffers, the row-pass softmax attention) against
// plain loops written from their definitions, in double, on shapes that cross the fixed chunk
// boundaries (rows past 256, input features past 32). sgemm itself: test_sgemm.cpp.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "model/attention.hpp"
#include "model/layers.hpp"
#include "tests/model/kernel_test_util.hpp"

using namespace srbench::model;
using srbench::test::random_vec;
using srbench::test::rel_err;

TEST_CASE("kernels: matmul forward and backward equal plain loops", "[kernels][gradients][reference]") {
  const int N = 300, C = 40, OC = 200;  // 2 row chunks, 2 input-feature chunks, 2 bias halves
  const auto x = random_vec(static_cast<size_t>(N) * C, 1), w = random_vec(static_cast<size_t>(OC) * C, 2),
             bias = random_vec(OC, 3), dout = random_vec(static_cast<size_t>(N) * OC, 4);
  std::vector<float> out(static_cast<size_t>(N) * OC), dinp(static_cast<size_t>(N) * C, 7.0f),
      dw(static_cast<size_t>(OC) * C, 0.5f), db(OC, 0.25f);
  matmul_forward(out.data(), x.data(), w.data(), bias.data(), N, C, OC);
  matmul_backward(dinp.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), N, C, OC);
  std::vector<double> ref_out(out.size()), ref_dinp(dinp.size(), 0.0), ref_dw(dw.size(), 0.5), ref_db(OC, 0.25);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) {
      double s = bias[o];
      for (int c = 0; c < C; ++c) s += double(x[n * C + c]) * w[o * C + c];
      ref_out[n * OC + o] = s;
      const double g = dout[n * OC + o];
      ref_db[o] += g;
      for (int c = 0; c < C; ++c) {
        ref_dinp[n * C + c] += g * w[o * C + c];  // overwritten, not added to the 7s
        ref_dw[o * C + c] += g * x[n * C + c];    // added to the 0.5s
      }
    }
  CHECK(rel_err(out, ref_out) < 1e-6);
  CHECK(rel_err(dinp, ref_dinp) < 1e-6);
  CHECK(rel_err(dw, ref_dw) < 1e-6);
  CHECK(rel_err(db, ref_db) < 1e-6);
  // without bias: out starts from 0
  matmul_forward(out.data(), x.data(), w.data(), static_cast<const float*>(nullptr), N, C, OC);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) ref_out[n * OC + o] -= bias[o];
  CHECK(rel_err(out, ref_out) < 1e-6);
}

TEST_CASE("kernels: softmax attention forward and backward equal plain loops", "[kernels][gradients][reference]") {
  // Causal, and bidirectional over each example's own keys (lengths 37, 20 and 1: the rest of a
  // row is padding, masked), each with and without ALiBi (causal −s_h·(i−j); bidirectional
  // symmetric, s_h·(−|i−j| + ½·[j < i])).
  const int B = 3, T = 37, H = 3, hs = 8, C = H * hs;
  const std::vector<int32_t> lengths = {37, 20, 1};
  for (bool causal : {true, false})
    for (bool alibi : {false, true}) {
      INFO("causal " << causal << ", alibi " << alibi);
      const auto qkv = random_vec(static_cast<size_t>(B) * T * 3 * C, 5),
                 dout = random_vec(static_cast<size_t>(B) * T * C, 6);
      const std::vector<float> slopes = {0.5f, 0.25f, 0.125f};
      const AttentionKeys keys{causal, causal ? nullptr : lengths.data()};
      const ScoreTerms<float> terms{alibi ? slopes.data() : nullptr};
      std::vector<float> out(static_cast<size_t>(B) * T * C), att(static_cast<size_t>(B) * H * T * T, 9.0f),
          dqkv(qkv.size(), 9.0f), scratch(static_cast<size_t>(T) * T * omp_get_max_threads());
      attention_forward(out.data(), att.data(), qkv.data(), keys, terms, B, T, C, H);
      attention_backward(dqkv.data(), RelativeGrads<float>{}, scratch.data(), dout.data(), qkv.data(), att.data(), keys,
                         terms, B, T, C, H);
      std::vector<double> ref_out(out.size(), 0.0), ref_att(att.size(), 0.0), ref_dqkv(dqkv.size(), 0.0);
      auto Q = [&](int b, int t, int part, int d) -> size_t { return (size_t(b) * T + t) * 3 * C + part * C + d; };
      const double scale = 1.0 / std::sqrt(double(hs));
      for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h) {
          for (int i = 0; i < T; ++i) {
            const int end = causal ? i + 1 : lengths[b];  // keys j < end
            std::vector<double> s(end), p(end), dp(end);
            double mx = -1e300, z = 0;
            for (int j = 0; j < end; ++j) {
              double dot = 0;
              for (int d = 0; d < hs; ++d) dot += double(qkv[Q(b, i, 0, h * hs + d)]) * qkv[Q(b, j, 1, h * hs + d)];
              const double bias = causal ? -double(i - j) : -std::abs(double(i - j)) + (j < i ? 0.5 : 0.0);
              s[j] = dot * scale + (alibi ? slopes[h] * bias : 0.0);
              mx = std::max(mx, s[j]);
            }
            for (int j = 0; j < end; ++j) z += std::exp(s[j] - mx);
            for (int j = 0; j < end; ++j) p[j] = std::exp(s[j] - mx) / z;
            for (int j = 0; j < end; ++j) ref_att[((size_t(b) * H + h) * T + i) * T + j] = p[j];
            const float* g = &dout[(size_t(b) * T + i) * C + h * hs];
            double pdp = 0;
            for (int j = 0; j < end; ++j) {
              for (int d = 0; d < hs; ++d) {
                const double vj = qkv[Q(b, j, 2, h * hs + d)];
                ref_out[(size_t(b) * T + i) * C + h * hs + d] += p[j] * vj;
                dp[j] += g[d] * vj;
                ref_dqkv[Q(b, j, 2, h * hs + d)] += p[j] * g[d];
              }
              pdp += p[j] * dp[j];
            }
            for (int j = 0; j < end; ++j) {
              const double dsj = p[j] * (dp[j] - pdp) * scale;
              for (int d = 0; d < hs; ++d) {
                ref_dqkv[Q(b, i, 0, h * hs + d)] += dsj * qkv[Q(b, j, 1, h * hs + d)];
                ref_dqkv[Q(b, j, 1, h * hs + d)] += dsj * qkv[Q(b, i, 0, h * hs + d)];
              }
            }
          }
        }
      CHECK(rel_err(out, ref_out) < 1e-5);
      CHECK(rel_err(att, ref_att) < 1e-5);  // zeros included: no weight past a row's keys
      CHECK(rel_err(dqkv, ref_dqkv) < 1e-5);  // zeros included: padding keys and values get no gradient
    }
}

TEST_CASE("kernels: LayerNorm and RMSNorm forward and backward equal plain loops", "[kernels][gradients][reference]") {
  // C = 70: four full groups of the 16 partial sums plus a remainder of 6.
  const int N = 5, C = 70;
  const auto x = random_vec(static_cast<size_t>(N) * C, 11, 2.0), w = random_vec(C, 12), bias = random_vec(C, 13),
             dout = random_vec(static_cast<size_t>(N) * C, 14);
  std::vector<float> out(x.size()), mean(N), rstd(N), dinp(x.size(), 0.5f), dw(C, 0.25f), db(C, 0.125f);
  layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), bias.data(), N, C);
  layernorm_backward(dinp.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), mean.data(), rstd.data(), N,
                     C);
  std::vector<float> rout(x.size()), rrstd(N), rdinp(x.size(), 0.5f), rdw(C, 0.25f);
  rmsnorm_forward(rout.data(), rrstd.data(), x.data(), w.data(), N, C);
  rmsnorm_backward(rdinp.data(), rdw.data(), dout.data(), x.data(), w.data(), rrstd.data(), N, C);
  std::vector<double> ref_out(x.size()), ref_dinp(x.size(), 0.5), ref_dw(C, 0.25), ref_db(C, 0.125);
  std::vector<double> ref_rout(x.size()), ref_rdinp(x.size(), 0.5), ref_rdw(C, 0.25), ref_mean(N), ref_rstd(N),
      ref_rrstd(N);
  for (int n = 0; n < N; ++n) {
    const float* xr = &x[size_t(n) * C];
    const float* g = &dout[size_t(n) * C];
    double m = 0, v = 0, ss = 0;
    for (int c = 0; c < C; ++c) m += xr[c], ss += double(xr[c]) * xr[c];
    m /= C;
    for (int c = 0; c < C; ++c) v += (xr[c] - m) * (xr[c] - m);
    const double s = 1.0 / std::sqrt(v / C + 1e-5), r = 1.0 / std::sqrt(ss / C + 1e-5);
    ref_mean[n] = m, ref_rstd[n] = s, ref_rrstd[n] = r;
    // dx = s·(w·g − mean(w·g) − xhat·mean(w·g·xhat)); RMS: dx = r·w·g − x·r³·mean(x·w·g).
    double a = 0, b = 0, ra = 0;
    for (int c = 0; c < C; ++c) {
      const double xhat = (xr[c] - m) * s;
      ref_out[size_t(n) * C + c] = xhat * w[c] + bias[c];
      ref_rout[size_t(n) * C + c] = xr[c] * r * w[c];
      a += w[c] * double(g[c]), b += w[c] * double(g[c]) * xhat, ra += double(xr[c]) * w[c] * g[c];
      ref_dw[c] += g[c] * xhat, ref_db[c] += g[c], ref_rdw[c] += g[c] * xr[c] * r;
    }
    a /= C, b /= C, ra /= C;
    for (int c = 0; c < C; ++c) {
      ref_dinp[size_t(n) * C + c] += s * (w[c] * double(g[c]) - a - (xr[c] - m) * s * b);
      ref_rdinp[size_t(n) * C + c] += r * w[c] * g[c] - xr[c] * r * r * r * ra;
    }
  }
  CHECK(rel_err(out, ref_out) < 1e-6);
  CHECK(rel_err(mean, ref_mean) < 1e-6);
  CHECK(rel_err(rstd, ref_rstd) < 1e-6);
  CHECK(rel_err(dinp, ref_dinp) < 1e-5);
  CHECK(rel_err(dw, ref_dw) < 1e-6);
  CHECK(rel_err(db, ref_db) < 1e-6);
  CHECK(rel_err(rout, ref_rout) < 1e-6);
  CHECK(rel_err(rrstd, ref_rrstd) < 1e-6);
  CHECK(rel_err(rdinp, ref_rdinp) < 1e-5);
  CHECK(rel_err(rdw, ref_rdw) < 1e-6);
}
