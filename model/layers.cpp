#include "model/layers.hpp"

// GCC 12 reports false -Wmaybe-uninitialized warnings inside the AVX-512 intrinsics that Eigen's
// matrix products use (hundreds of them with -march=native); they are not about this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "model/eigen_views.hpp"
#include "model/fastmath.hpp"
#include "model/parallel.hpp"
#include "model/sgemm.hpp"

namespace srbench::model {

namespace {

// A row-major matrix view whose rows are `stride` apart (a column slice of a wider matrix).
template <typename S>
using StridedR = Eigen::Map<MatR<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using StridedRC = Eigen::Map<const MatR<S>, 0, Eigen::OuterStride<>>;

// GEMM chunks: a product is split into two halves (for two threads), each at least kMinRowChunk
// rows (products over rows) or kMinColChunk input features (weight gradients). The split depends
// on the shape only, never on the thread count, so neither do the results (and sgemm's do not
// depend on the split at all). Every row chunk re-packs the weight it shares with the others:
// fewer, larger chunks pack less.
constexpr int kMinRowChunk = 256;
constexpr int kMinColChunk = 32;

// Below this many multiply-adds a loop runs on one thread (a parallel region costs more); the
// chunks and hence the results are the same either way.
constexpr int64_t kMinParallelWork = 1 << 16;

inline int chunks(int n, int chunk) { return (n + chunk - 1) / chunk; }
// The chunk size that splits n into (at most) two halves, a multiple of 16, at least `least`.
inline int half_chunk(int n, int least) { return std::max(least, ((n + 1) / 2 + 15) / 16 * 16); }

// ---- GEMM with a persistent packing workspace ------------------------------------------------
// Eigen's matrix product allocates its packing buffers (blockA, blockB) on the heap for every
// product larger than EIGEN_STACK_ALLOCATION_LIMIT. gemm_add() calls the same Eigen kernel
// (general_matrix_matrix_product, the same blocking sizes as `C.noalias() += A * B` computes with
// EIGEN_DONT_PARALLELIZE) with buffers owned by the calling thread, which grow to the largest
// product seen and are then reused: no allocation after the first training step. The numbers are
// those of the Eigen expression.
template <typename S>
class ThreadBlocking : public Eigen::internal::level3_blocking<S, S> {
 public:
  // For a row-major result of `rows` × `cols` and inner dimension `depth` (Eigen computes the
  // transposed, column-major product: its "m" is our cols).
  ThreadBlocking(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth) {
    this->m_mc = cols;
    this->m_nc = rows;
    this->m_kc = depth;
    Eigen::internal::computeProductBlockingSizes<S, S, 1, Eigen::Index>(this->m_kc, this->m_mc, this->m_nc, 1);
    constexpr Eigen::Index kAlign = 64 / sizeof(S);
    const Eigen::Index a = (this->m_mc * this->m_kc + kAlign - 1) / kAlign * kAlign;
    const Eigen::Index need = a + this->m_kc * this->m_nc;
    thread_local std::vector<S, Eigen::aligned_allocator<S>> buffer;
    if (static_cast<Eigen::Index>(buffer.size()) < need) buffer.resize(static_cast<size_t>(need));
    this->m_blockA = buffer.data();
    this->m_blockB = buffer.data() + a;
  }
};

// C (m×n, row-major, row stride ldc) += op(A)·op(B): A is m×k row-major (lda) or, with TA, its
// transpose stored k×m (lda); B is k×n row-major (ldb) or, with TB, stored n×k (ldb).
template <bool TA, bool TB, typename S>
void gemm_add(int m, int n, int k, const S* A, int lda, const S* B, int ldb, S* C, int ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  ThreadBlocking<S> blocking(m, n, k);
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, S, TA ? Eigen::ColMajor : Eigen::RowMajor, false, S,
                                                 TB ? Eigen::ColMajor : Eigen::RowMajor, false, Eigen::RowMajor,
                                                 1>::run(m, n, k, A, lda, B, ldb, C, 1, ldc, S(1), blocking);
}

// The float products of the linear layers and of softmax attention run on sgemm's kernel where the target has one (its
// results do not depend on how a product is split); double products (the gradient checks) and
// other targets on Eigen's.
template <typename S>
constexpr bool kUseSgemm = std::is_same_v<S, float> && kSgemmVectorised;

constexpr double kNormEps = 1e-5;

// erf, and exp of arguments <= 0 (softmax, GeLU'): fastmath for float (vectorisable, the same
// bits whatever the alignment), libm for double.
template <typename S>
inline S erf_(S x) {
  if constexpr (std::is_same_v<S, float>) return fastmath::erf(x);
  else return std::erf(x);
}
template <typename S>
inline S exp_nonpositive_(S x) {
  if constexpr (std::is_same_v<S, float>) return fastmath::exp_nonpositive(x);
  else return std::exp(x);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
template <typename S>
void encoder_forward(S* out, const int32_t* tokens, const S* tok_emb, const S* pos, int B, int T, int C) {
  const int N = B * T;
  parallel_for(N, N >= 256, [&](int n) {
    S* o = out + static_cast<int64_t>(n) * C;
    const S* e = tok_emb + static_cast<int64_t>(tokens[n]) * C;
    if (pos) {
      const S* p = pos + static_cast<int64_t>(n % T) * C;
      for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    } else {
      for (int c = 0; c < C; ++c) o[c] = e[c];
    }
  });
}

template <typename S>
void encoder_backward(S* dtok_emb, S* dpos, const S* dout, const int32_t* tokens, int B, int T, int C) {
  // d(out[n]) / d(tok_emb[tokens[n]]) = 1: scatter-add in row order (rows may share a token).
  const int N = B * T;
  for (int n = 0; n < N; ++n) {
    S* d = dtok_emb + static_cast<int64_t>(tokens[n]) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) d[c] += g[c];
  }
  if (!dpos) return;
  parallel_for(T, N >= 256, [&](int t) {
    S* d = dpos + static_cast<int64_t>(t) * C;
    for (int b = 0; b < B; ++b) {
      const S* g = dout + (static_cast<int64_t>(b) * T + t) * C;
      for (int c = 0; c < C; ++c) d[c] += g[c];
    }
  });
}

// ---------------------------------------------------------------------------------------------
template <typename S>
void layernorm_forward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, int N, int C) {
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S m = fastmath::lane_sum<S>(C, [&](int64_t c) { return x[c]; }) / S(C);
    const S v = fastmath::lane_sum<S>(C, [&](int64_t c) { return (x[c] - m) * (x[c] - m); }) / S(C);
    const S s = S(1) / std::sqrt(v + S(kNormEps));
    S* o = out + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  });
}

template <typename S>
void layernorm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                        const S* mean, const S* rstd, int N, int C) {
  // out = xhat·w + b, xhat = (x − mean)·rstd:
  // dx = rstd·(w·dout − mean(w·dout) − xhat·mean(w·dout·xhat)).
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S m = mean[n], s = rstd[n];
    const S a = fastmath::lane_sum<S>(C, [&](int64_t c) { return weight[c] * g[c]; }) / S(C);
    const S b = fastmath::lane_sum<S>(C, [&](int64_t c) { return weight[c] * g[c] * (x[c] - m) * s; }) / S(C);
    S* dx = dinp + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) dx[c] += s * (weight[c] * g[c] - a - (x[c] - m) * s * b);
  });
  // dw += Σ_n dout·xhat, db += Σ_n dout: rows in order.
  for (int n = 0; n < N; ++n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S m = mean[n], s = rstd[n];
    for (int c = 0; c < C; ++c) {
      dweight[c] += g[c] * (x[c] - m) * s;
      dbias[c] += g[c];
    }
  }
}

template <typename S>
void rmsnorm_forward(S* out, S* rstd, const S* inp, const S* weight, int N, int C) {
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S ss = fastmath::lane_sum<S>(C, [&](int64_t c) { return x[c] * x[c]; });
    const S s = S(1) / std::sqrt(ss / C + S(kNormEps));
    S* o = out + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) o[c] = x[c] * s * weight[c];
    rstd[n] = s;
  });
}

template <typename S>
void rmsnorm_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight, const S* rstd,
                      int N, int C) {
  // out = w·x·r, r = (mean(x²) + eps)^(−1/2): dx = r·w·dout − x·r³·mean(x·w·dout).
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S s = rstd[n];
    const S a = fastmath::lane_sum<S>(C, [&](int64_t c) { return x[c] * weight[c] * g[c]; }) / S(C);
    S* dx = dinp + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) dx[c] += s * weight[c] * g[c] - x[c] * s * s * s * a;
  });
  for (int n = 0; n < N; ++n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S s = rstd[n];
    for (int c = 0; c < C; ++c) dweight[c] += g[c] * x[c] * s;
  }
}

// ---------------------------------------------------------------------------------------------
template <typename S>
void matmul_forward(S* out, const S* inp, const S* weight, const S* bias, int N, int C, int OC) {
  const int rc = half_chunk(N, kMinRowChunk), nc = chunks(N, rc);
  const bool parallel = nc > 1 && static_cast<int64_t>(N) * C * OC >= kMinParallelWork;
  parallel_for(nc, parallel, [&](int i) {
    const int r0 = i * rc, rows = std::min(rc, N - r0);
    S* Y = out + static_cast<int64_t>(r0) * OC;
    if constexpr (kUseSgemm<S>) {  // y = b + x·Wᵀ: W (OC×C) read as the C×OC operand Wᵀ
      sgemm(rows, OC, C, {inp + static_cast<int64_t>(r0) * C, C, 1}, {weight, 1, C}, Y, OC,
            bias ? GemmInit::kRow : GemmInit::kZero, bias);
      return;
    }
    // start from the bias (or 0): the product then adds to it
    for (int r = 0; r < rows; ++r) {
      S* y = Y + static_cast<int64_t>(r) * OC;
      if (bias) std::copy(bias, bias + OC, y);
      else std::fill(y, y + OC, S(0));
    }
    gemm_add<false, true>(rows, OC, C, inp + static_cast<int64_t>(r0) * C, C, weight, C, Y, OC);
  });
}

template <typename S>
void matmul_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight, int N,
                     int C, int OC) {
  // out = inp·Wᵀ + b: dinp = dout·W, in row chunks.
  if (dinp) {
    const int rc = half_chunk(N, kMinRowChunk), nc = chunks(N, rc);
    const bool parallel = nc > 1 && static_cast<int64_t>(N) * C * OC >= kMinParallelWork;
    parallel_for(nc, parallel, [&](int i) {
      const int r0 = i * rc, rows = std::min(rc, N - r0);
      S* dX = dinp + static_cast<int64_t>(r0) * C;
      if constexpr (kUseSgemm<S>) {
        sgemm(rows, C, OC, {dout + static_cast<int64_t>(r0) * OC, OC, 1}, {weight, C, 1}, dX, C, GemmInit::kZero);
        return;
      }
      std::fill(dX, dX + static_cast<int64_t>(rows) * C, S(0));
      gemm_add<false, false>(rows, C, OC, dout + static_cast<int64_t>(r0) * OC, OC, weight, C, dX, C);
    });
  }
  // dW += doutᵀ·inp in chunks of input features (columns of dW and of inp: each chunk packs only its
  // columns of inp), and db += Σ_n dout in as many chunks of output features; each a full sum over rows.
  const int cc = half_chunk(C, kMinColChunk), nc = chunks(C, cc), bc = (OC + nc - 1) / nc;
  const bool parallel = nc > 1 && static_cast<int64_t>(N) * C * OC >= kMinParallelWork;
  parallel_for(nc, parallel, [&](int i) {
    const int c0 = i * cc, cols = std::min(cc, C - c0);
    if constexpr (kUseSgemm<S>)  // doutᵀ: element (o, n) of the OC×N operand is dout[n·OC + o]
      sgemm(OC, cols, N, {dout, 1, OC}, {inp + c0, C, 1}, dweight + c0, C, GemmInit::kAccumulate);
    else
      gemm_add<true, false>(OC, cols, N, dout, OC, inp + c0, C, dweight + c0, C);
    if (dbias) {
      const int o0 = i * bc, o1 = std::min(OC, o0 + bc);
      for (int n = 0; n < N; ++n) {
        const S* g = dout + static_cast<int64_t>(n) * OC;
        for (int o = o0; o < o1; ++o) dbias[o] += g[o];
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
namespace {
// Rotates each (x_2i, x_2i+1) of the q and k parts of one row by ±angle.
template <typename S>
void rotate_row(S* row, const S* cs, int C, int H, S sign) {
  const int hs = C / H, half = hs / 2;
  for (int part = 0; part < 2; ++part) {
    for (int h = 0; h < H; ++h) {
      S* x = row + part * C + h * hs;
      for (int i = 0; i < half; ++i) {
        const S c = cs[2 * i], s = sign * cs[2 * i + 1];
        const S a = x[2 * i], b = x[2 * i + 1];
        x[2 * i] = a * c - b * s;
        x[2 * i + 1] = a * s + b * c;
      }
    }
  }
}
}  // namespace

template <typename S>
void rope_forward(S* qkv, const S* cos_sin, int B, int T, int C, int H) {
  const int N = B * T, hs = C / H;
  parallel_for(N, N >= 256, [&](int n) {
    rotate_row(qkv + static_cast<int64_t>(n) * 3 * C, cos_sin + static_cast<int64_t>(n % T) * hs, C, H, S(1));
  });
}

template <typename S>
void rope_backward(S* dqkv, const S* cos_sin, int B, int T, int C, int H) {
  // y = R·x with R orthogonal: dx = Rᵀ·dy, the rotation by −angle.
  const int N = B * T, hs = C / H;
  parallel_for(N, N >= 256, [&](int n) {
    rotate_row(dqkv + static_cast<int64_t>(n) * 3 * C, cos_sin + static_cast<int64_t>(n % T) * hs, C, H, S(-1));
  });
}

// ---------------------------------------------------------------------------------------------
// The products of causal attention for one (example, head): P is T×T with zeros above the
// diagonal, the others T×hs (strided maps into qkv / out). sgemm for float, Eigen's triangular
// products for double.
namespace {

// P = Q·Kᵀ on and below the diagonal (what is left above it is unspecified: the caller's row pass
// sets it to zero).
template <typename MP, typename MQ, typename MK>
void causal_scores(MP& P, const MQ& Q, const MK& K) {
  using S = typename MP::Scalar;
  const int T = static_cast<int>(P.rows()), hs = static_cast<int>(Q.cols());
  if constexpr (kUseSgemm<S>)
    sgemm(T, T, hs, {Q.data(), Q.outerStride(), 1}, {K.data(), 1, K.outerStride()}, P.data(), T, GemmInit::kZero);
  else
    P.template triangularView<Eigen::Lower>() = Q * K.transpose();
}

// O = P·V.
template <typename MO, typename MP, typename MV>
void causal_mix(MO& O, const MP& P, const MV& V) {
  using S = typename MP::Scalar;
  const int T = static_cast<int>(P.rows()), hs = static_cast<int>(V.cols());
  if constexpr (kUseSgemm<S>)
    sgemm(T, hs, T, {P.data(), T, 1}, {V.data(), V.outerStride(), 1}, O.data(), O.outerStride(), GemmInit::kZero,
          nullptr, true);
  else
    O.noalias() = P.template triangularView<Eigen::Lower>() * V;
}

// The backward of O = P·V: dV = Pᵀ·dO, and dP = dO·Vᵀ on and below the diagonal (what is left
// above it is unspecified: the caller's row pass sets it to zero).
template <typename MdV, typename MdP, typename MP, typename MdO, typename MV>
void causal_mix_backward(MdV& dV, MdP& dP, const MP& P, const MdO& dO, const MV& V) {
  using S = typename MP::Scalar;
  const int T = static_cast<int>(P.rows()), hs = static_cast<int>(V.cols());
  if constexpr (kUseSgemm<S>) {
    sgemm(T, hs, T, {P.data(), 1, T}, {dO.data(), dO.outerStride(), 1}, dV.data(), dV.outerStride(), GemmInit::kZero);
    sgemm(T, T, hs, {dO.data(), dO.outerStride(), 1}, {V.data(), 1, V.outerStride()}, dP.data(), T, GemmInit::kZero);
  } else {
    dV.noalias() = P.template triangularView<Eigen::Lower>().transpose() * dO;
    dP.template triangularView<Eigen::Lower>() = dO * V.transpose();
  }
}

// The backward of the scores S = Q·Kᵀ from dS (zero above the diagonal): dQ = dS·K, dK = dSᵀ·Q.
template <typename MdQ, typename MdK, typename MdS, typename MQ, typename MK>
void causal_scores_backward(MdQ& dQ, MdK& dK, const MdS& dS, const MQ& Q, const MK& K) {
  using S = typename MdS::Scalar;
  const int T = static_cast<int>(dS.rows()), hs = static_cast<int>(Q.cols());
  if constexpr (kUseSgemm<S>) {
    sgemm(T, hs, T, {dS.data(), T, 1}, {K.data(), K.outerStride(), 1}, dQ.data(), dQ.outerStride(), GemmInit::kZero,
          nullptr, true);
    sgemm(T, hs, T, {dS.data(), 1, T}, {Q.data(), Q.outerStride(), 1}, dK.data(), dK.outerStride(), GemmInit::kZero);
  } else {
    dQ.noalias() = dS.template triangularView<Eigen::Lower>() * K;
    dK.noalias() = dS.template triangularView<Eigen::Lower>().transpose() * Q;
  }
}

}  // namespace

template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const S* alibi_slopes, int B, int T, int C, int H) {
  const int hs = C / H;
  const S scale = S(1) / std::sqrt(S(hs));
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H;
    const S* base = qkv + static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(base, T, hs, s3), K(base + C, T, hs, s3), V(base + 2 * C, T, hs, s3);
    MapR<S> P(att + (static_cast<int64_t>(b) * H + h) * T * T, T, T);
    causal_scores(P, Q, K);
    const S slope = alibi_slopes ? alibi_slopes[h] : S(0);
    for (int i = 0; i < T; ++i) {
      S* p = P.data() + static_cast<int64_t>(i) * T;
      for (int j = 0; j <= i; ++j) p[j] *= scale;
      if (alibi_slopes)
        for (int j = 0; j <= i; ++j) p[j] -= slope * S(i - j);
      S mx = p[0];
      for (int j = 1; j <= i; ++j) mx = std::max(mx, p[j]);
      for (int j = 0; j <= i; ++j) p[j] = exp_nonpositive_(p[j] - mx);
      S sum = 0;
      for (int j = 0; j <= i; ++j) sum += p[j];
      const S inv = S(1) / sum;
      for (int j = 0; j <= i; ++j) p[j] *= inv;
      for (int j = i + 1; j < T; ++j) p[j] = 0;
    }
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    causal_mix(O, P, V);
  });
}

template <typename S>
void attention_backward(S* dqkv, S* scratch, const S* dout, const S* qkv, const S* att, int B, int T, int C,
                        int H) {
  const int hs = C / H;
  const S scale = S(1) / std::sqrt(S(hs));
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H;
    const int64_t off = static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(qkv + off, T, hs, s3), K(qkv + off + C, T, hs, s3), V(qkv + off + 2 * C, T, hs, s3);
    StridedR<S> dQ(dqkv + off, T, hs, s3), dK(dqkv + off + C, T, hs, s3), dV(dqkv + off + 2 * C, T, hs, s3);
    const StridedRC<S> dO(dout + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    const MapRC<S> P(att + (static_cast<int64_t>(b) * H + h) * T * T, T, T);
    MapR<S> dP(scratch + static_cast<int64_t>(omp_get_thread_num()) * T * T, T, T);
    // out = P·V: dV = Pᵀ·dO, dP = dO·Vᵀ (its causal part is used).
    causal_mix_backward(dV, dP, P, dO, V);
    // P_ij = softmax_j(s_ij): ds_ij = P_ij·(dP_ij − Σ_j' P_ij'·dP_ij'); s = scale·q·k.
    for (int i = 0; i < T; ++i) {
      const S* p = P.data() + static_cast<int64_t>(i) * T;
      S* d = dP.data() + static_cast<int64_t>(i) * T;
      S dot = 0;
      for (int j = 0; j <= i; ++j) dot += p[j] * d[j];
      for (int j = 0; j <= i; ++j) d[j] = p[j] * (d[j] - dot) * scale;
      for (int j = i + 1; j < T; ++j) d[j] = 0;
    }
    causal_scores_backward(dQ, dK, dP, Q, K);
  });
}

// ---------------------------------------------------------------------------------------------
namespace {
constexpr int64_t kElemChunk = 4096;  // elements per chunk of an elementwise loop

}  // namespace

template <typename S>
void gelu_forward(S* out, const S* inp, int64_t n) {
  // gelu(x) = x·Φ(x) = ½·x·(1 + erf(x/√2)).
  const S r = S(1) / std::sqrt(S(2));
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) out[i] = S(0.5) * inp[i] * (S(1) + erf_(inp[i] * r));
  });
}

template <typename S>
void gelu_backward(S* dinp, const S* inp, const S* dout, int64_t n) {
  // gelu'(x) = Φ(x) + x·φ(x) = ½·(1 + erf(x/√2)) + x·exp(−x²/2)/√(2π).
  const S r = S(1) / std::sqrt(S(2));
  const S k = S(1) / std::sqrt(S(2) * S(M_PI));
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) {
      const S x = inp[i];
      dinp[i] = dout[i] * (S(0.5) * (S(1) + erf_(x * r)) + x * k * exp_nonpositive_(S(-0.5) * x * x));
    }
  });
}

template <typename S>
void relu_forward(S* out, const S* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = inp[i] > S(0) ? inp[i] : S(0);
}

template <typename S>
void relu_backward(S* dinp, const S* inp, const S* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] = inp[i] > S(0) ? dout[i] : S(0);
}

template <typename S>
void residual_forward(S* out, const S* a, const S* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

// ---------------------------------------------------------------------------------------------
namespace {

// Where x falls on the spline: segment k, offset t = u − k (in [0, 1] inside the range; beyond
// it under linear extrapolation), and whether u was clamped (constant extrapolation).
template <typename S>
struct SplineAt {
  int k;
  S t;
  bool clamped;
};

template <typename S>
struct SplineGrid {
  S R, h;
  int K;
  bool linear;
  explicit SplineGrid(const SplineShape& sp)
      : R(static_cast<S>(sp.range)), h(static_cast<S>(2.0 * sp.range / (sp.keypoints - 1))), K(sp.keypoints),
        linear(sp.linear) {}

  SplineAt<S> at(S x) const {
    S u = (x + R) / h;
    bool clamped = false;
    if (!linear) {  // written so that a NaN stays NaN (and propagates)
      if (u < S(0)) u = S(0), clamped = true;
      else if (u > S(K - 1)) u = S(K - 1), clamped = true;
    }
    S f = std::floor(u);
    f = f >= S(0) ? f : S(0);           // NaN → 0: never an index out of range
    f = f <= S(K - 2) ? f : S(K - 2);
    return {static_cast<int>(f), u - f, clamped};
  }
  S value(const S* theta, const SplineAt<S>& a) const { return theta[a.k] + a.t * (theta[a.k + 1] - theta[a.k]); }
  S slope(const S* theta, const SplineAt<S>& a) const {
    return a.clamped ? S(0) : (theta[a.k + 1] - theta[a.k]) / h;
  }
};

// Sign with sign(0) = 0: the derivative of |x| (model.md: taken as 0 at 0).
template <typename S>
inline S sign0(S x) {
  return x > S(0) ? S(1) : (x < S(0) ? S(-1) : S(0));
}

constexpr double kSplineAttnEps = 1e-6;

// Per-chunk partial sums of the spline values' gradient: rows of K doubles, added to dvalues in
// row order (so the result does not depend on which thread computed which row).
std::vector<double>& spline_partials(int64_t rows, int K) {
  thread_local std::vector<double> p;
  const size_t need = static_cast<size_t>(rows) * static_cast<size_t>(K);
  if (p.size() < need) p.resize(need);
  std::fill(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(need), 0.0);
  return p;
}

template <typename S>
void add_partials(S* dvalues, const double* partial, int64_t rows, int K) {
  for (int k = 0; k < K; ++k) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += partial[r * K + k];
    dvalues[k] += static_cast<S>(s);
  }
}

}  // namespace

template <typename S>
void spline_forward(S* out, const S* inp, const S* values, int64_t n, const SplineShape& sp) {
  const SplineGrid<S> g(sp);
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) out[i] = g.value(values, g.at(inp[i]));
  });
}

template <typename S>
void spline_backward(S* dinp, S* dvalues, const S* dout, const S* inp, const S* values, int64_t n,
                     const SplineShape& sp) {
  // φ = θ_k + t·(θ_{k+1} − θ_k), t = u − k, u = (x+R)/h: dx = dout·(θ_{k+1} − θ_k)/h (0 if
  // clamped); dθ_k += dout·(1 − t), dθ_{k+1} += dout·t.
  const SplineGrid<S> g(sp);
  const int K = sp.keypoints;
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  double* partial = spline_partials(nc, K).data();
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    double* pk = partial + c * K;
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) {
      const SplineAt<S> a = g.at(inp[i]);
      const S d = dout[i];
      pk[a.k] += static_cast<double>(d * (S(1) - a.t));
      pk[a.k + 1] += static_cast<double>(d * a.t);
      dinp[i] = d * g.slope(values, a);
    }
  });
  add_partials(dvalues, partial, nc, K);
}

namespace {
// Row i of a causal T×T block holding φ values (or kernel values): α_ij = p_ij / (Σ_j |p_ij| + ε);
// returns the denominator.
template <typename S>
S normalise_abs_row(S* p, int i, int T) {
  S z = 0;
  for (int j = 0; j <= i; ++j) z += std::abs(p[j]);
  z += static_cast<S>(kSplineAttnEps);
  const S inv = S(1) / z;
  for (int j = 0; j <= i; ++j) p[j] *= inv;
  for (int j = i + 1; j < T; ++j) p[j] = 0;
  return z;
}
// The backward of normalise_abs_row: with dα in d, α in p and the denominator z,
// dp_ij = (dα_ij − sign(α_ij)·Σ_j' dα_ij'·α_ij') / z (sign(0) = 0); in place.
template <typename S>
void normalise_abs_row_backward(S* d, const S* p, S z, int i, int T) {
  S dot = 0;
  for (int j = 0; j <= i; ++j) dot += d[j] * p[j];
  const S inv = S(1) / z;
  for (int j = 0; j <= i; ++j) d[j] = (d[j] - sign0(p[j]) * dot) * inv;
  for (int j = i + 1; j < T; ++j) d[j] = 0;
}
}  // namespace

template <typename S>
void spline_score_attention_forward(S* out, S* att, S* scores, S* norm, const S* qkv, const S* alibi_slopes,
                                    const S* values, const SplineShape& sp, int B, int T, int C, int H) {
  const int hs = C / H;
  const S scale = S(1) / std::sqrt(S(hs));
  const SplineGrid<S> g(sp);
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H;
    const int64_t bh = static_cast<int64_t>(b) * H + h;
    const S* base = qkv + static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(base, T, hs, s3), K(base + C, T, hs, s3), V(base + 2 * C, T, hs, s3);
    MapR<S> Sc(scores + bh * T * T, T, T);
    MapR<S> P(att + bh * T * T, T, T);
    causal_scores(Sc, Q, K);
    const S slope = alibi_slopes ? alibi_slopes[h] : S(0);
    for (int i = 0; i < T; ++i) {
      S* s = Sc.data() + static_cast<int64_t>(i) * T;
      S* p = P.data() + static_cast<int64_t>(i) * T;
      for (int j = 0; j <= i; ++j) s[j] *= scale;
      if (alibi_slopes)
        for (int j = 0; j <= i; ++j) s[j] -= slope * S(i - j);
      for (int j = i + 1; j < T; ++j) s[j] = 0;
      for (int j = 0; j <= i; ++j) p[j] = g.value(values, g.at(s[j]));
      norm[bh * T + i] = normalise_abs_row(p, i, T);
    }
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    causal_mix(O, P, V);
  });
}

template <typename S>
void spline_score_attention_backward(S* dqkv, S* dvalues, S* scratch, const S* dout, const S* qkv, const S* att,
                                     const S* scores, const S* norm, const S* values, const SplineShape& sp, int B,
                                     int T, int C, int H) {
  const int hs = C / H, Kp = sp.keypoints;
  const S scale = S(1) / std::sqrt(S(hs));
  const SplineGrid<S> g(sp);
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  double* partial = spline_partials(static_cast<int64_t>(B) * H, Kp).data();
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H;
    const int64_t bh = static_cast<int64_t>(b) * H + h;
    const int64_t off = static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(qkv + off, T, hs, s3), K(qkv + off + C, T, hs, s3), V(qkv + off + 2 * C, T, hs, s3);
    StridedR<S> dQ(dqkv + off, T, hs, s3), dK(dqkv + off + C, T, hs, s3), dV(dqkv + off + 2 * C, T, hs, s3);
    const StridedRC<S> dO(dout + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    const MapRC<S> P(att + bh * T * T, T, T);
    MapR<S> dP(scratch + static_cast<int64_t>(omp_get_thread_num()) * T * T, T, T);
    double* pk = partial + bh * Kp;
    // out = α·V: dV = αᵀ·dO, dα = dO·Vᵀ.
    causal_mix_backward(dV, dP, P, dO, V);
    for (int i = 0; i < T; ++i) {
      const S* p = P.data() + static_cast<int64_t>(i) * T;
      const S* s = scores + bh * T * T + static_cast<int64_t>(i) * T;
      S* d = dP.data() + static_cast<int64_t>(i) * T;
      normalise_abs_row_backward(d, p, norm[bh * T + i], i, T);  // d = dφ
      // φ_ij = φ(s_ij): dθ += dφ·∂φ/∂θ; ds = dφ·φ'(s); s = scale·q·k (+ bias).
      for (int j = 0; j <= i; ++j) {
        const SplineAt<S> a = g.at(s[j]);
        pk[a.k] += static_cast<double>(d[j] * (S(1) - a.t));
        pk[a.k + 1] += static_cast<double>(d[j] * a.t);
        d[j] = d[j] * g.slope(values, a) * scale;
      }
    }
    causal_scores_backward(dQ, dK, dP, Q, K);
  });
  add_partials(dvalues, partial, static_cast<int64_t>(B) * H, Kp);
}

namespace {
// The q | k columns of qkv (N,3C) as a contiguous (N,2C) matrix, and back (dq | dk into dqkv).
template <typename S>
void gather_qk(S* qk, const S* qkv, int64_t N, int C) {
  for (int64_t n = 0; n < N; ++n) std::copy(qkv + n * 3 * C, qkv + n * 3 * C + 2 * C, qk + n * 2 * C);
}
template <typename S>
void scatter_qk(S* qkv, const S* qk, int64_t N, int C) {
  for (int64_t n = 0; n < N; ++n) std::copy(qk + n * 2 * C, qk + (n + 1) * 2 * C, qkv + n * 3 * C);
}
}  // namespace

template <typename S>
void spline_kernel_attention_forward(S* out, S* att, S* norm, S* phi, const S* qkv, const S* values,
                                     const SplineShape& sp, int B, int T, int C, int H) {
  const int hs = C / H;
  const int64_t N = static_cast<int64_t>(B) * T;
  gather_qk(phi, qkv, N, C);
  spline_forward(phi, phi, values, N * 2 * C, sp);  // in place: φ(q) | φ(k)
  const Eigen::OuterStride<> s2(2 * C), s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H;
    const int64_t bh = static_cast<int64_t>(b) * H + h;
    const S* fb = phi + static_cast<int64_t>(b) * T * 2 * C + h * hs;
    const StridedRC<S> FQ(fb, T, hs, s2), FK(fb + C, T, hs, s2);
    const StridedRC<S> V(qkv + static_cast<int64_t>(b) * T * 3 * C + 2 * C + h * hs, T, hs, s3);
    MapR<S> P(att + bh * T * T, T, T);
    causal_scores(P, FQ, FK);  // K_ij = φ(q_i)·φ(k_j)
    for (int i = 0; i < T; ++i) norm[bh * T + i] = normalise_abs_row(P.data() + static_cast<int64_t>(i) * T, i, T);
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    causal_mix(O, P, V);
  });
}

template <typename S>
void spline_kernel_attention_backward(S* dqkv, S* dvalues, S* scratch, S* qk, S* dphi, const S* dout, const S* qkv,
                                      const S* att, const S* norm, const S* phi, const S* values,
                                      const SplineShape& sp, int B, int T, int C, int H) {
  const int hs = C / H;
  const int64_t N = static_cast<int64_t>(B) * T;
  const Eigen::OuterStride<> s2(2 * C), s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H;
    const int64_t bh = static_cast<int64_t>(b) * H + h;
    const int64_t off2 = static_cast<int64_t>(b) * T * 2 * C + h * hs;
    const StridedRC<S> FQ(phi + off2, T, hs, s2), FK(phi + off2 + C, T, hs, s2);
    StridedR<S> dFQ(dphi + off2, T, hs, s2), dFK(dphi + off2 + C, T, hs, s2);
    const int64_t off3 = static_cast<int64_t>(b) * T * 3 * C + 2 * C + h * hs;
    const StridedRC<S> V(qkv + off3, T, hs, s3);
    StridedR<S> dV(dqkv + off3, T, hs, s3);
    const StridedRC<S> dO(dout + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    const MapRC<S> P(att + bh * T * T, T, T);
    MapR<S> dP(scratch + static_cast<int64_t>(omp_get_thread_num()) * T * T, T, T);
    causal_mix_backward(dV, dP, P, dO, V);
    for (int i = 0; i < T; ++i)
      normalise_abs_row_backward(dP.data() + static_cast<int64_t>(i) * T, P.data() + static_cast<int64_t>(i) * T,
                                 norm[bh * T + i], i, T);  // dP = dK
    // K = φQ·φKᵀ: dφQ = dK·φK, dφK = dKᵀ·φQ.
    causal_scores_backward(dFQ, dFK, dP, FQ, FK);
  });
  // φ elementwise on q | k: dq | dk = dφ·φ'(q | k); dθ from every element, in fixed chunks.
  gather_qk(qk, qkv, N, C);
  spline_backward(qk, dvalues, dphi, qk, values, N * 2 * C, sp);
  scatter_qk(dqkv, qk, N, C);
}

// ---------------------------------------------------------------------------------------------
template <typename S>
void crossentropy_forward_backward(S* losses, S* dlogits, const S* logits, const int32_t* targets, S scale,
                                   int N, int V) {
  parallel_for(N, N >= 256, [&](int n) {
    const S* z = logits + static_cast<int64_t>(n) * V;
    S* d = dlogits ? dlogits + static_cast<int64_t>(n) * V : nullptr;
    const int32_t y = targets[n];
    if (y < 0) {
      losses[n] = 0;
      if (d) std::fill(d, d + V, S(0));
      return;
    }
    S mx = z[0];
    for (int v = 1; v < V; ++v) mx = std::max(mx, z[v]);
    S sum = 0;
    for (int v = 0; v < V; ++v) sum += exp_nonpositive_(z[v] - mx);
    const S lse = mx + std::log(sum);
    losses[n] = lse - z[y];
    if (d) {
      // loss = lse(z) − z_y: dz = softmax(z) − onehot(y).
      for (int v = 0; v < V; ++v) d[v] = exp_nonpositive_(z[v] - lse) * scale;
      d[y] -= scale;
    }
  });
}

// ---------------------------------------------------------------------------------------------
#define SRBENCH_INSTANTIATE(S)                                                                             \
  template void encoder_forward<S>(S*, const int32_t*, const S*, const S*, int, int, int);                \
  template void encoder_backward<S>(S*, S*, const S*, const int32_t*, int, int, int);                     \
  template void layernorm_forward<S>(S*, S*, S*, const S*, const S*, const S*, int, int);                  \
  template void layernorm_backward<S>(S*, S*, S*, const S*, const S*, const S*, const S*, const S*, int,   \
                                      int);                                                                \
  template void rmsnorm_forward<S>(S*, S*, const S*, const S*, int, int);                                  \
  template void rmsnorm_backward<S>(S*, S*, const S*, const S*, const S*, const S*, int, int);             \
  template void matmul_forward<S>(S*, const S*, const S*, const S*, int, int, int);                        \
  template void matmul_backward<S>(S*, S*, S*, const S*, const S*, const S*, int, int, int);               \
  template void rope_forward<S>(S*, const S*, int, int, int, int);                                         \
  template void rope_backward<S>(S*, const S*, int, int, int, int);                                        \
  template void attention_forward<S>(S*, S*, const S*, const S*, int, int, int, int);                      \
  template void attention_backward<S>(S*, S*, const S*, const S*, const S*, int, int, int, int);           \
  template void gelu_forward<S>(S*, const S*, int64_t);                                                    \
  template void gelu_backward<S>(S*, const S*, const S*, int64_t);                                         \
  template void relu_forward<S>(S*, const S*, int64_t);                                                    \
  template void relu_backward<S>(S*, const S*, const S*, int64_t);                                         \
  template void residual_forward<S>(S*, const S*, const S*, int64_t);                                      \
  template void spline_forward<S>(S*, const S*, const S*, int64_t, const SplineShape&);                    \
  template void spline_backward<S>(S*, S*, const S*, const S*, const S*, int64_t, const SplineShape&);     \
  template void spline_score_attention_forward<S>(S*, S*, S*, S*, const S*, const S*, const S*,           \
                                                  const SplineShape&, int, int, int, int);                 \
  template void spline_score_attention_backward<S>(S*, S*, S*, const S*, const S*, const S*, const S*,    \
                                                   const S*, const S*, const SplineShape&, int, int, int, int); \
  template void spline_kernel_attention_forward<S>(S*, S*, S*, S*, const S*, const S*, const SplineShape&, \
                                                   int, int, int, int);                                    \
  template void spline_kernel_attention_backward<S>(S*, S*, S*, S*, S*, const S*, const S*, const S*,     \
                                                    const S*, const S*, const S*, const SplineShape&, int, int, \
                                                    int, int);                                             \
  template void crossentropy_forward_backward<S>(S*, S*, const S*, const int32_t*, S, int, int);

SRBENCH_INSTANTIATE(float)
SRBENCH_INSTANTIATE(double)

}  // namespace srbench::model
