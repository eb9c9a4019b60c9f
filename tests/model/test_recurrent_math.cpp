// The float tanh and σ of the recurrent cells (model/fastmath.hpp) against libm, and the same bits
// whatever the alignment of the data (vectorised body and scalar remainder compute alike).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "model/fastmath.hpp"

namespace fm = srbench::model::fastmath;

TEST_CASE("fastmath: tanh and sigmoid agree with libm to a few ulp", "[recurrent][fastmath]") {
  double worst_tanh = 0, worst_sigmoid = 0;
  for (int i = -1200000; i <= 1200000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;  // [-12, 12]
    const double t = std::tanh(static_cast<double>(x)), s = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    // tanh: relative error (it is odd and ~x near 0); σ: relative error (it is ~e^x for x << 0)
    if (t != 0) worst_tanh = std::max(worst_tanh, std::abs(fm::tanh(x) - t) / std::abs(t));
    worst_sigmoid = std::max(worst_sigmoid, std::abs(fm::sigmoid(x) - s) / s);
  }
  for (int i = 0; i <= 860; ++i) {  // σ's far tail, down to e^-86
    const float x = -static_cast<float>(i) * 0.1f;
    const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    worst_sigmoid = std::max(worst_sigmoid, std::abs(fm::sigmoid(x) - s) / s);
  }
  std::printf("fastmath: worst tanh rel error %.3g, worst sigmoid rel error %.3g\n", worst_tanh, worst_sigmoid);
  CHECK(worst_tanh < 5e-7);
  CHECK(worst_sigmoid < 5e-7);
  CHECK(fm::tanh(0.0f) == 0.0f);
  CHECK(fm::tanh(1e-5f) == 1e-5f);
  CHECK(fm::tanh(30.0f) == Approx(1.0f).epsilon(1e-7));
  CHECK(fm::tanh(-30.0f) == Approx(-1.0f).epsilon(1e-7));
  CHECK(fm::sigmoid(0.0f) == 0.5f);
  CHECK(fm::sigmoid(100.0f) == 1.0f);
  CHECK(fm::sigmoid(-100.0f) < 1e-37f);
}

TEST_CASE("fastmath: tanh and sigmoid give the same bits at any alignment", "[recurrent][fastmath]") {
  const int n = 203;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = std::sin(0.37f * i) * 9.0f;
  std::vector<float> ref_t, ref_s;
  for (int shift = 0; shift < 16; ++shift) {
    INFO("shift " << shift);
    std::vector<float> in(shift + n), t(shift + n), s(shift + n);
    std::memcpy(in.data() + shift, x.data(), n * sizeof(float));
    const float* xi = in.data() + shift;
    float *ti = t.data() + shift, *si = s.data() + shift;
    for (int i = 0; i < n; ++i) ti[i] = fm::tanh(xi[i]);
    for (int i = 0; i < n; ++i) si[i] = fm::sigmoid(xi[i]);
    if (shift == 0) {
      ref_t.assign(ti, ti + n);
      ref_s.assign(si, si + n);
      continue;
    }
    CHECK(std::memcmp(ti, ref_t.data(), n * sizeof(float)) == 0);
    CHECK(std::memcmp(si, ref_s.data(), n * sizeof(float)) == 0);
  }
  for (int i = 0; i < n; ++i) {  // and the scalar call
    REQUIRE(fm::tanh(x[i]) == ref_t[i]);
    REQUIRE(fm::sigmoid(x[i]) == ref_s[i]);
  }
}
