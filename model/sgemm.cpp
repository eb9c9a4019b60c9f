#include "model/sgemm.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace srbench::model {

namespace {

float init_value(GemmInit init, const float* C, const float* row, int j) {
  switch (init) {
    case GemmInit::kAccumulate: return *C;
    case GemmInit::kZero: return 0.0f;
    case GemmInit::kRow: return row[j];
  }
  return 0.0f;
}

}  // namespace

void sgemm_reference(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc,
                     GemmInit init, const float* row) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float* c = C + i * ldc + j;
      float acc = init_value(init, c, row, j);
      for (int p = 0; p < k; ++p)
        acc = std::fma(A.data[i * A.row_stride + p * A.col_stride], B.data[p * B.row_stride + j * B.col_stride], acc);
      *c = acc;
    }
  }
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))

namespace {

// One vector register of floats and its operations.
#if defined(__AVX512F__)
using V = __m512;
constexpr int kLanes = 16;
inline V vload(const float* p) { return _mm512_loadu_ps(p); }
inline void vstore(float* p, V v) { _mm512_storeu_ps(p, v); }
inline V vbroadcast(float x) { return _mm512_set1_ps(x); }
inline V vzero() { return _mm512_setzero_ps(); }
inline V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
constexpr int kMR = 8;  // rows per register tile: 8 × 2 accumulators of the 32 registers
#else
using V = __m256;
constexpr int kLanes = 8;
inline V vload(const float* p) { return _mm256_loadu_ps(p); }
inline void vstore(float* p, V v) { _mm256_storeu_ps(p, v); }
inline V vbroadcast(float x) { return _mm256_set1_ps(x); }
inline V vzero() { return _mm256_setzero_ps(); }
inline V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
constexpr int kMR = 6;  // 6 × 2 accumulators, two B vectors and a broadcast: 15 of 16 registers
#endif

constexpr int kNR = 2 * kLanes;  // columns per register tile (a packed panel of B)
constexpr int kKC = 512;         // inner-dimension block: a packed panel is kKC × kNR floats
constexpr int kMC = 96;          // rows of A per block (re-read from L2 for each panel of B)

// The register tile: C[0..MR)[0..kNR) (row stride ldc) = its start + A-rows × packed panel bp
// over kc inner steps. `start`: load C (accumulate), zero, or the row vector `row`.
template <int MR>
inline void tile(int kc, const float* a, int64_t rsa, int64_t csa, const float* bp, float* c, int64_t ldc,
                 GemmInit start, const float* row) {
  V acc[MR][2];
  for (int r = 0; r < MR; ++r) {
    for (int h = 0; h < 2; ++h) {
      if (start == GemmInit::kAccumulate) acc[r][h] = vload(c + r * ldc + h * kLanes);
      else if (start == GemmInit::kRow) acc[r][h] = vload(row + h * kLanes);
      else acc[r][h] = vzero();
    }
  }
  const float* ar[MR];
  for (int r = 0; r < MR; ++r) ar[r] = a + r * rsa;
  for (int p = 0; p < kc; ++p) {
    const V b0 = vload(bp), b1 = vload(bp + kLanes);
    bp += kNR;
    for (int r = 0; r < MR; ++r) {
      const V x = vbroadcast(*ar[r]);
      acc[r][0] = vfma(x, b0, acc[r][0]);
      acc[r][1] = vfma(x, b1, acc[r][1]);
      ar[r] += csa;
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int h = 0; h < 2; ++h) vstore(c + r * ldc + h * kLanes, acc[r][h]);
}

template <int MR>
void tile_any_width(int kc, const float* a, int64_t rsa, int64_t csa, const float* bp, float* c, int64_t ldc,
                    int width, GemmInit start, const float* row) {
  if (width == kNR) return tile<MR>(kc, a, rsa, csa, bp, c, ldc, start, row);
  // A partial panel (its missing columns are packed as zeros): through a full-width scratch tile.
  alignas(64) float t[MR * kNR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < kNR; ++j)
      t[r * kNR + j] = j >= width                         ? 0.0f
                       : start == GemmInit::kAccumulate ? c[r * ldc + j]
                       : start == GemmInit::kRow        ? row[j]
                                                         : 0.0f;
  tile<MR>(kc, a, rsa, csa, bp, t, kNR, GemmInit::kAccumulate, nullptr);
  for (int r = 0; r < MR; ++r) std::copy(t + r * kNR, t + r * kNR + width, c + r * ldc);
}

template <int... R>
struct TileTable {
  using Fn = void (*)(int, const float*, int64_t, int64_t, const float*, float*, int64_t, int, GemmInit,
                      const float*);
  static constexpr Fn fns[sizeof...(R)] = {&tile_any_width<R + 1>...};
};

template <int... R>
constexpr auto make_tiles(std::integer_sequence<int, R...>) {
  return TileTable<R...>{};
}

// Packs rows k0 … k0+kc−1 of B into panels of kNR columns (zeros past column n): panel q holds
// B(k0+p, q·kNR + jj) at [q·kc·kNR + p·kNR + jj].
void pack_b(const StridedOperand& B, int n, int k0, int kc, float* out) {
  const int panels = (n + kNR - 1) / kNR;
  std::fill(out, out + static_cast<int64_t>(panels) * kc * kNR, 0.0f);
  if (B.col_stride == 1) {  // rows of B contiguous
    for (int q = 0; q < panels; ++q) {
      const int j0 = q * kNR, w = std::min(kNR, n - j0);
      float* dst = out + static_cast<int64_t>(q) * kc * kNR;
      for (int p = 0; p < kc; ++p) {
        const float* src = B.data + (k0 + p) * B.row_stride + j0;
        std::copy(src, src + w, dst + p * kNR);
      }
    }
  } else {  // columns of B contiguous when row_stride is 1 (B = Wᵀ): read along them
    for (int j = 0; j < n; ++j) {
      float* dst = out + static_cast<int64_t>(j / kNR) * kc * kNR + j % kNR;
      const float* src = B.data + j * B.col_stride + k0 * B.row_stride;
      for (int p = 0; p < kc; ++p) dst[p * kNR] = src[p * B.row_stride];
    }
  }
}

}  // namespace

void sgemm(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc, GemmInit init,
           const float* row) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return sgemm_reference(m, n, 0, A, B, C, ldc, init, row);
  static constexpr auto tiles = make_tiles(std::make_integer_sequence<int, kMR>{});
  const int panels = (n + kNR - 1) / kNR;
  thread_local std::vector<float> packed;
  const size_t need = static_cast<size_t>(panels) * std::min(k, kKC) * kNR;
  if (packed.size() < need) packed.resize(need);
  for (int k0 = 0; k0 < k; k0 += kKC) {
    const int kc = std::min(kKC, k - k0);
    pack_b(B, n, k0, kc, packed.data());
    const GemmInit start = k0 == 0 ? init : GemmInit::kAccumulate;
    for (int i0 = 0; i0 < m; i0 += kMC) {
      const int i1 = std::min(m, i0 + kMC);
      for (int q = 0; q < panels; ++q) {
        const int j0 = q * kNR, width = std::min(kNR, n - j0);
        const float* bp = packed.data() + static_cast<int64_t>(q) * kc * kNR;
        const float* rj = start == GemmInit::kRow ? row + j0 : nullptr;
        for (int i = i0; i < i1; i += kMR) {
          const int rows = std::min(kMR, i1 - i);
          tiles.fns[rows - 1](kc, A.data + i * A.row_stride + k0 * A.col_stride, A.row_stride, A.col_stride, bp,
                              C + i * ldc + j0, ldc, width, start, rj);
        }
      }
    }
  }
}

#else  // no vector kernel for this target: the plain loops (callers use Eigen's product instead)

void sgemm(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc, GemmInit init,
           const float* row) {
  sgemm_reference(m, n, k, A, B, C, ldc, init, row);
}

#endif

}  // namespace srbench::model
