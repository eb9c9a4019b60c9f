#include "model/lime.hpp"

#include <Eigen/Core>
#include <algorithm>

#include "model/eigen_views.hpp"
#include "model/kernels.hpp"
#include "model/parallel.hpp"

namespace srbench::model {

namespace {

constexpr int64_t kMinParallelRows = 256;
constexpr int64_t kChunkRows = 128;  // rows per column chunk of the mixing GEMMs: fixed, so is the rounding

// Head-major layout of one part (p = 0 keys, 1 values) of layer m in kv_raw / dkv_raw:
// H rows (heads) of N·hs columns (row n, feature d), i.e. a [H, N·hs] matrix; the layers of a
// part follow each other, so layers 0…l form one [(l+1)·H, N·hs] matrix.
template <typename S>
S* part(S* base, int p, int m, int L, int64_t N, int C) {
  return base + (static_cast<int64_t>(p) * L + m) * N * C;
}

// Copies between the k|v columns of a (N,3C) buffer and a head-major [H, N·hs] matrix.
template <typename S>
void to_head_major(S* hm, const S* rows, int p, int64_t N, int C, int H) {
  const int hs = C / H;
#pragma omp parallel for schedule(static) if (N >= kMinParallelRows)
  for (int64_t n = 0; n < N; ++n)
    for (int j = 0; j < H; ++j) {
      const S* src = rows + n * 3 * C + (1 + p) * C + j * hs;
      std::copy(src, src + hs, hm + j * N * hs + n * hs);
    }
}
template <typename S>
void from_head_major(S* rows, const S* hm, int p, int64_t N, int C, int H) {
  const int hs = C / H;
#pragma omp parallel for schedule(static) if (N >= kMinParallelRows)
  for (int64_t n = 0; n < N; ++n)
    for (int j = 0; j < H; ++j) {
      const S* src = hm + j * N * hs + n * hs;
      std::copy(src, src + hs, rows + n * 3 * C + (1 + p) * C + j * hs);
    }
}

// out[:, chunk] (+)= A · B[:, chunk] over fixed column chunks (A small, B and out [.., N·hs]); A is
// the row-major matrix `a` or, with `transposed`, its transpose (kernels.hpp's products: float on
// sgemm, the same sums on every machine).
template <typename S>
void mix_columns(S* out, const MapRC<S>& a, bool transposed, const S* b, int64_t N, int hs, bool add) {
  const int64_t cols = N * hs, rows_in = transposed ? a.rows() : a.cols(), rows_out = transposed ? a.cols() : a.rows();
  const int64_t chunks = (N + kChunkRows - 1) / kChunkRows;
  using Strided = Eigen::Map<MatR<S>, 0, Eigen::OuterStride<>>;
  using StridedC = Eigen::Map<const MatR<S>, 0, Eigen::OuterStride<>>;
  parallel_for(chunks, N >= kMinParallelRows, [&](int64_t c) {
    const int64_t c0 = c * kChunkRows * hs, w = std::min<int64_t>(kChunkRows * hs, cols - c0);
    Strided o(out + c0, rows_out, w, Eigen::OuterStride<>(cols));
    const StridedC x(b + c0, rows_in, w, Eigen::OuterStride<>(cols));
    if (transposed) product_atb(o, a, x, add);
    else product_ab(o, a, x, add);
  });
}

}  // namespace

template <typename S>
void lime_forward(S* qkv, S* kv_raw, S* tmp, const S* W, int l, int L, int64_t N, int C, int H) {
  const int hs = C / H;
  for (int p = 0; p < 2; ++p) {  // keys, then values
    to_head_major(part(kv_raw, p, l, L, N, C), qkv, p, N, C, H);
    if (l == 0) continue;
    const MapRC<S> w(W, H, (l + 1) * H);
    mix_columns(tmp, w, false, part(kv_raw, p, 0, L, N, C), N, hs, false);
    from_head_major(qkv, tmp, p, N, C, H);
  }
}

template <typename S>
void lime_backward(S* dqkv, S* dW, S* dkv_raw, S* tmp, const S* kv_raw, const S* W, int l, int L, int64_t N, int C,
                   int H) {
  const int hs = C / H, cols = (l + 1) * H;
  for (int p = 0; p < 2; ++p) {
    S* dstack = part(dkv_raw, p, 0, L, N, C);  // [(l+1)·H, N·hs]: layers 0…l
    to_head_major(tmp, dqkv, p, N, C, H);      // d(mixed k or v) of layer l, [H, N·hs]
    if (l == 0) {
      MapR<S>(dstack, H, N * hs) += MapRC<S>(tmp, H, N * hs);
    } else {
      const MapRC<S> dy(tmp, H, N * hs), x(part(kv_raw, p, 0, L, N, C), cols, N * hs), w(W, H, cols);
      // dW += dy·xᵀ, one product over all N·hs columns: the same sum for any thread count
      product_abt(MapR<S>(dW, H, cols), dy, x, true);
      mix_columns(dstack, w, true, tmp, N, hs, true);
    }
    from_head_major(dqkv, part(dkv_raw, p, l, L, N, C), p, N, C, H);
  }
}

#define SRBENCH_LIME_INSTANTIATE(S)                                                                 \
  template void lime_forward<S>(S*, S*, S*, const S*, int, int, int64_t, int, int);                 \
  template void lime_backward<S>(S*, S*, S*, S*, const S*, const S*, int, int, int64_t, int, int);
SRBENCH_LIME_INSTANTIATE(float)
SRBENCH_LIME_INSTANTIATE(double)
#undef SRBENCH_LIME_INSTANTIATE

}  // namespace srbench::model
