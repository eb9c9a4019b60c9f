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

// One vector register of floats and its operations, as a type (tile's template argument): Full
// is the build's widest register; Half, in the AVX-512 build, an 8-float ymm register for a last
// panel of at most 8 columns (a head of 8 channels: the attention products O = P·V, dQ = dS·K,
// dV = Pᵀ·dO, dK = dSᵀ·Q), which a 16-wide tile would run half on zero columns. `mask(n)` selects
// a vector's first n lanes, for the last vector of a partial panel: its other lanes are computed
// on the packed zeros and neither read from C nor written. Every element is the same chain of
// FMAs whichever register holds it.
//
// Ymm: the 8-float register without masks, which AVX2's Full and AVX-512's Half extend.
struct Ymm {
  using T = __m256;
  static constexpr int kLanes = 8;
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T broadcast(float x) { return _mm256_set1_ps(x); }
  static T zero() { return _mm256_setzero_ps(); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
};
#if defined(__AVX512F__)
constexpr SgemmKernel kKernel = SgemmKernel::kAvx512;
struct Full {
  using T = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static Mask mask(int n) { return static_cast<Mask>((1u << n) - 1); }
  static T load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, T v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static T broadcast(float x) { return _mm512_set1_ps(x); }
  static T zero() { return _mm512_setzero_ps(); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
};
struct Half : Ymm {  // masks in AVX-512VL's mask registers
  using Mask = __mmask8;
  using Ymm::load, Ymm::store;
  static Mask mask(int n) { return static_cast<Mask>((1u << n) - 1); }
  static T load(const float* p, Mask m) { return _mm256_maskz_loadu_ps(m, p); }
  static void store(float* p, T v, Mask m) { _mm256_mask_storeu_ps(p, m, v); }
};
constexpr bool kHasHalf = true;
// Panels of up to four vectors (64 columns). Rows per register tile for a panel of nv vectors
// (its accumulators, nv B vectors and a broadcast within the 32 registers): 12 × 1, 8 × 2, 8 × 3,
// 6 × 4. On the linear layers' products of S, M and L (AMD EPYC, CPU time) this ran about 5%
// faster than 8 × 2 throughout (performance.md, round 11): wider tiles reuse each broadcast.
constexpr int kMRs[] = {12, 8, 8, 6};
#else
constexpr SgemmKernel kKernel = SgemmKernel::kAvx2;
struct Full : Ymm {  // masks as vectors of lanes, for vmaskmov
  using Mask = __m256i;
  using Ymm::load, Ymm::store;
  static Mask mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static T load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, T v, Mask m) { _mm256_maskstore_ps(p, m, v); }
};
constexpr bool kHasHalf = false;
constexpr int kMRs[] = {6, 6};  // 6 × 2 accumulators, two B vectors and a broadcast: 15 of 16 registers
#endif
// A whose successive inner steps lie a page or more apart (A = Mᵀ of a row-major M at least 1,024
// floats wide: the weight gradient dYᵀ·X of a layer with 1,024 outputs) is copied into a
// contiguous block first in the AVX2 build, whose 16-column panels read the block of A once per
// 16 columns of C: read in place, every step of the tile's loop touched a new page and ran from
// L2 (L's fc1 weight gradient at 69 GFLOP/s against 104 for its other products; performance.md,
// round 19). The AVX-512 build's wider panels read A a quarter as often and ran slower with the
// copy, so it reads A in place.
constexpr bool kPackFarA = !kHasHalf;
constexpr int64_t kFarStride = 1024;  // floats: 4 KiB
constexpr int kLanes = Full::kLanes;
constexpr int kHalfMR = 12;  // rows of a Half tile: 12 accumulators, B and a broadcast

constexpr int kNV = sizeof(kMRs) / sizeof(kMRs[0]);  // vectors per panel of B, at most
constexpr int kMR = *std::max_element(kMRs, kMRs + kNV);  // rows per register tile, at most
constexpr int kNR = kNV * kLanes;  // columns per panel of B: a register tile is MR × (1 … kNV vectors)
constexpr int kKC = 512;         // inner-dimension block: a packed panel is at most kKC × kNR floats
constexpr int kMC = 96;          // rows of A per block (re-read from L2 for each panel of B)

// The register tile: C[0..MR)[0..width) (row stride ldc) = its start + A-rows × panel bp (kc rows
// of NV·lanes floats, zero past width) over kc inner steps, in vectors of Vec; width > (NV − 1)·lanes.
// `start`: load C (accumulate), zero, or the row vector `row`.
template <int MR, int NV, typename Vec = Full>
inline void tile(int kc, const float* a, int64_t rsa, int64_t csa, const float* bp, float* c, int64_t ldc,
                 int width, GemmInit start, const float* row) {
  constexpr int L = Vec::kLanes, NL = NV - 1;
  const bool partial = width < NV * L;
  const auto m = Vec::mask(width - NL * L);
  typename Vec::T acc[MR][NV];
  for (int r = 0; r < MR; ++r) {
    for (int h = 0; h < NV; ++h) {
      if (start == GemmInit::kZero) acc[r][h] = Vec::zero();
      else {
        const float* src = start == GemmInit::kAccumulate ? c + r * ldc + h * L : row + h * L;
        acc[r][h] = h == NL && partial ? Vec::load(src, m) : Vec::load(src);
      }
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
  for (int r = 0; r < MR; ++r) {
    for (int h = 0; h < NL; ++h) Vec::store(c + r * ldc + h * L, acc[r][h]);
    if (partial) Vec::store(c + r * ldc + NL * L, acc[r][NL], m);
    else Vec::store(c + r * ldc + NL * L, acc[r][NL]);
  }
}

using TileFn = void (*)(int, const float*, int64_t, int64_t, const float*, float*, int64_t, int, GemmInit,
                        const float*);

// kTiles[NV − 1][MR − 1], for MR up to kMRs[NV − 1] (nullptr past it)
template <int NV, int MR>
constexpr TileFn tile_entry() {
  if constexpr (MR <= kMRs[NV - 1]) return &tile<MR, NV>;
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
  return {&tile<R + 1, 1, Half>...};
}
constexpr auto kHalfTiles = half_row(std::make_integer_sequence<int, kHalfMR>{});
#endif

// Columns j0 … of a panel: kNR, or for the last one the remaining columns rounded up to whole
// vectors — to 8 when at most 8 remain in the AVX-512 build (a Half panel).
inline int panel_width(int n, int j0) {
  if (kHasHalf && n - j0 <= 8) return 8;
  return std::min(kNR, (n - j0 + kLanes - 1) / kLanes * kLanes);
}

// dst[p·pw + jj] = src[jj·ld + p] for p < 8, jj < 8: an 8 × 8 block of a row-major matrix M
// (B = Mᵀ) transposed into 8 rows of a packed panel, by the usual unpack / shuffle / permute
// sequence of 8-float registers (a copy: each value moves unchanged).
inline void transpose8x8(const float* src, int64_t ld, float* dst, int64_t pw) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * pw, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * pw, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// Copies A's rows i0 … i1−1, inner steps k0 … k0+kc−1, into out as blocks of mr rows: rows i …
// i+r−1 (r = min(mr, i1 − i)) at out + (i − i0)·kc, inner step p of row i+q at [p·r + q] — what
// tile reads with row stride 1 and column stride r.
void pack_a(const StridedOperand& A, int i0, int i1, int k0, int kc, int mr, float* out) {
  for (int i = i0; i < i1; i += mr) {
    const int r = std::min(mr, i1 - i);
    float* dst = out + static_cast<int64_t>(i - i0) * kc;
    const float* src = A.data + i * A.row_stride + k0 * A.col_stride;
    for (int p = 0; p < kc; ++p)
      for (int q = 0; q < r; ++q) dst[p * r + q] = src[q * A.row_stride + p * A.col_stride];
  }
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
        for (int h = 0; h < nv; ++h) Full::store(dst + p * pw + h * kLanes, Full::load(src + h * kLanes));
      }
    } else if (B.col_stride == 1) {  // rows of B contiguous, a partial or Half panel
      for (int p = 0; p < kc; ++p) std::copy_n(B.data + (k0 + p) * B.row_stride + j0, w, dst + p * pw);
    } else {  // any strides, read along B's columns (contiguous when row_stride is 1, B = Wᵀ)
      int jj = 0;
      if (B.row_stride == 1)  // B = Mᵀ, M row-major: 8 × 8 blocks transposed in registers
        for (; jj + 8 <= w; jj += 8) {
          const float* src = B.data + (j0 + jj) * B.col_stride + k0;
          int p = 0;
          for (; p + 8 <= kc; p += 8) transpose8x8(src + p, B.col_stride, dst + p * pw + jj, pw);
          for (; p < kc; ++p)
            for (int q = 0; q < 8; ++q) dst[p * pw + jj + q] = src[q * B.col_stride + p];
        }
      for (; jj < w; ++jj) {
        const float* src = B.data + (j0 + jj) * B.col_stride + k0 * B.row_stride;
        for (int p = 0; p < kc; ++p) dst[p * pw + jj] = src[p * B.row_stride];
      }
    }
  }
}

// dst[j·ldd + i] = src[i·lds + j] for i < rows, j < cols: 8 × 8 blocks in registers, the edges one
// float at a time (a copy: each value moves unchanged).
void transpose_copy(const float* src, int64_t lds, int rows, int cols, float* dst, int64_t ldd) {
  int i = 0;
  for (; i + 8 <= rows; i += 8) {
    int j = 0;
    for (; j + 8 <= cols; j += 8) transpose8x8(src + i * lds + j, lds, dst + j * ldd + i, ldd);
    for (; j < cols; ++j)
      for (int q = 0; q < 8; ++q) dst[j * ldd + i + q] = src[(i + q) * lds + j];
  }
  for (; i < rows; ++i)
    for (int j = 0; j < cols; ++j) dst[j * ldd + i] = src[i * lds + j];
}

// In the AVX2 build, C = init + A·B with A far (its inner steps a page or more apart: the weight
// gradient dYᵀ·X of a layer with 1,024 or more outputs) and B's rows contiguous and near, for
// fewer columns than rows, runs as Cᵀ = initᵀ + Bᵀ·Aᵀ in a scratch n × m matrix: Bᵀ is then the A
// read in place (X's rows, a few hundred floats apart) and Aᵀ the B packed by plain row copies,
// where the direct product copied A's far columns into blocks (pack_a). Element (j, i) of Cᵀ is
// the chain c = init; c = fma(B(p, j), A(i, p), c) over p in order — each product the same
// rounded value as A(i, p)·B(p, j), so every result is bit for bit the direct one (tested). L's
// fc1 weight gradient, two chunks of m 1,024, n 128, k 2,048: 73–74 → 83 GFLOP/s on an AMD EPYC
// (x86-64-v3 build; performance.md, round 22). The AVX-512 build is faster direct (198 against 163).
constexpr bool use_transposed(int m, int n, const StridedOperand& A, const StridedOperand& B, bool a_lower) {
  return kPackFarA && !a_lower && n < m && A.col_stride >= kFarStride && B.col_stride == 1 &&
         B.row_stride < kFarStride;
}

}  // namespace

SgemmKernel sgemm_kernel() { return kKernel; }

void sgemm(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc, GemmInit init,
           const float* row, bool a_lower) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return sgemm_reference(m, n, 0, A, B, C, ldc, init, row);
  if (use_transposed(m, n, A, B, a_lower)) {
    thread_local std::vector<float> ct;  // Cᵀ, n × m
    if (ct.size() < static_cast<size_t>(n) * m) ct.resize(static_cast<size_t>(n) * m);
    if (init == GemmInit::kAccumulate) transpose_copy(C, ldc, m, n, ct.data(), m);
    if (init == GemmInit::kRow)  // row j of Cᵀ starts at row[j]
      for (int j = 0; j < n; ++j) std::fill_n(ct.data() + static_cast<int64_t>(j) * m, m, row[j]);
    // Bᵀ (n × k): element (j, p) = B(p, j); Aᵀ (k × m): element (p, i) = A(i, p)
    sgemm(n, m, k, {B.data, B.col_stride, B.row_stride}, {A.data, A.col_stride, A.row_stride}, ct.data(), m,
          init == GemmInit::kZero ? GemmInit::kZero : GemmInit::kAccumulate);
    return transpose_copy(ct.data(), m, n, m, C, ldc);
  }
  // One panel whose rows B already holds contiguously at the panel's width (a row-major B of at
  // most kNR columns, a whole number of vectors, e.g. a small model's weights): read in place.
  const bool in_place = n <= kNR && B.col_stride == 1 && B.row_stride == n && panel_width(n, 0) == n;
  thread_local std::vector<float> packed;
  const size_t need = in_place ? 0 : static_cast<size_t>(n + kNR) * std::min(k, kKC);
  if (packed.size() < need) packed.resize(need);
  const bool pack_far_a = kPackFarA && A.col_stride >= kFarStride;
  thread_local std::vector<float> a_block;  // A's block of rows i0 … i1−1 when pack_far_a
  if (pack_far_a && a_block.size() < static_cast<size_t>(kMC) * kKC) a_block.resize(static_cast<size_t>(kMC) * kKC);
  for (int k0 = 0; k0 < k; k0 += kKC) {
    const int kc = std::min(kKC, k - k0);
    const float* bpanels = in_place ? B.data + static_cast<int64_t>(k0) * B.row_stride : packed.data();
    if (!in_place) pack_b(B, n, k0, kc, packed.data());
    const GemmInit start = k0 == 0 ? init : GemmInit::kAccumulate;
    for (int i0 = 0; i0 < m; i0 += kMC) {
      const int i1 = std::min(m, i0 + kMC);
      int a_block_mr = 0;  // the rows per block a_block holds (0: none yet)
      for (int j0 = 0; j0 < n; j0 += kNR) {
        const int width = std::min(kNR, n - j0), pw = panel_width(n, j0), nv = pw / kLanes;
        const bool half = kHasHalf && pw < kLanes;
        const int mr = half ? kHalfMR : kMRs[nv - 1];
        if (pack_far_a && mr != a_block_mr) pack_a(A, i0, i1, k0, kc, mr, a_block.data()), a_block_mr = mr;
        const float* bp = bpanels + static_cast<int64_t>(j0) * kc;
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
          // rows i … i+rows−1 of A from k0 on: in place, or their block in a_block (pack_a's layout)
          const float* a = pack_far_a ? a_block.data() + static_cast<int64_t>(i - i0) * kc
                                      : A.data + i * A.row_stride + k0 * A.col_stride;
          const int64_t rsa = pack_far_a ? 1 : A.row_stride, csa = pack_far_a ? rows : A.col_stride;
          fn(steps, a, rsa, csa, bp, C + i * ldc + j0, ldc, width, start, rj);
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
