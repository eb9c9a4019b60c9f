// Float erf, exp, log1p, tanh, σ and softplus for elementwise loops (internal to model/). Plain code with std::fma, so the
// compiler's vectorised loop body and its scalar remainder compute bit-identical values: results
// do not depend on a buffer's alignment (unlike Eigen's array erf/exp, whose unaligned head falls
// back to libm). Accuracy: a few ulp.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace srbench::model::fastmath {

// erf(x), Eigen's rational approximation (generic_fast_erf_float): odd numerator of degree 13,
// even denominator of degree 8, inputs clamped to [-4, 4] (erf is ±1 in float beyond).
inline float erf(float a) {
  const float x = std::min(4.0f, std::max(-4.0f, a));
  const float x2 = x * x;
  float p = std::fma(x2, -2.72614225801306e-10f, 2.77068142495902e-08f);
  p = std::fma(x2, p, -2.10102402082508e-06f);
  p = std::fma(x2, p, -5.69250639462346e-05f);
  p = std::fma(x2, p, -7.34990630326855e-04f);
  p = std::fma(x2, p, -2.95459980854025e-03f);
  p = std::fma(x2, p, -1.60960333262415e-02f);
  p = x * p;
  float q = std::fma(x2, -1.45660718464996e-05f, -2.13374055278905e-04f);
  q = std::fma(x2, q, -1.68282697438203e-03f);
  q = std::fma(x2, q, -7.37332916720468e-03f);
  q = std::fma(x2, q, -1.42647390514189e-02f);
  return p / q;
}

// exp(x) for x <= 0 (Cephes expf): x = n·ln2 + r, |r| <= ln2/2, exp(r) by a degree-7 polynomial,
// times 2^n built in the exponent bits. Inputs below -87 give exp(-87) ≈ 1.6e-38 (not 0).
inline float exp_nonpositive(float x) {
  x = std::max(x, -87.0f);
  // n = round(x·log2 e): 0.5 − x·log2 e > 0, so truncation is floor (and, unlike std::floor,
  // vectorises).
  const float n = -static_cast<float>(static_cast<int32_t>(std::fma(x, -1.44269504088896341f, 0.5f)));
  float r = std::fma(n, -0.693359375f, x);
  r = std::fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  const float y = std::fma(p, r * r, r) + 1.0f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return y * scale;
}

// log(1 + y) for y in [0, 1] (Cephes logf on u = 1 + y, plus the rounding of 1 + y put back:
// (y − (u − 1)) / u, so that a tiny y gives y): u = m·2^e with m in [√½, √2), log m by a
// degree-9 polynomial in m − 1. Bit operations and selects only, so it vectorises. Accuracy: a few ulp.
[[gnu::always_inline]] inline float log1p_unit(float y) {
  const float u = 1.0f + y;
  const float c = (y - (u - 1.0f)) / u;
  const int32_t bits = std::bit_cast<int32_t>(u);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  float e = static_cast<float>((bits >> 23) - 126);
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1.0f : e;
  const float x = low ? m + m - 1.0f : m - 1.0f;  // [√½ − 1, √2 − 1)
  const float z = x * x;
  float p = 7.0376836292e-2f;
  p = std::fma(p, x, -1.1514610310e-1f);
  p = std::fma(p, x, 1.1676998740e-1f);
  p = std::fma(p, x, -1.2420140846e-1f);
  p = std::fma(p, x, 1.4249322787e-1f);
  p = std::fma(p, x, -1.6668057665e-1f);
  p = std::fma(p, x, 2.0000714765e-1f);
  p = std::fma(p, x, -2.4999993993e-1f);
  p = std::fma(p, x, 3.3333331174e-1f);
  float r = x * z * p;
  r = std::fma(e, -2.12194440e-4f, r);
  r = std::fma(z, -0.5f, r);
  return std::fma(e, 0.693359375f, x + r) + c;
}

// softplus(v) = log(1 + e^v) as PyTorch's (v itself above 20), computed as max(v, 0) +
// log(1 + e^−|v|): no overflow, and log1p_unit's argument in (0, 1]. Below about −87 it gives
// exp_nonpositive's floor 1.6e-38 (the true value is smaller still). Accuracy: a few ulp.
[[gnu::always_inline]] inline float softplus(float v) {
  const float s = std::max(v, 0.0f) + log1p_unit(exp_nonpositive(-std::abs(v)));
  return v > 20.0f ? v : s;
}

// tanh(x), Eigen's rational approximation (generic_fast_tanh_float with FMA): odd numerator of
// degree 13, even denominator of degree 6, inputs clamped to ±7.9988 (tanh is ±1 in float beyond);
// x itself for |x| < 0.0004. Accuracy: a few ulp.
[[gnu::always_inline]] inline float tanh(float a) {
  const float x = std::min(7.99881172180175781f, std::max(-7.99881172180175781f, a));
  const float x2 = x * x;
  float p = std::fma(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
  p = std::fma(x2, p, -8.60467152213735e-11f);
  p = std::fma(x2, p, 5.12229709037114e-08f);
  p = std::fma(x2, p, 1.48572235717979e-05f);
  p = std::fma(x2, p, 6.37261928875436e-04f);
  p = std::fma(x2, p, 4.89352455891786e-03f);
  p = x * p;
  float q = std::fma(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
  q = std::fma(x2, q, 2.26843463243900e-03f);
  q = std::fma(x2, q, 4.89352518554385e-03f);
  return std::abs(a) < 0.0004f ? a : p / q;
}

// σ(x) = 1/(1 + e^(−x)), from e = exp(−|x|) <= 1: 1/(1 + e) for x >= 0, e/(1 + e) below (no
// cancellation on either side). Accuracy: a few ulp.
[[gnu::always_inline]] inline float sigmoid(float x) {
  const float e = exp_nonpositive(-std::abs(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

// op(init, f(0), …, f(n−1)), accumulated in 16 interleaved partial results (i mod 16) that are
// then combined pairwise in a fixed order. Unlike a plain `s = op(s, f(i))` loop (one serial
// chain) this vectorises into one register of partial results, and the grouping depends only on
// n, never on a buffer's alignment or the thread count.
inline constexpr int kLanes = 16;

// lane_reduce's partial results before they are combined: acc[l] = op(init, f(l), f(l + 16), …).
template <typename S, typename F, typename Op>
inline void lane_partials(S* __restrict acc, int64_t n, S init, F f, Op op) {
  for (int l = 0; l < kLanes; ++l) acc[l] = init;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = op(acc[l], f(i + l));
  for (int l = 0; i + l < n; ++l) acc[l] = op(acc[l], f(i + l));
}

template <typename S, typename F, typename Op>
inline S lane_reduce(int64_t n, S init, F f, Op op) {
  S acc[kLanes];
  lane_partials(acc, n, init, f, op);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] = op(acc[l], acc[l + w]);
  return acc[0];
}
template <typename S, typename F>
inline S lane_sum(int64_t n, F f) {
  return lane_reduce<S>(n, S(0), f, [](S a, S b) { return a + b; });
}

}  // namespace srbench::model::fastmath
