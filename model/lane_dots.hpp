// Many dot products at once, each bit for bit fastmath::lane_sum's (internal to model/): the scans'
// matrix-vector products over a head's state rows (gla_scan.cpp, delta_rule.cpp).
//
// lane_sum adds a row's n products into 16 partial sums (index mod 16) and then combines them
// pairwise: lanes l and l + 8, then l and l + 4, l + 2, l + 1. Done one row at a time that last
// tree is a chain of dependent additions across the lanes of one register (or through memory).
// lane_dots computes the 16 partial sums of each row as lane_sum does, then runs the tree for 8 or
// 16 rows at once: each level adds the same pairs of lanes, gathered from several rows into one
// register by exact shuffles, so every row's result is the same additions of the same values in
// the same order — the same bits as lane_sum's in every build (the test compares them).
#pragma once

#include <cstdint>
#include <type_traits>

#include "model/fastmath.hpp"

namespace srbench::model::fastmath {
namespace detail {

#if defined(__AVX512F__)
constexpr int kRowsAtOnce = 16;
typedef float v16 __attribute__((vector_size(64), aligned(64)));

// out[r] = lane_sum's tree over the 16 partial sums p[16 r … 16 r + 15], for 16 rows.
inline void tree_rows(const float* p, float* out) {
  v16 x[16];
  for (int r = 0; r < 16; ++r) __builtin_memcpy(&x[r], p + 16 * r, sizeof(v16));
  // lanes l + 8 onto l: two rows per register, [row a's 8 | row b's 8]
  v16 y[8];
  for (int k = 0; k < 8; ++k)
    y[k] = __builtin_shufflevector(x[2 * k], x[2 * k + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
           __builtin_shufflevector(x[2 * k], x[2 * k + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  // l + 4 onto l: four rows, 4 lanes each
  v16 z[4];
  for (int k = 0; k < 4; ++k)
    z[k] = __builtin_shufflevector(y[2 * k], y[2 * k + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
           __builtin_shufflevector(y[2 * k], y[2 * k + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  // l + 2 onto l: eight rows, 2 lanes each
  v16 w[2];
  for (int k = 0; k < 2; ++k)
    w[k] = __builtin_shufflevector(z[2 * k], z[2 * k + 1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29) +
           __builtin_shufflevector(z[2 * k], z[2 * k + 1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
  // l + 1 onto l: sixteen rows, in order
  const v16 s = __builtin_shufflevector(w[0], w[1], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30) +
                __builtin_shufflevector(w[0], w[1], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  __builtin_memcpy(out, &s, sizeof(v16));
}
#elif defined(__AVX2__)
constexpr int kRowsAtOnce = 8;
typedef float v8 __attribute__((vector_size(32), aligned(32)));

// As above for 8 rows, in 8-lane registers: the first level adds a row's two halves.
inline void tree_rows(const float* p, float* out) {
  v8 x[8];
  for (int r = 0; r < 8; ++r) {
    v8 lo, hi;
    __builtin_memcpy(&lo, p + 16 * r, sizeof(v8));
    __builtin_memcpy(&hi, p + 16 * r + 8, sizeof(v8));
    x[r] = lo + hi;  // lanes l + 8 onto l
  }
  v8 y[4];  // l + 4 onto l: two rows, 4 lanes each
  for (int k = 0; k < 4; ++k)
    y[k] = __builtin_shufflevector(x[2 * k], x[2 * k + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(x[2 * k], x[2 * k + 1], 4, 5, 6, 7, 12, 13, 14, 15);
  v8 z[2];  // l + 2 onto l: four rows, 2 lanes each
  for (int k = 0; k < 2; ++k)
    z[k] = __builtin_shufflevector(y[2 * k], y[2 * k + 1], 0, 1, 4, 5, 8, 9, 12, 13) +
           __builtin_shufflevector(y[2 * k], y[2 * k + 1], 2, 3, 6, 7, 10, 11, 14, 15);
  const v8 s = __builtin_shufflevector(z[0], z[1], 0, 2, 4, 6, 8, 10, 12, 14) +  // l + 1 onto l: eight rows
               __builtin_shufflevector(z[0], z[1], 1, 3, 5, 7, 9, 11, 13, 15);
  __builtin_memcpy(out, &s, sizeof(v8));
}
#endif  // otherwise no vector tree: lane_dots takes one row at a time

}  // namespace detail

// out[r] = lane_sum(n, a_r[i]·b_r[i]) for r < rows, a_r = a + r·lda, b_r = b + r·ldb (ldb 0: the
// same b for every row). out may not overlap a or b.
template <typename S>
void lane_dots(int rows, int64_t n, const S* a, int64_t lda, const S* b, int64_t ldb, S* __restrict out) {
  int r = 0;
#if defined(__AVX512F__) || defined(__AVX2__)
  if constexpr (std::is_same_v<S, float>) {
    constexpr int R = detail::kRowsAtOnce;
    alignas(64) float partial[kLanes * R];
    for (; r + R <= rows; r += R) {
      for (int k = 0; k < R; ++k) {  // each row's 16 partial sums, lane_sum's own
        const float* ar = a + (r + k) * lda;
        const float* br = b + (r + k) * ldb;
        lane_partials(partial + kLanes * k, n, 0.0f, [&](int64_t i) { return ar[i] * br[i]; },
                      [](float x, float y) { return x + y; });
      }
      detail::tree_rows(partial, out + r);
    }
  }
#endif
  for (; r < rows; ++r) {
    const S* ar = a + r * lda;
    const S* br = b + r * ldb;
    out[r] = lane_sum<S>(n, [&](int64_t i) { return ar[i] * br[i]; });
  }
}

}  // namespace srbench::model::fastmath
