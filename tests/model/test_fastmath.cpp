// The float erf and exp used by GeLU against libm over their whole useful range.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "model/fastmath.hpp"
#include "model/lane_dots.hpp"

namespace fm = srbench::model::fastmath;

TEST_CASE("fastmath: erf and exp agree with libm to a few ulp", "[fastmath]") {
  double worst_erf = 0, worst_exp = 0;
  for (int i = -600000; i <= 600000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;  // [-6, 6]
    const double e = std::erf(static_cast<double>(x));
    // absolute error relative to float's spacing near 1 (erf's scale): 2^-23 ≈ 1.2e-7
    worst_erf = std::max(worst_erf, std::abs(fm::erf(x) - e));
  }
  for (int i = 0; i <= 870000; ++i) {
    const float x = -static_cast<float>(i) * 1e-4f;  // [-87, 0]
    const double e = std::exp(static_cast<double>(x));
    worst_exp = std::max(worst_exp, std::abs(fm::exp_nonpositive(x) - e) / e);
  }
  std::printf("fastmath: worst erf abs error %.3g, worst exp rel error %.3g\n", worst_erf, worst_exp);
  CHECK(worst_erf < 4e-7);
  CHECK(worst_exp < 4e-7);
  CHECK(fm::erf(0.0f) == 0.0f);
  CHECK(fm::erf(10.0f) == Approx(1.0f).epsilon(1e-7));
  CHECK(fm::erf(-10.0f) == Approx(-1.0f).epsilon(1e-7));
  CHECK(fm::exp_nonpositive(0.0f) == 1.0f);
  CHECK(fm::exp_nonpositive(-1000.0f) < 1e-37f);
}

TEST_CASE("fastmath: log1p and softplus agree with double precision to a few ulp", "[fastmath]") {
  double worst_log1p = 0, worst_softplus = 0;
  for (int i = 0; i <= 1000000; ++i) {
    const float y = static_cast<float>(i) * 1e-6f;  // [0, 1]
    if (y == 0.0f) continue;
    const double e = std::log1p(static_cast<double>(y));
    worst_log1p = std::max(worst_log1p, std::abs(fm::log1p_unit(y) - e) / e);
  }
  for (const float tiny : {1e-30f, 1e-12f, 3e-8f, 6e-8f, 1e-7f}) {  // where 1 + y rounds: log1p(y) ≈ y
    INFO("y " << tiny);
    CHECK(std::abs(fm::log1p_unit(tiny) - tiny) <= 2e-7 * tiny);
  }
  for (int i = -800000; i <= 300000; ++i) {
    const float v = static_cast<float>(i) * 1e-4f;  // [-80, 30]
    const double e = v > 20.0f ? v : std::log1p(std::exp(static_cast<double>(v)));
    worst_softplus = std::max(worst_softplus, std::abs(fm::softplus(v) - e) / e);
  }
  std::printf("fastmath: worst log1p rel error %.3g, worst softplus rel error %.3g\n", worst_log1p, worst_softplus);
  CHECK(worst_log1p < 4e-7);
  CHECK(worst_softplus < 6e-7);
  CHECK(fm::log1p_unit(0.0f) == 0.0f);
  CHECK(fm::softplus(25.0f) == 25.0f);  // PyTorch's threshold: v itself
  CHECK(fm::softplus(-200.0f) < 2e-38f);
}

#include <cstring>
#include <random>
#include <vector>

#include "model/layers.hpp"

TEST_CASE("layers: results do not depend on the alignment of the buffers", "[fastmath]") {
  // The same values at float offsets 0..15 of a buffer: every kernel must give the same bits
  // (a vectorised loop's unaligned head must not compute differently from its body).
  const int N = 37, C = 24, OC = 40;
  std::mt19937 gen(3);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<float> x(N * C), w(OC * C), b(OC), ln_w(C), ln_b(C);
  for (auto* v : {&x, &w, &b, &ln_w, &ln_b})
    for (float& e : *v) e = nd(gen);
  std::vector<float> ref_gelu, ref_dgelu, ref_mm, ref_ln;
  for (int shift = 0; shift < 16; ++shift) {
    INFO("shift " << shift);
    std::vector<float> in(shift + N * C), out(shift + N * C), d(shift + N * C), mm(shift + N * OC), ln(shift + N * C);
    std::vector<float> mean(N), rstd(N);
    std::memcpy(in.data() + shift, x.data(), x.size() * sizeof(float));
    float* xi = in.data() + shift;
    using namespace srbench::model;
    gelu_forward(out.data() + shift, xi, N * C);
    gelu_backward(d.data() + shift, xi, xi, N * C);
    matmul_forward(mm.data() + shift, xi, w.data(), b.data(), N, C, OC);
    layernorm_forward(ln.data() + shift, mean.data(), rstd.data(), xi, ln_w.data(), ln_b.data(), N, C);
    std::vector<float> g(out.begin() + shift, out.end()), dg(d.begin() + shift, d.end()),
        m(mm.begin() + shift, mm.end()), l(ln.begin() + shift, ln.end());
    if (shift == 0) {
      ref_gelu = g;
      ref_dgelu = dg;
      ref_mm = m;
      ref_ln = l;
      continue;
    }
    CHECK(std::memcmp(g.data(), ref_gelu.data(), g.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(dg.data(), ref_dgelu.data(), dg.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(m.data(), ref_mm.data(), m.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(l.data(), ref_ln.data(), l.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("layers: GeLU's vectorised loop gives each element the bits its scalar loop gives", "[fastmath]") {
  // A call over n = 1 runs the scalar loop; one over thousands of elements the vector body (and a
  // scalar remainder). Every expression must compute the same in both: a multiply-add the
  // compiler contracts in one loop and not in the other changes the last bit (it did, for 10% of
  // GeLU' values, until layers.cpp fused it explicitly).
  using namespace srbench::model;
  const int n = 24001;  // [-6, 6] in steps of 1/2000, and n mod 8 = 1: a remainder too
  std::vector<float> x(n), dout(n), y(n), dx(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i - n / 2) / 2000.0f, dout[i] = 1.0f + 0.25f * std::sin(static_cast<float>(i));
  gelu_forward(y.data(), x.data(), n);
  gelu_backward(dx.data(), x.data(), dout.data(), n);
  int forward_differ = 0, backward_differ = 0;
  for (int i = 0; i < n; ++i) {
    float y1, dx1;
    gelu_forward(&y1, &x[i], 1);
    gelu_backward(&dx1, &x[i], &dout[i], 1);
    forward_differ += std::memcmp(&y1, &y[i], sizeof(float)) != 0;
    backward_differ += std::memcmp(&dx1, &dx[i], sizeof(float)) != 0;
  }
  CHECK(forward_differ == 0);
  CHECK(backward_differ == 0);
}

TEST_CASE("fastmath: lane_sum groups by index mod 16, then pairwise", "[fastmath]") {
  // Values whose float sum depends on the grouping: 1e8 in lane 0 swallows a 1 added to it but
  // not a 1 kept in another lane until the end.
  for (int n : {1, 5, 16, 17, 40}) {
    INFO("n " << n);
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[i] = i == 0 ? 1e8f : float(i % 7) - 2.5f;
    // by hand: lanes l = i mod 16 summed in index order, then lanes l and l+w for w = 8, 4, 2, 1
    float lanes[16] = {};
    for (int i = 0; i < n; ++i) lanes[i % 16] += v[i];
    for (int w = 8; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
    const float s = fm::lane_sum<float>(n, [&](int64_t i) { return v[i]; });
    CHECK(s == lanes[0]);
    // and the sum itself: within two float ulps of 1e8 (8 each) of the exact sum
    CHECK(std::abs(double(s) - std::accumulate(v.begin(), v.end(), 0.0)) <= 16.0);
  }
}

TEST_CASE("fastmath: lane_dots gives each row lane_sum's bits, many rows at once", "[fastmath]") {
  // Products spread over 12 orders of magnitude, so that any other grouping of a row's sum (or a
  // row's lanes mixed with another's) changes its bits; every block size and remainder of rows and
  // of the row length, one b for all rows and one per row.
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-20, 20);
  auto draw = [&] { return std::ldexp(mant(gen), expo(gen)); };
  int compared = 0, differ = 0, wrong_lane = 0;
  for (int rows : {1, 7, 8, 9, 15, 16, 17, 33, 40})
    for (int n : {1, 5, 15, 16, 17, 31, 32, 33, 64, 100})
      for (bool shared_b : {true, false}) {
        const int64_t lda = n + 3;  // rows padded: the stride is not the length
        std::vector<float> a(rows * lda), b(shared_b ? n : rows * lda);
        for (float& x : a) x = draw();
        for (float& x : b) x = draw();
        const int64_t ldb = shared_b ? 0 : lda;
        std::vector<float> out(rows, -1.0f);
        fm::lane_dots<float>(rows, n, a.data(), lda, b.data(), ldb, out.data());
        for (int r = 0; r < rows; ++r) {
          const float* ar = a.data() + r * lda;
          const float* br = b.data() + r * ldb;
          const float want = fm::lane_sum<float>(n, [&](int64_t i) { return ar[i] * br[i]; });
          // and by hand: lanes i mod 16 in index order, then l and l + w for w = 8, 4, 2, 1
          float lanes[16] = {};
          for (int i = 0; i < n; ++i) lanes[i % 16] = lanes[i % 16] + ar[i] * br[i];
          for (int w = 8; w > 0; w /= 2)
            for (int l = 0; l < w; ++l) lanes[l] = lanes[l] + lanes[l + w];
          ++compared;
          differ += std::memcmp(&out[r], &want, sizeof(float)) != 0;
          wrong_lane += std::memcmp(&out[r], &lanes[0], sizeof(float)) != 0;
        }
      }
  CHECK(compared == 2 * 10 * (1 + 7 + 8 + 9 + 15 + 16 + 17 + 33 + 40));
  CHECK(differ == 0);
  CHECK(wrong_lane == 0);
  // A grouping that differs is caught: a row whose result depends on which lanes pair first.
  float one[16 * 1] = {};
  one[0] = 1e8f, one[8] = 1.0f, one[1] = -1e8f, one[9] = 1.0f;  // (1e8 + 1) + (−1e8 + 1) = 0; 1e8 + −1e8 first would give 2
  const float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  float got = -1;
  fm::lane_dots<float>(1, 16, one, 16, ones, 0, &got);
  CHECK(got == 0.0f);
  std::vector<float> many_a(16 * 16), many_out(16);
  for (int r = 0; r < 16; ++r) std::copy(one, one + 16, many_a.begin() + 16 * r);
  fm::lane_dots<float>(16, 16, many_a.data(), 16, ones, 0, many_out.data());
  for (float x : many_out) CHECK(x == 0.0f);
}
