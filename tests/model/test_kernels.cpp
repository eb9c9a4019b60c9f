// The optimised kernels of model/layers.cpp (float GEMMs on sgemm's register-blocked kernel,
// double ones on Eigen's with persistent packing buffers, the row-pass softmax attention) against
// plain loops written from their definitions, in double, on shapes that cross the fixed chunk
// boundaries (rows past 256, input features past 32); and sgemm against its plain fma loops, bit for bit.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "model/layers.hpp"
#include "model/sgemm.hpp"

namespace {

using namespace srbench::model;

std::vector<float> random_vec(size_t n, uint64_t seed, double sd = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd(0.0, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(nd(gen));
  return v;
}

// max |a − b| / max |b|
double rel_err(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

}  // namespace

TEST_CASE("kernels: matmul forward and backward equal plain loops") {
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

TEST_CASE("kernels: softmax attention forward and backward equal plain loops") {
  const int B = 2, T = 37, H = 3, hs = 8, C = H * hs;
  for (bool alibi : {false, true}) {
    INFO("alibi " << alibi);
    const auto qkv = random_vec(static_cast<size_t>(B) * T * 3 * C, 5), dout = random_vec(static_cast<size_t>(B) * T * C, 6);
    const std::vector<float> slopes = {0.5f, 0.25f, 0.125f};
    const float* sl = alibi ? slopes.data() : nullptr;
    std::vector<float> out(static_cast<size_t>(B) * T * C), att(static_cast<size_t>(B) * H * T * T, 9.0f),
        dqkv(qkv.size(), 9.0f), scratch(static_cast<size_t>(T) * T * omp_get_max_threads());
    attention_forward(out.data(), att.data(), qkv.data(), sl, B, T, C, H);
    attention_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, H);
    std::vector<double> ref_out(out.size(), 0.0), ref_att(att.size(), 0.0), ref_dqkv(dqkv.size(), 0.0);
    auto Q = [&](int b, int t, int part, int d) -> size_t { return (size_t(b) * T + t) * 3 * C + part * C + d; };
    const double scale = 1.0 / std::sqrt(double(hs));
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        for (int i = 0; i < T; ++i) {
          std::vector<double> s(i + 1), p(i + 1), dp(i + 1);
          double mx = -1e300, z = 0;
          for (int j = 0; j <= i; ++j) {
            double dot = 0;
            for (int d = 0; d < hs; ++d) dot += double(qkv[Q(b, i, 0, h * hs + d)]) * qkv[Q(b, j, 1, h * hs + d)];
            s[j] = dot * scale - (alibi ? slopes[h] * double(i - j) : 0.0);
            mx = std::max(mx, s[j]);
          }
          for (int j = 0; j <= i; ++j) z += std::exp(s[j] - mx);
          for (int j = 0; j <= i; ++j) p[j] = std::exp(s[j] - mx) / z;
          for (int j = 0; j <= i; ++j) ref_att[((size_t(b) * H + h) * T + i) * T + j] = p[j];
          const float* g = &dout[(size_t(b) * T + i) * C + h * hs];
          double pdp = 0;
          for (int j = 0; j <= i; ++j) {
            for (int d = 0; d < hs; ++d) {
              const double vj = qkv[Q(b, j, 2, h * hs + d)];
              ref_out[(size_t(b) * T + i) * C + h * hs + d] += p[j] * vj;
              dp[j] += g[d] * vj;
              ref_dqkv[Q(b, j, 2, h * hs + d)] += p[j] * g[d];
            }
            pdp += p[j] * dp[j];
          }
          for (int j = 0; j <= i; ++j) {
            const double dsj = p[j] * (dp[j] - pdp) * scale;
            for (int d = 0; d < hs; ++d) {
              ref_dqkv[Q(b, i, 0, h * hs + d)] += dsj * qkv[Q(b, j, 1, h * hs + d)];
              ref_dqkv[Q(b, j, 1, h * hs + d)] += dsj * qkv[Q(b, i, 0, h * hs + d)];
            }
          }
        }
      }
    CHECK(rel_err(out, ref_out) < 1e-5);
    CHECK(rel_err(att, ref_att) < 1e-5);
    CHECK(rel_err(dqkv, ref_dqkv) < 1e-5);
  }
}

TEST_CASE("kernels: LayerNorm and RMSNorm forward and backward equal plain loops") {
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

TEST_CASE("kernels: sgemm equals its plain fma loops bit for bit, whatever the shape and strides") {
  // Shapes cross every blocking edge of the kernel: partial register tiles in rows (m not a
  // multiple of 6 or 8) and columns (n not a multiple of 16 or 32), row blocks (m > 96), inner
  // blocks (k > 512), and k = 0; operands plain, transposed and with padded strides.
  const int shapes[][3] = {{1, 1, 1},    {7, 33, 5},    {8, 32, 64},  {13, 17, 129}, {97, 65, 40},
                           {200, 96, 513}, {5, 100, 1100}, {64, 31, 0}, {300, 48, 128}};
  int cases = 0;
  for (const auto& sh : shapes) {
    const int m = sh[0], n = sh[1], k = sh[2];
    for (int layout = 0; layout < 4; ++layout) {
      for (GemmInit init : {GemmInit::kAccumulate, GemmInit::kZero, GemmInit::kRow}) {
        const int pad = layout;  // strides wider than the matrices
        const auto a = random_vec(static_cast<size_t>(m + pad) * (k + pad) + 1, 10 + cases);
        const auto b = random_vec(static_cast<size_t>(k + pad) * (n + pad) + 1, 20 + cases);
        const auto row = random_vec(n, 30 + cases);
        const StridedOperand A = layout & 1 ? StridedOperand{a.data(), 1, m + pad} : StridedOperand{a.data(), k + pad, 1};
        const StridedOperand B = layout & 2 ? StridedOperand{b.data(), 1, k + pad} : StridedOperand{b.data(), n + pad, 1};
        const int64_t ldc = n + 3;
        auto c = random_vec(static_cast<size_t>(m) * ldc, 40 + cases);
        auto expect = c;
        sgemm(m, n, k, A, B, c.data(), ldc, init, row.data());
        sgemm_reference(m, n, k, A, B, expect.data(), ldc, init, row.data());
        INFO("m " << m << " n " << n << " k " << k << " layout " << layout << " init " << static_cast<int>(init));
        CHECK(c == expect);  // also the padding between rows, left as it was
        ++cases;
      }
    }
  }
  CHECK(cases == 9 * 4 * 3);
}

TEST_CASE("kernels: sgemm skipping the zeros of a lower-triangular A equals the plain loops") {
  // causal attention products: P (T×T, zero above the diagonal) times V, P stored as is (row
  // stride T) or read transposed from a stored upper-triangular matrix
  for (const int T : {5, 32, 64, 100, 600}) {
    for (const int hs : {7, 16, 32, 40}) {
      for (const bool transposed : {false, true}) {
        auto p = random_vec(static_cast<size_t>(T) * T, 60 + T + hs);
        for (int i = 0; i < T; ++i)
          for (int j = 0; j < T; ++j)
            if (transposed ? i > j : j > i) p[static_cast<size_t>(i) * T + j] = 0.0f;
        const auto v = random_vec(static_cast<size_t>(T) * 3 * hs, 70 + T + hs);
        const StridedOperand P = transposed ? StridedOperand{p.data(), 1, T} : StridedOperand{p.data(), T, 1};
        std::vector<float> o(static_cast<size_t>(T) * hs, 9.0f), expect(o.size(), 9.0f);
        sgemm(T, hs, T, P, {v.data(), 3 * hs, 1}, o.data(), hs, GemmInit::kZero, nullptr, true);
        sgemm_reference(T, hs, T, P, {v.data(), 3 * hs, 1}, expect.data(), hs, GemmInit::kZero);
        INFO("T " << T << " hs " << hs << " transposed " << transposed);
        CHECK(o == expect);
      }
    }
  }
}

TEST_CASE("kernels: sgemm_reference is the product (against double loops)") {
  const int m = 23, n = 41, k = 300;
  const auto a = random_vec(static_cast<size_t>(k) * m, 50), b = random_vec(static_cast<size_t>(k) * n, 51),
             row = random_vec(n, 52);
  std::vector<float> c(static_cast<size_t>(m) * n, 0.0f);
  // A stored transposed (k×m), B row-major (k×n), starting from the row vector
  sgemm_reference(m, n, k, {a.data(), 1, m}, {b.data(), n, 1}, c.data(), n, GemmInit::kRow, row.data());
  std::vector<double> ref(c.size());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = row[j];
      for (int p = 0; p < k; ++p) s += double(a[p * m + i]) * b[p * n + j];
      ref[i * n + j] = s;
    }
  CHECK(rel_err(c, ref) < 1e-5);
}
