// The building blocks of the recurrent cells (internal to model/, recurrent.hpp): strided matrix
// products, the elementwise functions, and the two ways the work is split among threads.
//
// Every product is C (m×n, row stride ldc) = init + A·B over strided operands, each element one
// chain of multiply-adds in the order of the inner index: on sgemm's kernel for float (its results
// do not depend on how a product is split), as plain loops for double (the finite-difference
// tests). So a product may be split by rows or by columns in any way without changing a bit.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "model/fastmath.hpp"
#include "model/parallel.hpp"
#include "model/sgemm.hpp"

namespace srbench::model::recurrent {

// Element (i, p) of a matrix operand is data[i·rs + p·cs].
template <typename S>
struct Operand {
  const S* data;
  int64_t rs, cs;
};

// C (m×n, row stride ldc) = (accumulate ? C : 0) + A·B, A m×k, B k×n.
template <typename S>
inline void gemm(int m, int n, int k, Operand<S> A, Operand<S> B, S* C, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if constexpr (std::is_same_v<S, float>) {
    sgemm(m, n, k, {A.data, A.rs, A.cs}, {B.data, B.rs, B.cs}, C, ldc,
          accumulate ? GemmInit::kAccumulate : GemmInit::kZero);
  } else {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        S acc = accumulate ? C[i * ldc + j] : S(0);
        for (int p = 0; p < k; ++p) acc = std::fma(A.data[i * A.rs + p * A.cs], B.data[p * B.rs + j * B.cs], acc);
        C[i * ldc + j] = acc;
      }
  }
}

// Below this many multiply-adds a product runs on one thread (a parallel region costs more).
inline constexpr int64_t kMinParallelWork = 1 << 16;
inline constexpr int kColChunk = 64;  // columns of a product per parallel chunk

// A large product (the input projections, the weight and input gradients of a whole sequence),
// split into fixed chunks of kColChunk columns run in parallel. sgemm packs B and reads A in
// place, so column chunks pack B once in all (row chunks would pack it once each).
template <typename S>
inline void gemm_cols(int m, int n, int k, Operand<S> A, Operand<S> B, S* C, int64_t ldc, bool accumulate) {
  const int chunks = (n + kColChunk - 1) / kColChunk;
  const bool parallel = static_cast<int64_t>(m) * n * k >= kMinParallelWork;
  // on one thread the chunks as one product: the same bits
  if (!parallel || chunks < 2 || omp_get_max_threads() < 2 || omp_in_parallel()) return gemm(m, n, k, A, B, C, ldc, accumulate);
  parallel_for(chunks, true, [&](int c) {
    const int c0 = c * kColChunk, cols = std::min(kColChunk, n - c0);
    gemm(m, cols, k, A, {B.data + c0 * B.cs, B.rs, B.cs}, C + c0, ldc, accumulate);
  });
}

// Examples are independent recurrences: the time loops run over fixed chunks of kExampleChunk
// examples, each thread the chunks [c0, c1) of an even split, as one range of examples
// f(b0, b1) (the values of an example never depend on the others', so a range computes the same
// bits as its chunks one by one). One thread, or too little work: f(0, B).
inline constexpr int kExampleChunk = 16;
template <typename F>
inline void for_example_ranges(int B, bool parallel, F&& f) {
  const int chunks = (B + kExampleChunk - 1) / kExampleChunk;
  if (!parallel || chunks < 2 || omp_get_max_threads() < 2 || omp_in_parallel()) return f(0, B);
  const unsigned mode = float_mode();
#pragma omp parallel
  {
    const FloatModeOf caller_mode(mode);
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const int c0 = chunks * id / nt, c1 = chunks * (id + 1) / nt;
    if (c0 < c1) f(c0 * kExampleChunk, std::min(B, c1 * kExampleChunk));
  }
}

// The elementwise functions: fastmath's for float (the same bits wherever the data lies), libm's
// for double.
template <typename S>
[[gnu::always_inline]] inline S tanh_(S x) {
  if constexpr (std::is_same_v<S, float>) return fastmath::tanh(x);
  else return std::tanh(x);
}
template <typename S>
[[gnu::always_inline]] inline S sigmoid_(S x) {
  if constexpr (std::is_same_v<S, float>) return fastmath::sigmoid(x);
  else return S(1) / (S(1) + std::exp(-x));
}
template <typename S>
[[gnu::always_inline]] inline S exp_nonpositive_(S x) {
  if constexpr (std::is_same_v<S, float>) return fastmath::exp_nonpositive(x);
  else return std::exp(x);
}

// out[r] += Σ_j x[r·ld + j], j < n, for r < rows: a bias gradient (lane_sum: a grouping that
// depends only on n).
template <typename S>
inline void add_row_sums(S* out, const S* x, int rows, int n, int64_t ld) {
  for (int r = 0; r < rows; ++r) {
    const S* row = x + r * ld;
    out[r] += fastmath::lane_sum<S>(n, [&](int64_t j) { return row[j]; });
  }
}

// softmax over `k` values at x[0], x[ld], …, x[(k−1)·ld], in place (k small: the actions).
template <typename S>
inline void softmax_strided(S* x, int k, int64_t ld) {
  S mx = x[0];
  for (int i = 1; i < k; ++i) mx = std::max(mx, x[i * ld]);
  S sum = 0;
  for (int i = 0; i < k; ++i) sum += (x[i * ld] = exp_nonpositive_(x[i * ld] - mx));
  for (int i = 0; i < k; ++i) x[i * ld] /= sum;
}

}  // namespace srbench::model::recurrent
