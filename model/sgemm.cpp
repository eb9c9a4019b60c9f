#include "model/sgemm.hpp"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>
#include <cmath>
#include <vector>

namespace srbench::model {

namespace {

// Where the chain of element (·, j) starts, C pointing at the element.
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
constexpr SgemmKernel kKernel = SgemmKernel::kAvx512;
using V = __m512;
constexpr int kLanes = 16;
inline V vload(const float* p) { return _mm512_loadu_ps(p); }
inline void vstore(float* p, V v) { _mm512_storeu_ps(p, v); }
inline V vbroadcast(float x) { return _mm512_set1_ps(x); }
inline V vzero() { return _mm512_setzero_ps(); }
inline V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
// Panels of up to four vectors (64 columns). Rows per register tile for a panel of nv vectors
// (its accumulators, nv B vectors and a broadcast within the 32 registers): 12 × 1, 8 × 2, 8 × 3,
// 6 × 4. On the linear layers' products of S, M and L (AMD EPYC, CPU time) this ran about 5%
// faster than 8 × 2 throughout (performance.md, round 11): wider tiles reuse each broadcast.
constexpr int kMRs[] = {12, 8, 8, 6};
#else
constexpr SgemmKernel kKernel = SgemmKernel::kAvx2;
using V = __m256;
constexpr int kLanes = 8;
inline V vload(const float* p) { return _mm256_loadu_ps(p); }
inline void vstore(float* p, V v) { _mm256_storeu_ps(p, v); }
inline V vbroadcast(float x) { return _mm256_set1_ps(x); }
inline V vzero() { return _mm256_setzero_ps(); }
inline V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
constexpr int kMRs[] = {6, 6};  // 6 × 2 accumulators, two B vectors and a broadcast: 15 of 16 registers
#endif

// The register vector as a type (tile's template argument): Full is V above; Half, in the AVX-512
// build, an 8-float ymm register for a last panel of at most 8 columns (a head of 8 channels: the
// attention products O = P·V, dQ = dS·K, dV = Pᵀ·dO, dK = dSᵀ·Q). A 16-wide FMA on such a panel
// computes 8 zero columns, and where the core executes a 512-bit FMA as two 256-bit halves (AMD
// Zen 4) it costs twice an 8-wide one. Either way every element is the same chain of FMAs.
struct Full {
  using T = V;
  static constexpr int kLanes = srbench::model::kLanes;
  static T load(const float* p) { return vload(p); }
  static void store(float* p, T v) { vstore(p, v); }
  static T broadcast(float x) { return vbroadcast(x); }
  static T zero() { return vzero(); }
  static T fma(T a, T b, T c) { return vfma(a, b, c); }
};
#if defined(__AVX512F__)
struct Half {
  using T = __m256;
  static constexpr int kLanes = 8;
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T broadcast(float x) { return _mm256_set1_ps(x); }
  static T zero() { return _mm256_setzero_ps(); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
};
constexpr bool kHasHalf = true;
#else
constexpr bool kHasHalf = false;
#endif
constexpr int kHalfMR = 12;  // rows of a Half tile: 12 accumulators, B and a broadcast

constexpr int kNV = sizeof(kMRs) / sizeof(kMRs[0]);  // vectors per panel of B, at most
constexpr int kMR = *std::max_element(kMRs, kMRs + kNV);  // rows per register tile, at most
constexpr int kNR = kNV * kLanes;  // columns per panel of B: a register tile is MR × (1 … kNV vectors)
constexpr int kKC = 512;         // inner-dimension block: a packed panel is at most kKC × kNR floats
constexpr int kMC = 96;          // rows of A per block (re-read from L2 for each panel of B)

// The register tile: C[0..MR)[0..NV·lanes) (row stride ldc) = its start + A-rows × panel bp
// (kc rows of NV·lanes floats) over kc inner steps, in vectors of Vec. `start`: load C
// (accumulate), zero, or the row vector `row`.
template <int MR, int NV, typename Vec = Full>
inline void tile(int kc, const float* a, int64_t rsa, int64_t csa, const float* bp, float* c, int64_t ldc,
                 GemmInit start, const float* row) {
  constexpr int L = Vec::kLanes;
  typename Vec::T acc[MR][NV];
  for (int r = 0; r < MR; ++r) {
    for (int h = 0; h < NV; ++h) {
      if (start == GemmInit::kAccumulate) acc[r][h] = Vec::load(c + r * ldc + h * L);
      else if (start == GemmInit::kRow) acc[r][h] = Vec::load(row + h * L);
      else acc[r][h] = Vec::zero();
    }
  }
  const float* ar[MR];
  for (int r = 0; r < MR; ++r) ar[r] = a + r * rsa;
  for (int p = 0; p < kc; ++p) {
    typename Vec::T b[NV];
    for (int h = 0; h < NV; ++h) b[h] = Vec::load(bp + h * L);
    bp += NV * L;
    for (int r = 0; r < MR; ++r) {
      const auto x = Vec::broadcast(*ar[r]);
      for (int h = 0; h < NV; ++h) acc[r][h] = Vec::fma(x, b[h], acc[r][h]);
      ar[r] += csa;
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int h = 0; h < NV; ++h) Vec::store(c + r * ldc + h * L, acc[r][h]);
}

// A tile whose panel has `width` <= NV·lanes real columns (the rest packed as zeros): a partial
// one goes through a full-width scratch tile.
template <int MR, int NV, typename Vec = Full>
void tile_any_width(int kc, const float* a, int64_t rsa, int64_t csa, const float* bp, float* c, int64_t ldc,
                    int width, GemmInit start, const float* row) {
  constexpr int w = NV * Vec::kLanes;
  if (width == w) return tile<MR, NV, Vec>(kc, a, rsa, csa, bp, c, ldc, start, row);
  alignas(64) float t[MR * w];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < w; ++j) t[r * w + j] = j < width ? init_value(start, c + r * ldc + j, row, j) : 0.0f;
  tile<MR, NV, Vec>(kc, a, rsa, csa, bp, t, w, GemmInit::kAccumulate, nullptr);
  for (int r = 0; r < MR; ++r) std::copy(t + r * w, t + r * w + width, c + r * ldc);
}

using TileFn = void (*)(int, const float*, int64_t, int64_t, const float*, float*, int64_t, int, GemmInit,
                        const float*);

// kTiles[NV − 1][MR − 1], for MR up to kMRs[NV − 1] (nullptr past it)
template <int NV, int MR>
constexpr TileFn tile_entry() {
  if constexpr (MR <= kMRs[NV - 1]) return &tile_any_width<MR, NV>;
  else return nullptr;
}
template <int NV, int... R>
constexpr std::array<TileFn, sizeof...(R)> tile_row(std::integer_sequence<int, R...>) {
  return {tile_entry<NV, R + 1>()...};
}
template <int... N>
constexpr std::array<std::array<TileFn, kMR>, sizeof...(N)> tile_table(std::integer_sequence<int, N...>) {
  return {tile_row<N + 1>(std::make_integer_sequence<int, kMR>{})...};
}
constexpr auto kTiles = tile_table(std::make_integer_sequence<int, kNV>{});
#if defined(__AVX512F__)
// kHalfTiles[MR − 1]: the Half tiles of one 8-column panel
template <int... R>
constexpr std::array<TileFn, sizeof...(R)> half_row(std::integer_sequence<int, R...>) {
  return {&tile_any_width<R + 1, 1, Half>...};
}
constexpr auto kHalfTiles = half_row(std::make_integer_sequence<int, kHalfMR>{});
#endif

// Columns j0 … of a panel: kNR, or for the last one the remaining columns rounded up to whole
// vectors — to 8 when at most 8 remain in the AVX-512 build (a Half panel).
inline int panel_width(int n, int j0) {
  if (kHasHalf && n - j0 <= 8) return 8;
  return std::min(kNR, (n - j0 + kLanes - 1) / kLanes * kLanes);
}

// Packs rows k0 … k0+kc−1 of B into panels (zeros past column n): the panel at column j0 (a
// multiple of kNR) has width pw = panel_width(n, j0) and holds B(k0+p, j0 + jj) at
// [j0·kc + p·pw + jj]. (Reading full panels of a row-major B in place instead was measured slower
// on the M and L weight gradients: packed panels are contiguous.)
void pack_b(const StridedOperand& B, int n, int k0, int kc, float* out) {
  for (int j0 = 0; j0 < n; j0 += kNR) {
    const int pw = panel_width(n, j0), w = std::min(kNR, n - j0);
    float* dst = out + static_cast<int64_t>(j0) * kc;
    if (w < pw)  // the zero columns of a partial panel
      for (int p = 0; p < kc; ++p) std::fill(dst + p * pw + w, dst + (p + 1) * pw, 0.0f);
    if (B.col_stride == 1 && w == pw && pw % kLanes == 0) {  // rows of B contiguous, whole vectors: pw / kLanes of them a row
      const int nv = pw / kLanes;
      for (int p = 0; p < kc; ++p) {
        const float* src = B.data + (k0 + p) * B.row_stride + j0;
        for (int h = 0; h < nv; ++h) vstore(dst + p * pw + h * kLanes, vload(src + h * kLanes));
      }
    } else if (B.col_stride == 1) {  // rows of B contiguous, a partial or Half panel
      for (int p = 0; p < kc; ++p) std::copy_n(B.data + (k0 + p) * B.row_stride + j0, w, dst + p * pw);
    } else {  // any strides, read along B's columns (contiguous when row_stride is 1, B = Wᵀ)
      for (int jj = 0; jj < w; ++jj) {
        const float* src = B.data + (j0 + jj) * B.col_stride + k0 * B.row_stride;
        for (int p = 0; p < kc; ++p) dst[p * pw + jj] = src[p * B.row_stride];
      }
    }
  }
}

}  // namespace

SgemmKernel sgemm_kernel() { return kKernel; }

void sgemm(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc, GemmInit init,
           const float* row, bool a_lower) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return sgemm_reference(m, n, 0, A, B, C, ldc, init, row);
  thread_local std::vector<float> packed;
  const size_t need = static_cast<size_t>(n + kNR) * std::min(k, kKC);
  if (packed.size() < need) packed.resize(need);
  for (int k0 = 0; k0 < k; k0 += kKC) {
    const int kc = std::min(kKC, k - k0);
    pack_b(B, n, k0, kc, packed.data());
    const GemmInit start = k0 == 0 ? init : GemmInit::kAccumulate;
    for (int i0 = 0; i0 < m; i0 += kMC) {
      const int i1 = std::min(m, i0 + kMC);
      for (int j0 = 0; j0 < n; j0 += kNR) {
        const int width = std::min(kNR, n - j0), pw = panel_width(n, j0), nv = pw / kLanes;
        const bool half = kHasHalf && pw < kLanes;
        const int mr = half ? kHalfMR : kMRs[nv - 1];
        const float* bp = packed.data() + static_cast<int64_t>(j0) * kc;
        const float* rj = start == GemmInit::kRow ? row + j0 : nullptr;
        for (int i = i0; i < i1; i += mr) {
          const int rows = std::min(mr, i1 - i);
          // with A lower triangular, rows i … i+rows−1 have no terms past p = i+rows−1
          const int steps = a_lower ? std::clamp(i + rows - k0, 0, kc) : kc;
#if defined(__AVX512F__)
          const TileFn fn = half ? kHalfTiles[rows - 1] : kTiles[nv - 1][rows - 1];
#else
          const TileFn fn = kTiles[nv - 1][rows - 1];
#endif
          fn(steps, A.data + i * A.row_stride + k0 * A.col_stride, A.row_stride,
                                   A.col_stride, bp, C + i * ldc + j0, ldc, width, start, rj);
        }
      }
    }
  }
}

#else  // no vector kernel for this target: the plain loops (callers use Eigen's product instead)

SgemmKernel sgemm_kernel() { return SgemmKernel::kReference; }

void sgemm(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc, GemmInit init,
           const float* row, bool) {
  sgemm_reference(m, n, k, A, B, C, ldc, init, row);
}

#endif

}  // namespace srbench::model
