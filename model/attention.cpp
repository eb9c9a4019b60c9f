#include "model/attention.hpp"

// GCC 12 reports false -Wmaybe-uninitialized warnings inside the AVX-512 intrinsics that Eigen's
// matrix products use (hundreds of them with -march=native); they are not about this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "model/eigen_views.hpp"
#include "model/kernels.hpp"
#include "model/parallel.hpp"
#include "model/sgemm.hpp"

namespace srbench::model {

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

// Sign with sign(0) = 0: the derivative of |x| (model.md: taken as 0 at 0).
template <typename S>
inline S sign0(S x) {
  return x > S(0) ? S(1) : (x < S(0) ? S(-1) : S(0));
}

constexpr double kSplineAttnEps = 1e-6;

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
#define SRBENCH_INSTANTIATE(S)                                                                             \
  template void attention_forward<S>(S*, S*, const S*, const S*, int, int, int, int);                      \
  template void attention_backward<S>(S*, S*, const S*, const S*, const S*, int, int, int, int);           \
  template void spline_score_attention_forward<S>(S*, S*, S*, S*, const S*, const S*, const S*,           \
                                                  const SplineShape&, int, int, int, int);                 \
  template void spline_score_attention_backward<S>(S*, S*, S*, const S*, const S*, const S*, const S*,    \
                                                   const S*, const S*, const SplineShape&, int, int, int, int); \
  template void spline_kernel_attention_forward<S>(S*, S*, S*, S*, const S*, const S*, const SplineShape&, \
                                                   int, int, int, int);                                    \
  template void spline_kernel_attention_backward<S>(S*, S*, S*, S*, S*, const S*, const S*, const S*,     \
                                                    const S*, const S*, const S*, const SplineShape&, int, int, \
                                                    int, int);

SRBENCH_INSTANTIATE(float)
SRBENCH_INSTANTIATE(double)

}  // namespace srbench::model
