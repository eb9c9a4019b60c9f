#include "model/attention.hpp"

// GCC 12 reports false -Wmaybe-uninitialized warnings inside the AVX-512 intrinsics that Eigen's
// matrix products use (hundreds of them with -march=native); they are not about this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "model/eigen_views.hpp"
#include "model/kernels.hpp"
#include "model/parallel.hpp"
#include "model/sgemm.hpp"

namespace srbench::model {

// The products of attention for one (example, head): P is T×T (row stride T), the others T×hs
// (strided maps into qkv / out). Causal: P has zeros above the diagonal; sgemm for float (which
// skips their tiles), Eigen's triangular products for double. Otherwise the products run over the
// nk keys of the example: the first nk columns of P, the first nk rows of K and V.
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

// General products of row-major operands (Eigen maps or blocks of them): Out = A·B, A·Bᵀ, Aᵀ·B.
template <typename MO, typename MA, typename MB>
void product_ab(MO&& Out, const MA& A, const MB& B) {
  using S = typename std::decay_t<MO>::Scalar;
  if constexpr (kUseSgemm<S>)
    sgemm(static_cast<int>(Out.rows()), static_cast<int>(Out.cols()), static_cast<int>(A.cols()),
          {A.data(), A.outerStride(), 1}, {B.data(), B.outerStride(), 1}, Out.data(), Out.outerStride(),
          GemmInit::kZero);
  else
    Out.noalias() = A * B;
}
template <typename MO, typename MA, typename MB>
void product_abt(MO&& Out, const MA& A, const MB& B) {
  using S = typename std::decay_t<MO>::Scalar;
  if constexpr (kUseSgemm<S>)
    sgemm(static_cast<int>(Out.rows()), static_cast<int>(Out.cols()), static_cast<int>(A.cols()),
          {A.data(), A.outerStride(), 1}, {B.data(), 1, B.outerStride()}, Out.data(), Out.outerStride(),
          GemmInit::kZero);
  else
    Out.noalias() = A * B.transpose();
}
template <typename MO, typename MA, typename MB>
void product_atb(MO&& Out, const MA& A, const MB& B) {
  using S = typename std::decay_t<MO>::Scalar;
  if constexpr (kUseSgemm<S>)
    sgemm(static_cast<int>(Out.rows()), static_cast<int>(Out.cols()), static_cast<int>(A.rows()),
          {A.data(), 1, A.outerStride()}, {B.data(), B.outerStride(), 1}, Out.data(), Out.outerStride(),
          GemmInit::kZero);
  else
    Out.noalias() = A.transpose() * B;
}

// The four products of one pair, causal or over the example's nk keys. What the scores and dP
// leave in the columns a row does not read is unspecified (the caller's row pass sets it); the
// rows of dK and dV past the keys are set to zero.
template <typename MP, typename MQ, typename MK>
void pair_scores(MP& P, const MQ& Q, const MK& K, bool causal, int nk) {
  if (causal) causal_scores(P, Q, K);
  else product_abt(P.leftCols(nk), Q, K.topRows(nk));
}
template <typename MO, typename MP, typename MV>
void pair_mix(MO& O, const MP& P, const MV& V, bool causal, int nk) {
  if (causal) causal_mix(O, P, V);
  else product_ab(O, P.leftCols(nk), V.topRows(nk));
}
template <typename MdV, typename MdP, typename MP, typename MdO, typename MV>
void pair_mix_backward(MdV& dV, MdP& dP, const MP& P, const MdO& dO, const MV& V, bool causal, int nk) {
  if (causal) return causal_mix_backward(dV, dP, P, dO, V);
  product_atb(dV.topRows(nk), P.leftCols(nk), dO);
  dV.bottomRows(dV.rows() - nk).setZero();
  product_abt(dP.leftCols(nk), dO, V.topRows(nk));
}
template <typename MdQ, typename MdK, typename MdS, typename MQ, typename MK>
void pair_scores_backward(MdQ& dQ, MdK& dK, const MdS& dS, const MQ& Q, const MK& K, bool causal, int nk) {
  if (causal) return causal_scores_backward(dQ, dK, dS, Q, K);
  product_ab(dQ, dS.leftCols(nk), K.topRows(nk));
  product_atb(dK.topRows(nk), dS.leftCols(nk), Q);
  dK.bottomRows(dK.rows() - nk).setZero();
}

// Row i of one head's scores, s[j] = q_i·k_j for the keys j < end on entry: scaled by 1/√hs,
// then ALiBi's term (slope: s_h, or nullptr), causal −s_h·(i−j), otherwise s_h·(−|i−j| + ½·[j < i]).
template <typename S>
void score_row(S* s, int i, int end, S scale, const S* slope, bool causal) {
  for (int j = 0; j < end; ++j) s[j] *= scale;
  if (!slope) return;
  if (causal)
    for (int j = 0; j < end; ++j) s[j] -= *slope * S(i - j);
  else
    for (int j = 0; j < end; ++j) s[j] += *slope * (S(j < i ? 0.5 : 0.0) - S(std::abs(i - j)));
}

}  // namespace

template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const AttentionKeys& keys, const ScoreTerms<S>& terms, int B,
                       int T, int C, int H) {
  const int hs = C / H;
  const S scale = S(1) / std::sqrt(S(hs));
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
    const S* base = qkv + static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(base, T, hs, s3), K(base + C, T, hs, s3), V(base + 2 * C, T, hs, s3);
    MapR<S> P(att + (static_cast<int64_t>(b) * H + h) * T * T, T, T);
    pair_scores(P, Q, K, keys.causal, nk);
    const S* slope = terms.alibi_slopes ? terms.alibi_slopes + h : nullptr;
    for (int i = 0; i < T; ++i) {
      S* p = P.data() + static_cast<int64_t>(i) * T;
      const int end = keys.end(b, i, T);
      score_row(p, i, end, scale, slope, keys.causal);
      S mx = p[0];
      for (int j = 1; j < end; ++j) mx = std::max(mx, p[j]);
      for (int j = 0; j < end; ++j) p[j] = exp_nonpositive_(p[j] - mx);
      S sum = 0;
      for (int j = 0; j < end; ++j) sum += p[j];
      const S inv = S(1) / sum;
      for (int j = 0; j < end; ++j) p[j] *= inv;
      for (int j = end; j < T; ++j) p[j] = 0;
    }
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    pair_mix(O, P, V, keys.causal, nk);
  });
}

template <typename S>
void attention_backward(S* dqkv, S* scratch, const S* dout, const S* qkv, const S* att, const AttentionKeys& keys,
                        int B, int T, int C, int H) {
  const int hs = C / H;
  const S scale = S(1) / std::sqrt(S(hs));
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
    const int64_t off = static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(qkv + off, T, hs, s3), K(qkv + off + C, T, hs, s3), V(qkv + off + 2 * C, T, hs, s3);
    StridedR<S> dQ(dqkv + off, T, hs, s3), dK(dqkv + off + C, T, hs, s3), dV(dqkv + off + 2 * C, T, hs, s3);
    const StridedRC<S> dO(dout + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    const MapRC<S> P(att + (static_cast<int64_t>(b) * H + h) * T * T, T, T);
    MapR<S> dP(scratch + static_cast<int64_t>(omp_get_thread_num()) * T * T, T, T);
    // out = P·V: dV = Pᵀ·dO, dP = dO·Vᵀ (on the keys read).
    pair_mix_backward(dV, dP, P, dO, V, keys.causal, nk);
    // P_ij = softmax_j(s_ij): ds_ij = P_ij·(dP_ij − Σ_j' P_ij'·dP_ij'); s = scale·q·k (+ ALiBi's term).
    for (int i = 0; i < T; ++i) {
      const S* p = P.data() + static_cast<int64_t>(i) * T;
      S* d = dP.data() + static_cast<int64_t>(i) * T;
      const int end = keys.end(b, i, T);
      S dot = 0;
      for (int j = 0; j < end; ++j) dot += p[j] * d[j];
      for (int j = 0; j < end; ++j) d[j] = p[j] * (d[j] - dot) * scale;
      for (int j = end; j < T; ++j) d[j] = 0;
    }
    pair_scores_backward(dQ, dK, dP, Q, K, keys.causal, nk);
  });
}

// ---------------------------------------------------------------------------------------------
namespace {

// Sign with sign(0) = 0: the derivative of |x| (model.md: taken as 0 at 0).
template <typename S>
inline S sign0(S x) {
  return x > S(0) ? S(1) : (x < S(0) ? S(-1) : S(0));
}

constexpr double kSplineAttnEps = 1e-6;

// A row of a T×T block holding φ values (or kernel values) for the keys j < end:
// α_ij = p_ij / (Σ_j |p_ij| + ε), zeros past end; returns the denominator.
template <typename S>
S normalise_abs_row(S* p, int end, int T) {
  S z = 0;
  for (int j = 0; j < end; ++j) z += std::abs(p[j]);
  z += static_cast<S>(kSplineAttnEps);
  const S inv = S(1) / z;
  for (int j = 0; j < end; ++j) p[j] *= inv;
  for (int j = end; j < T; ++j) p[j] = 0;
  return z;
}
// The backward of normalise_abs_row: with dα in d, α in p and the denominator z,
// dp_ij = (dα_ij − sign(α_ij)·Σ_j' dα_ij'·α_ij') / z (sign(0) = 0); in place.
template <typename S>
void normalise_abs_row_backward(S* d, const S* p, S z, int end, int T) {
  S dot = 0;
  for (int j = 0; j < end; ++j) dot += d[j] * p[j];
  const S inv = S(1) / z;
  for (int j = 0; j < end; ++j) d[j] = (d[j] - sign0(p[j]) * dot) * inv;
  for (int j = end; j < T; ++j) d[j] = 0;
}

}  // namespace

template <typename S>
void spline_score_attention_forward(S* out, S* att, S* scores, S* norm, const S* qkv, const AttentionKeys& keys,
                                    const ScoreTerms<S>& terms, const S* values, const SplineShape& sp, int B, int T,
                                    int C, int H) {
  const int hs = C / H;
  const S scale = S(1) / std::sqrt(S(hs));
  const SplineGrid<S> g(sp);
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
    const int64_t bh = static_cast<int64_t>(b) * H + h;
    const S* base = qkv + static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(base, T, hs, s3), K(base + C, T, hs, s3), V(base + 2 * C, T, hs, s3);
    MapR<S> Sc(scores + bh * T * T, T, T);
    MapR<S> P(att + bh * T * T, T, T);
    pair_scores(Sc, Q, K, keys.causal, nk);
    const S* slope = terms.alibi_slopes ? terms.alibi_slopes + h : nullptr;
    for (int i = 0; i < T; ++i) {
      S* s = Sc.data() + static_cast<int64_t>(i) * T;
      S* p = P.data() + static_cast<int64_t>(i) * T;
      const int end = keys.end(b, i, T);
      score_row(s, i, end, scale, slope, keys.causal);
      for (int j = end; j < T; ++j) s[j] = 0;
      for (int j = 0; j < end; ++j) p[j] = g.value(values, g.at(s[j]));
      norm[bh * T + i] = normalise_abs_row(p, end, T);
    }
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    pair_mix(O, P, V, keys.causal, nk);
  });
}

template <typename S>
void spline_score_attention_backward(S* dqkv, S* dvalues, S* scratch, const S* dout, const S* qkv, const S* att,
                                     const S* scores, const S* norm, const AttentionKeys& keys, const S* values,
                                     const SplineShape& sp, int B, int T, int C, int H) {
  const int hs = C / H, Kp = sp.keypoints;
  const S scale = S(1) / std::sqrt(S(hs));
  const SplineGrid<S> g(sp);
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  double* partial = spline_partials(static_cast<int64_t>(B) * H, Kp).data();
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
    const int64_t bh = static_cast<int64_t>(b) * H + h;
    const int64_t off = static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(qkv + off, T, hs, s3), K(qkv + off + C, T, hs, s3), V(qkv + off + 2 * C, T, hs, s3);
    StridedR<S> dQ(dqkv + off, T, hs, s3), dK(dqkv + off + C, T, hs, s3), dV(dqkv + off + 2 * C, T, hs, s3);
    const StridedRC<S> dO(dout + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    const MapRC<S> P(att + bh * T * T, T, T);
    MapR<S> dP(scratch + static_cast<int64_t>(omp_get_thread_num()) * T * T, T, T);
    double* pk = partial + bh * Kp;
    // out = α·V: dV = αᵀ·dO, dα = dO·Vᵀ.
    pair_mix_backward(dV, dP, P, dO, V, keys.causal, nk);
    for (int i = 0; i < T; ++i) {
      const S* p = P.data() + static_cast<int64_t>(i) * T;
      const S* s = scores + bh * T * T + static_cast<int64_t>(i) * T;
      S* d = dP.data() + static_cast<int64_t>(i) * T;
      const int end = keys.end(b, i, T);
      normalise_abs_row_backward(d, p, norm[bh * T + i], end, T);  // d = dφ
      // φ_ij = φ(s_ij): dθ += dφ·∂φ/∂θ; ds = dφ·φ'(s); s = scale·q·k (+ bias).
      for (int j = 0; j < end; ++j) {
        const SplineAt<S> a = g.at(s[j]);
        pk[a.k] += static_cast<double>(d[j] * (S(1) - a.t));
        pk[a.k + 1] += static_cast<double>(d[j] * a.t);
        d[j] = d[j] * g.slope(values, a) * scale;
      }
    }
    pair_scores_backward(dQ, dK, dP, Q, K, keys.causal, nk);
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
void spline_kernel_attention_forward(S* out, S* att, S* norm, S* phi, const S* qkv, const AttentionKeys& keys,
                                     const S* values, const SplineShape& sp, int B, int T, int C, int H) {
  const int hs = C / H;
  const int64_t N = static_cast<int64_t>(B) * T;
  gather_qk(phi, qkv, N, C);
  spline_forward(phi, phi, values, N * 2 * C, sp);  // in place: φ(q) | φ(k)
  const Eigen::OuterStride<> s2(2 * C), s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
    const int64_t bh = static_cast<int64_t>(b) * H + h;
    const S* fb = phi + static_cast<int64_t>(b) * T * 2 * C + h * hs;
    const StridedRC<S> FQ(fb, T, hs, s2), FK(fb + C, T, hs, s2);
    const StridedRC<S> V(qkv + static_cast<int64_t>(b) * T * 3 * C + 2 * C + h * hs, T, hs, s3);
    MapR<S> P(att + bh * T * T, T, T);
    pair_scores(P, FQ, FK, keys.causal, nk);  // K_ij = φ(q_i)·φ(k_j)
    for (int i = 0; i < T; ++i)
      norm[bh * T + i] = normalise_abs_row(P.data() + static_cast<int64_t>(i) * T, keys.end(b, i, T), T);
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    pair_mix(O, P, V, keys.causal, nk);
  });
}

template <typename S>
void spline_kernel_attention_backward(S* dqkv, S* dvalues, S* scratch, S* qk, S* dphi, const S* dout, const S* qkv,
                                      const S* att, const S* norm, const S* phi, const AttentionKeys& keys,
                                      const S* values, const SplineShape& sp, int B, int T, int C, int H) {
  const int hs = C / H;
  const int64_t N = static_cast<int64_t>(B) * T;
  const Eigen::OuterStride<> s2(2 * C), s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
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
    pair_mix_backward(dV, dP, P, dO, V, keys.causal, nk);
    for (int i = 0; i < T; ++i)
      normalise_abs_row_backward(dP.data() + static_cast<int64_t>(i) * T, P.data() + static_cast<int64_t>(i) * T,
                                 norm[bh * T + i], keys.end(b, i, T), T);  // dP = dK
    // K = φQ·φKᵀ: dφQ = dK·φK, dφK = dKᵀ·φQ.
    pair_scores_backward(dFQ, dFK, dP, FQ, FK, keys.causal, nk);
  });
  // φ elementwise on q | k: dq | dk = dφ·φ'(q | k); dθ from every element, in fixed chunks.
  gather_qk(qk, qkv, N, C);
  spline_backward(qk, dvalues, dphi, qk, values, N * 2 * C, sp);
  scatter_qk(dqkv, qk, N, C);
}

// ---------------------------------------------------------------------------------------------
#define SRBENCH_INSTANTIATE(S)                                                                                    \
  template void attention_forward<S>(S*, S*, const S*, const AttentionKeys&, const ScoreTerms<S>&, int, int, int, \
                                     int);                                                                       \
  template void attention_backward<S>(S*, S*, const S*, const S*, const S*, const AttentionKeys&, int, int, int,  \
                                      int);                                                                      \
  template void spline_score_attention_forward<S>(S*, S*, S*, S*, const S*, const AttentionKeys&,                \
                                                  const ScoreTerms<S>&, const S*, const SplineShape&, int, int,  \
                                                  int, int);                                                     \
  template void spline_score_attention_backward<S>(S*, S*, S*, const S*, const S*, const S*, const S*, const S*, \
                                                   const AttentionKeys&, const S*, const SplineShape&, int, int, \
                                                   int, int);                                                    \
  template void spline_kernel_attention_forward<S>(S*, S*, S*, S*, const S*, const AttentionKeys&, const S*,     \
                                                   const SplineShape&, int, int, int, int);                      \
  template void spline_kernel_attention_backward<S>(S*, S*, S*, S*, S*, const S*, const S*, const S*, const S*,  \
                                                    const S*, const AttentionKeys&, const S*, const SplineShape&, \
                                                    int, int, int, int);

SRBENCH_INSTANTIATE(float)
SRBENCH_INSTANTIATE(double)

}  // namespace srbench::model
