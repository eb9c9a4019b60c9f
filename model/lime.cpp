#include "model/lime.hpp"

#include <algorithm>

namespace srbench::model {

namespace {
constexpr int64_t kMinParallelRows = 256;
}

template <typename S>
void lime_forward(S* qkv, S* kv_raw, const S* W, int l, int64_t N, int C, int H) {
  const int hs = C / H, cols = (l + 1) * H;
  const int64_t layer = N * 2 * C;  // one layer of kv_raw
#pragma omp parallel for schedule(static) if (N >= kMinParallelRows)
  for (int64_t n = 0; n < N; ++n) {
    S* row = qkv + n * 3 * C + C;  // k | v of this row
    std::copy(row, row + 2 * C, kv_raw + l * layer + n * 2 * C);
    if (l == 0) continue;
    for (int p = 0; p < 2; ++p)  // keys, then values
      for (int i = 0; i < H; ++i) {
        S* out = row + p * C + i * hs;
        std::fill(out, out + hs, S(0));
        for (int m = 0; m <= l; ++m)
          for (int j = 0; j < H; ++j) {
            const S w = W[i * cols + m * H + j];
            const S* src = kv_raw + m * layer + n * 2 * C + p * C + j * hs;
            for (int d = 0; d < hs; ++d) out[d] += w * src[d];
          }
      }
  }
}

template <typename S>
void lime_backward(S* dqkv, S* dW, S* dkv_raw, const S* kv_raw, const S* W, int l, int64_t N, int C, int H) {
  const int hs = C / H, cols = (l + 1) * H;
  const int64_t layer = N * 2 * C;
  if (l >= 1) {
    // dW[i, m·H + j]: one entry per iteration, summed over rows and features in order.
#pragma omp parallel for schedule(static) if (N * H * cols >= kMinParallelRows * 16)
    for (int e = 0; e < H * cols; ++e) {
      const int i = e / cols, m = (e % cols) / H, j = e % H;
      double acc = 0;
      for (int64_t n = 0; n < N; ++n) {
        const S* dy = dqkv + n * 3 * C + C + i * hs;
        const S* x = kv_raw + m * layer + n * 2 * C + j * hs;
        for (int p = 0; p < 2; ++p)
          for (int d = 0; d < hs; ++d) acc += static_cast<double>(dy[p * C + d]) * x[p * C + d];
      }
      dW[e] += static_cast<S>(acc);
    }
  }
#pragma omp parallel for schedule(static) if (N >= kMinParallelRows)
  for (int64_t n = 0; n < N; ++n) {
    S* dy = dqkv + n * 3 * C + C;  // d(mixed k | v) of this row
    for (int m = 0; m <= l; ++m)
      for (int p = 0; p < 2; ++p)
        for (int j = 0; j < H; ++j) {
          S* dx = dkv_raw + m * layer + n * 2 * C + p * C + j * hs;
          if (l == 0) {  // layer 0 reads its own heads
            for (int d = 0; d < hs; ++d) dx[d] += dy[p * C + j * hs + d];
            continue;
          }
          for (int i = 0; i < H; ++i) {
            const S w = W[i * cols + m * H + j];
            const S* src = dy + p * C + i * hs;
            for (int d = 0; d < hs; ++d) dx[d] += w * src[d];
          }
        }
    const S* own = dkv_raw + l * layer + n * 2 * C;
    std::copy(own, own + 2 * C, dy);
  }
}

#define SRBENCH_LIME_INSTANTIATE(S)                                                   \
  template void lime_forward<S>(S*, S*, const S*, int, int64_t, int, int);            \
  template void lime_backward<S>(S*, S*, S*, const S*, const S*, int, int64_t, int, int);
SRBENCH_LIME_INSTANTIATE(float)
SRBENCH_LIME_INSTANTIATE(double)
#undef SRBENCH_LIME_INSTANTIATE

}  // namespace srbench::model
