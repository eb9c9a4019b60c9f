// sgemm (model/sgemm.hpp) against its plain fma loops, bit for bit, and those loops against
// double products. Built twice: into test_model with the project's flags (-march=native: the
// AVX-512 kernel on a CPU that has it), and as test_sgemm_avx2 with AVX2 + FMA and without
// AVX-512, so that the AVX2 kernel, the one machines without AVX-512 run, is tested too. Each
// build first asserts that the kernel it is meant to test is the one compiled in: otherwise the
// comparisons would hold the plain loops against themselves.
#include <catch2/catch.hpp>
#include <cstdio>
#include <vector>

#include "model/sgemm.hpp"
#include "tests/model/kernel_test_util.hpp"

using namespace srbench::model;
using srbench::test::random_vec;
using srbench::test::rel_err;

namespace {

// The kernel this executable is built to test (tests/CMakeLists.txt): in test_sgemm_avx2 the AVX2
// one; in test_model, when Release builds use -march=native, the widest this CPU runs (asked of
// the CPU, not of the compiler); otherwise the widest the build's own flags target (an
// x86-64-v3 build: AVX2 + FMA), else the plain loops.
SgemmKernel kernel_under_test() {
#if defined(SRBENCH_TEST_SGEMM_AVX2)
  return SgemmKernel::kAvx2;
#elif defined(SRBENCH_TEST_SGEMM_NATIVE)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return SgemmKernel::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SgemmKernel::kAvx2;
  return SgemmKernel::kReference;
#elif defined(__AVX512F__)
  return SgemmKernel::kAvx512;
#elif defined(__AVX2__) && defined(__FMA__)
  return SgemmKernel::kAvx2;
#else
  return SgemmKernel::kReference;
#endif
}

}  // namespace

TEST_CASE("sgemm: the kernel compiled in is the one this build tests", "[sgemm]") {
  INFO("compiled in: " << to_string(sgemm_kernel()) << ", to be tested: " << to_string(kernel_under_test()));
  CHECK(sgemm_kernel() == kernel_under_test());
  std::printf("sgemm kernel: %s\n", to_string(sgemm_kernel()));
}

TEST_CASE("sgemm: equals its plain fma loops bit for bit, whatever the shape and strides", "[sgemm][reference]") {
  // Shapes cross every blocking edge of the kernel: partial register tiles in rows (m not a
  // multiple of the 6, 8 or 12 rows of a tile) and columns (n not a multiple of 16, 32 or 64), the
  // last panel of each width (1 to 4 vectors: n = 200, 100, 33, 96), row blocks (m > 96), inner
  // blocks (k > 512), and k = 0; operands plain, transposed and with padded strides.
  // In the AVX-512 build a last panel of at most 8 columns runs 8-wide (n = 8, 5, 72, 65, 200).
  // m ≥ 1,024 with A transposed (layouts 1 and 3): A's inner steps 4 KiB or more apart, which the
  // AVX2 build copies into blocks of rows first (m = 1030: a last row block of 70 rows, a last
  // tile of 4; m = 1100 with n = 20: panels of 16 and 4 columns) — or, when B's rows are
  // contiguous and near (layout 1) and n < m, runs as Cᵀ = Bᵀ·Aᵀ in a scratch matrix, C
  // transposed in and out (every init: C's own values, zeros, the row vector along Cᵀ's rows).
  const int shapes[][3] = {{1, 1, 1},      {7, 33, 5},     {8, 32, 64},    {13, 17, 129}, {97, 65, 40},
                           {200, 96, 513}, {5, 100, 1100}, {64, 31, 0},    {300, 48, 128}, {150, 200, 70},
                           {40, 8, 40},    {25, 5, 600},   {130, 72, 33},  {1030, 40, 600}, {1100, 20, 33}};
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
  CHECK(cases == 15 * 4 * 3);
}

TEST_CASE("sgemm: skipping the zeros of a lower-triangular A equals the plain loops", "[sgemm][reference]") {
  // causal attention products: P (T×T, zero above the diagonal) times V, P stored as is (row
  // stride T) or read transposed from a stored upper-triangular matrix (T = 1030: 4 KiB apart)
  for (const int T : {5, 32, 64, 100, 600, 1030}) {
    for (const int hs : {7, 8, 16, 32, 40}) {
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

TEST_CASE("sgemm: the plain loops are the product (against double loops)", "[sgemm][reference]") {
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
