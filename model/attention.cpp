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

// Transformer-XL's terms for one (example, head) pair under relative positions: its queries with
// u_h and v_h added (Qu, Qv: T×hs), and the position scores Bp (T×M) = Qv·Phᵀ, Bp[i, c] =
// (q_i + v_h)·p_{r,h} for the distances r = rmin + c ∈ [rmin, T−1] its queries see (rmin = 0
// causal, −(nk−1) otherwise), Ph (M×hs) head h's columns of those rows of rel_pos. In this
// thread's part of terms.rel_scratch.
template <typename S>
class RelativePair {
 public:
  template <typename MQ>
  RelativePair(const ScoreTerms<S>& terms, const MQ& Q, int h, int T, int C, bool causal, int nk)
      : T_(T),
        hs_(static_cast<int>(Q.cols())),
        rmin_(causal ? 0 : -(nk - 1)),
        M_(T - rmin_),
        scratch_(terms.rel_scratch + omp_get_thread_num() * relative_scratch_size(T, hs_)),
        Qu(scratch_, T, hs_),
        Qv(scratch_ + T * hs_, T, hs_),
        dQv_(scratch_ + 2 * T * hs_, T, hs_),
        Bp_(scratch_ + 3 * T * hs_, T, M_),
        Ph_(terms.rel_pos + static_cast<int64_t>(rmin_ + T - 1) * C + h * hs_, M_, hs_, Eigen::OuterStride<>(C)) {
    const S *u = terms.rel_u + h * hs_, *v = terms.rel_v + h * hs_;
    for (int i = 0; i < T; ++i)
      for (int e = 0; e < hs_; ++e) Qu(i, e) = Q(i, e) + u[e], Qv(i, e) = Q(i, e) + v[e];
  }

  // Bp = Qv·Phᵀ, then for row i of the raw scores (the keys j < end): s[j] += Bp[i, i − j − rmin].
  void position_scores() { product_abt(Bp_, Qv, Ph_); }
  void add_row(S* s, int i, int end) const {
    const S* bp = Bp_.data() + static_cast<int64_t>(i) * M_ + i - rmin_;
    for (int j = 0; j < end; ++j) s[j] += bp[-j];
  }

  // The backward of the position term and of u, v, with dQ = dS·K (the content part, from Qu)
  // on entry and dS (T×T, zero past the keys each row reads): this pair's du = Σ_i dQ_i,
  // dBp[i, i − j − rmin] = dS_ij, dQv = dBp·Ph, its dv = Σ_i dQv_i, dQ += dQv, and its rows of
  // dpos (2T−1)×hs: dBpᵀ·Qv at r + T − 1 for r ≥ rmin, zero below.
  template <typename MdQ, typename MdS>
  void backward(MdQ& dQ, const MdS& dS, const AttentionKeys& keys, int b, S* du, S* dv, S* dpos) {
    column_sums(du, dQ);
    Bp_.setZero();  // now dBp
    for (int i = 0; i < T_; ++i) {
      const S* d = dS.data() + static_cast<int64_t>(i) * T_;
      S* bp = Bp_.data() + static_cast<int64_t>(i) * M_ + i - rmin_;
      for (int j = 0, end = keys.end(b, i, T_); j < end; ++j) bp[-j] = d[j];
    }
    product_ab(dQv_, Bp_, Ph_);
    column_sums(dv, dQv_);
    dQ += dQv_;
    const int first = rmin_ + T_ - 1;
    std::fill(dpos, dpos + static_cast<int64_t>(first) * hs_, S(0));
    MapR<S> dP(dpos + static_cast<int64_t>(first) * hs_, M_, hs_);
    product_atb(dP, Bp_, Qv);
  }

 private:
  template <typename M>
  void column_sums(S* out, const M& X) const {
    for (int e = 0; e < hs_; ++e) {
      S sum = 0;
      for (int i = 0; i < T_; ++i) sum += X(i, e);
      out[e] = sum;
    }
  }
  int T_, hs_, rmin_, M_;
  S* scratch_;

 public:
  MapR<S> Qu, Qv;

 private:
  MapR<S> dQv_, Bp_;
  StridedRC<S> Ph_;
};

// One pair's scores into Sc (T×T) for the keys each row reads — (q_i [+ u_h])·k_j
// [+ (q_i + v_h)·p_{i−j,h}], scaled, ALiBi's term — what is left past them is unspecified.
template <typename S, typename MQ, typename MK>
void pair_scored(MapR<S>& Sc, const MQ& Q, const MK& K, const AttentionKeys& keys, const ScoreTerms<S>& terms, int b,
                 int h, int T, int C) {
  const S scale = S(1) / std::sqrt(S(Q.cols()));
  const int nk = keys.count(b, T);
  const S* slope = terms.alibi_slopes ? terms.alibi_slopes + h : nullptr;
  if (!terms.relative()) {
    pair_scores(Sc, Q, K, keys.causal, nk);
    for (int i = 0; i < T; ++i)
      score_row(Sc.data() + static_cast<int64_t>(i) * T, i, keys.end(b, i, T), scale, slope, keys.causal);
    return;
  }
  RelativePair<S> rp(terms, Q, h, T, C, keys.causal, nk);
  pair_scores(Sc, rp.Qu, K, keys.causal, nk);
  rp.position_scores();
  for (int i = 0; i < T; ++i) {
    S* s = Sc.data() + static_cast<int64_t>(i) * T;
    const int end = keys.end(b, i, T);
    rp.add_row(s, i, end);
    score_row(s, i, end, scale, slope, keys.causal);
  }
}

// The backward of pair_scored from dS (T×T: ∂loss/∂s times 1/√hs, zero past the keys each row
// reads): dQ, dK (overwritten); under relative positions this pair's shares of du, dv, dpos
// (drel.partial; reduce_relative sums them).
template <typename S, typename MdQ, typename MdK, typename MdS, typename MQ, typename MK>
void pair_scored_backward(MdQ& dQ, MdK& dK, const MdS& dS, const MQ& Q, const MK& K, const AttentionKeys& keys,
                          const ScoreTerms<S>& terms, const RelativeGrads<S>& drel, int b, int h, int B, int T, int C,
                          int H) {
  const int nk = keys.count(b, T);
  if (!terms.relative()) return pair_scores_backward(dQ, dK, dS, Q, K, keys.causal, nk);
  RelativePair<S> rp(terms, Q, h, T, C, keys.causal, nk);
  pair_scores_backward(dQ, dK, dS, rp.Qu, K, keys.causal, nk);
  const int hs = C / H;
  const int64_t bh = static_cast<int64_t>(b) * H + h, pairs = static_cast<int64_t>(B) * H;
  S* du = drel.partial + bh * hs;
  S* dv = du + pairs * hs;
  S* dpos = drel.partial + 2 * pairs * hs + bh * (2 * T - 1) * hs;
  rp.backward(dQ, dS, keys, b, du, dv, dpos);
}

// du, dv (H,hs) += the pairs' shares summed over the examples in order; dpos (2T−1,C) = likewise.
template <typename S>
void reduce_relative(const RelativeGrads<S>& drel, int B, int T, int C, int H) {
  const int hs = C / H, R = 2 * T - 1;
  const int64_t pairs = static_cast<int64_t>(B) * H;
  const S *pu = drel.partial, *pv = pu + pairs * hs, *pp = pv + pairs * hs;
  for (int h = 0; h < H; ++h)
    for (int e = 0; e < hs; ++e) {
      S su = 0, sv = 0;
      for (int b = 0; b < B; ++b) su += pu[(b * H + h) * hs + e], sv += pv[(b * H + h) * hs + e];
      drel.du[h * hs + e] += su;
      drel.dv[h * hs + e] += sv;
    }
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h)
      for (int e = 0; e < hs; ++e) {
        S sum = 0;
        for (int b = 0; b < B; ++b) sum += pp[((static_cast<int64_t>(b) * H + h) * R + r) * hs + e];
        drel.dpos[static_cast<int64_t>(r) * C + h * hs + e] = sum;
      }
}

// The largest of p[0, end), four running maxima side by side. Its value does not depend on the
// order of the comparisons, with two exceptions that leave every softmax below unchanged: the sign
// of a zero maximum (p_j − (±0) and exp(±0) = 1 are the same), and a NaN score (its row is NaN
// whichever maximum is taken: the NaN's exp enters the row's sum).
template <typename S>
S row_max(const S* p, int end) {
  S m0 = p[0], m1 = p[0], m2 = p[0], m3 = p[0];
  int j = 1;
  for (; j + 4 <= end; j += 4)
    m0 = std::max(m0, p[j]), m1 = std::max(m1, p[j + 1]), m2 = std::max(m2, p[j + 2]), m3 = std::max(m3, p[j + 3]);
  for (; j < end; ++j) m0 = std::max(m0, p[j]);
  return std::max(std::max(m0, m1), std::max(m2, m3));
}

// A softmax's two halves around its sum: p_j := exp(p_j − max) for j < end, and then, given the
// sum of those, p_j := p_j / sum with zeros in [end, width).
template <typename S>
void exp_row(S* p, int end) {
  const S mx = row_max(p, end);
  for (int j = 0; j < end; ++j) p[j] = exp_nonpositive_(p[j] - mx);
}
template <typename S>
void divide_row(S* p, int end, int width, S sum) {
  const S inv = S(1) / sum;
  for (int j = 0; j < end; ++j) p[j] *= inv;
  for (int j = end; j < width; ++j) p[j] = 0;
}

// A row of weights from its scores p[0, end): α_j = softmax_j(p_j), zeros in [end, width).
template <typename S>
void softmax_row(S* p, int end, int width) {
  exp_row(p, end);
  S sum = 0;
  for (int j = 0; j < end; ++j) sum += p[j];
  divide_row(p, end, width, sum);
}

// Σ_{j < end_r} a_r[j]·b_r[j] (b null: Σ a_r[j]) in the order of j, for four rows at once: each
// row's sum is one chain of dependent additions, and four chains run side by side.
template <typename S>
void row_sums4(S out[4], S* const a[4], const S* const b[4], const int end[4]) {
  S s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const int m = std::min(std::min(end[0], end[1]), std::min(end[2], end[3]));
  if (b) {
    for (int j = 0; j < m; ++j)
      s0 += a[0][j] * b[0][j], s1 += a[1][j] * b[1][j], s2 += a[2][j] * b[2][j], s3 += a[3][j] * b[3][j];
  } else {
    for (int j = 0; j < m; ++j) s0 += a[0][j], s1 += a[1][j], s2 += a[2][j], s3 += a[3][j];
  }
  S s[4] = {s0, s1, s2, s3};
  for (int r = 0; r < 4; ++r)
    for (int j = m; j < end[r]; ++j) s[r] += b ? a[r][j] * b[r][j] : a[r][j];
  for (int r = 0; r < 4; ++r) out[r] = s[r];
}

// softmax_row of rows i … i + 3 of P (row stride `width`), ends end[0..3]: the same numbers, their
// sums side by side.
template <typename S>
void softmax_rows4(S* P, int i, int width, const int end[4]) {
  S* a[4];
  for (int r = 0; r < 4; ++r) {
    a[r] = P + static_cast<int64_t>(i + r) * width;
    exp_row(a[r], end[r]);
  }
  S sum[4];
  row_sums4<S>(sum, a, nullptr, end);
  for (int r = 0; r < 4; ++r) divide_row(a[r], end[r], width, sum[r]);
}

// Every row of a T×T block of scores through softmax_row, four rows at a time.
template <typename S, typename End>
void softmax_block(S* P, int T, End&& end_of) {
  int i = 0;
  for (; i + 4 <= T; i += 4) {
    const int end[4] = {end_of(i), end_of(i + 1), end_of(i + 2), end_of(i + 3)};
    softmax_rows4(P, i, T, end);
  }
  for (; i < T; ++i) softmax_row(P + static_cast<int64_t>(i) * T, end_of(i), T);
}

}  // namespace

int64_t relative_scratch_size(int T, int hs) {
  return 3 * static_cast<int64_t>(T) * hs + static_cast<int64_t>(T) * (2 * T - 1);
}
int64_t relative_partial_size(int B, int T, int C) {
  return static_cast<int64_t>(B) * (2 * C + static_cast<int64_t>(2 * T - 1) * C);
}

template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const AttentionKeys& keys, const ScoreTerms<S>& terms, int B,
                       int T, int C, int H) {
  const int hs = C / H;
  const Eigen::OuterStride<> s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
    const S* base = qkv + static_cast<int64_t>(b) * T * 3 * C + h * hs;
    const StridedRC<S> Q(base, T, hs, s3), K(base + C, T, hs, s3), V(base + 2 * C, T, hs, s3);
    MapR<S> P(att + (static_cast<int64_t>(b) * H + h) * T * T, T, T);
    pair_scored(P, Q, K, keys, terms, b, h, T, C);
    softmax_block(P.data(), T, [&](int i) { return keys.end(b, i, T); });
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    pair_mix(O, P, V, keys.causal, nk);
  });
}

template <typename S>
void attention_backward(S* dqkv, const RelativeGrads<S>& drel, S* scratch, const S* dout, const S* qkv, const S* att,
                        const AttentionKeys& keys, const ScoreTerms<S>& terms, int B, int T, int C, int H) {
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
    // P_ij = softmax_j(s_ij): ds_ij = P_ij·(dP_ij − Σ_j' P_ij'·dP_ij'); s = scale·(q·k …) (pair_scored).
    // (the sums Σ_j' P_ij'·dP_ij' of four rows side by side, each in the order of j')
    for (int i0 = 0; i0 < T; i0 += 4) {
      const int n = std::min(4, T - i0);
      S* d[4];
      const S* p[4];
      int end[4];
      S dot[4];
      for (int r = 0; r < 4; ++r) {
        const int i = i0 + std::min(r, n - 1);  // a short last group repeats its last row
        d[r] = dP.data() + static_cast<int64_t>(i) * T;
        p[r] = P.data() + static_cast<int64_t>(i) * T;
        end[r] = keys.end(b, i, T);
      }
      row_sums4<S>(dot, d, p, end);
      for (int r = 0; r < n; ++r) {
        for (int j = 0; j < end[r]; ++j) d[r][j] = p[r][j] * (d[r][j] - dot[r]) * scale;
        for (int j = end[r]; j < T; ++j) d[r][j] = 0;
      }
    }
    pair_scored_backward(dQ, dK, dP, Q, K, keys, terms, drel, b, h, B, T, C, H);
  });
  if (terms.relative()) reduce_relative(drel, B, T, C, H);
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
    pair_scored(Sc, Q, K, keys, terms, b, h, T, C);
    for (int i = 0; i < T; ++i) {
      S* s = Sc.data() + static_cast<int64_t>(i) * T;
      S* p = P.data() + static_cast<int64_t>(i) * T;
      const int end = keys.end(b, i, T);
      for (int j = end; j < T; ++j) s[j] = 0;
      for (int j = 0; j < end; ++j) p[j] = g.value(values, g.at(s[j]));
      norm[bh * T + i] = normalise_abs_row(p, end, T);
    }
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    pair_mix(O, P, V, keys.causal, nk);
  });
}

template <typename S>
void spline_score_attention_backward(S* dqkv, S* dvalues, const RelativeGrads<S>& drel, S* scratch, const S* dout,
                                     const S* qkv, const S* att, const S* scores, const S* norm,
                                     const AttentionKeys& keys, const ScoreTerms<S>& terms, const S* values,
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
      // φ_ij = φ(s_ij): dθ += dφ·∂φ/∂θ; ds = dφ·φ'(s); s = scale·(q·k …) (pair_scored).
      for (int j = 0; j < end; ++j) {
        const SplineAt<S> a = g.at(s[j]);
        pk[a.k] += static_cast<double>(d[j] * (S(1) - a.t));
        pk[a.k + 1] += static_cast<double>(d[j] * a.t);
        d[j] = d[j] * g.slope(values, a) * scale;
      }
    }
    pair_scored_backward(dQ, dK, dP, Q, K, keys, terms, drel, b, h, B, T, C, H);
  });
  add_partials(dvalues, partial, static_cast<int64_t>(B) * H, Kp);
  if (terms.relative()) reduce_relative(drel, B, T, C, H);
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

// ---- forward only, in query strips ----------------------------------------------------------
namespace {

// The strip [i0, i1) of one pair: rows, the keys its queries read ([0, kend): causal i1, else
// the example's nk), and the per-thread scratch: the strip's scores Sc (rows × T, row stride T),
// then under relative positions Qu, Qv (rows × hs) and Bp (rows × M).
struct Strip {
  int i0, i1, rows, kend;
};

// pair_scored for the strip's rows: the same products (rows of Q, Qu, Qv; the first kend keys)
// and row passes, so each score is the value pair_scored computes; past a row's keys, unspecified.
template <typename S, typename MQ, typename MK>
void strip_scored(MapR<S>& Sc, S* rel, const MQ& Q, const MK& K, const AttentionKeys& keys,
                  const ScoreTerms<S>& terms, const Strip& st, int b, int h, int T, int C) {
  const int hs = static_cast<int>(Q.cols());
  const S scale = S(1) / std::sqrt(S(hs));
  const S* slope = terms.alibi_slopes ? terms.alibi_slopes + h : nullptr;
  auto rows_of = [&](int i) { return Sc.data() + static_cast<int64_t>(i - st.i0) * T; };
  if (!terms.relative()) {
    product_abt(Sc.leftCols(st.kend), Q.middleRows(st.i0, st.rows), K.topRows(st.kend));
    for (int i = st.i0; i < st.i1; ++i) score_row(rows_of(i), i, keys.end(b, i, T), scale, slope, keys.causal);
    return;
  }
  const int rmin = keys.causal ? 0 : -(keys.count(b, T) - 1), M = T - rmin;
  MapR<S> Qu(rel, st.rows, hs), Qv(rel + st.rows * hs, st.rows, hs), Bp(rel + 2 * st.rows * hs, st.rows, M);
  const StridedRC<S> Ph(terms.rel_pos + static_cast<int64_t>(rmin + T - 1) * C + h * hs, M, hs,
                        Eigen::OuterStride<>(C));
  const S *u = terms.rel_u + h * hs, *v = terms.rel_v + h * hs;
  for (int r = 0; r < st.rows; ++r)
    for (int e = 0; e < hs; ++e) Qu(r, e) = Q(st.i0 + r, e) + u[e], Qv(r, e) = Q(st.i0 + r, e) + v[e];
  product_abt(Sc.leftCols(st.kend), Qu, K.topRows(st.kend));
  product_abt(Bp, Qv, Ph);
  for (int i = st.i0; i < st.i1; ++i) {
    S* s = rows_of(i);
    const int end = keys.end(b, i, T);
    const S* bp = Bp.data() + static_cast<int64_t>(i - st.i0) * M + i - rmin;
    for (int j = 0; j < end; ++j) s[j] += bp[-j];
    score_row(s, i, end, scale, slope, keys.causal);
  }
}

// Every pair, strip by strip: scores(Sc, rel, Q, K, strip, b, h) fills the strip's scores,
// row(p, b, h, i, end, kend) turns row i's into weights (zeros in [end, kend)), then the strip's
// rows of out = weights · V over the first kend keys (pair_mix's sums: the keys past kend have
// weight 0 in the full product).
template <typename S, typename Scores, typename Row>
void strip_attention(S* out, S* scratch, const S* qk, int64_t qk_stride, const S* qkv, const AttentionKeys& keys,
                     bool relative, int B, int T, int C, int H, Scores&& scores, Row&& row) {
  const int hs = C / H;
  const int64_t per_thread = attention_infer_scratch_size(T, hs, relative);
  const Eigen::OuterStride<> sq(qk_stride), s3(3 * C), s1(C);
  const bool parallel = static_cast<int64_t>(B) * H * T * T * hs >= kMinParallelWork;
  parallel_for(B * H, parallel, [&](int pair) {
    const int b = pair / H, h = pair % H, nk = keys.count(b, T);
    S* buf = scratch + omp_get_thread_num() * per_thread;
    const S* qb = qk + static_cast<int64_t>(b) * T * qk_stride + h * hs;
    const StridedRC<S> Q(qb, T, hs, sq), K(qb + C, T, hs, sq);
    const StridedRC<S> V(qkv + static_cast<int64_t>(b) * T * 3 * C + 2 * C + h * hs, T, hs, s3);
    StridedR<S> O(out + static_cast<int64_t>(b) * T * C + h * hs, T, hs, s1);
    for (int i0 = 0; i0 < T; i0 += kAttentionStripRows) {
      const int i1 = std::min(T, i0 + kAttentionStripRows);
      const Strip st{i0, i1, i1 - i0, keys.causal ? i1 : nk};
      MapR<S> Sc(buf, st.rows, T);
      scores(Sc, buf + static_cast<int64_t>(kAttentionStripRows) * T, Q, K, st, b, h);
      for (int i = i0; i < i1; ++i)
        row(Sc.data() + static_cast<int64_t>(i - i0) * T, b, h, i, keys.end(b, i, T), st.kend);
      product_ab(O.middleRows(i0, st.rows), Sc.leftCols(st.kend), V.topRows(st.kend));
    }
  });
}

}  // namespace

int64_t attention_infer_scratch_size(int T, int hs, bool relative) {
  const int64_t R = kAttentionStripRows;
  return R * T + (relative ? 2 * R * hs + R * (2 * static_cast<int64_t>(T) - 1) : 0);
}

template <typename S>
void attention_infer(S* out, S* scratch, const S* qkv, const AttentionKeys& keys, const ScoreTerms<S>& terms, int B,
                     int T, int C, int H) {
  strip_attention(
      out, scratch, qkv, 3 * C, qkv, keys, terms.relative(), B, T, C, H,
      [&](MapR<S>& Sc, S* rel, const auto& Q, const auto& K, const Strip& st, int b, int h) {
        strip_scored(Sc, rel, Q, K, keys, terms, st, b, h, T, C);
      },
      [](S* p, int, int, int, int end, int kend) { softmax_row(p, end, kend); });
}

template <typename S>
void spline_score_attention_infer(S* out, S* scratch, const S* qkv, const AttentionKeys& keys,
                                  const ScoreTerms<S>& terms, const S* values, const SplineShape& sp, int B, int T,
                                  int C, int H) {
  const SplineGrid<S> g(sp);
  strip_attention(
      out, scratch, qkv, 3 * C, qkv, keys, terms.relative(), B, T, C, H,
      [&](MapR<S>& Sc, S* rel, const auto& Q, const auto& K, const Strip& st, int b, int h) {
        strip_scored(Sc, rel, Q, K, keys, terms, st, b, h, T, C);
      },
      [&](S* p, int, int, int, int end, int kend) {  // spline_score_attention_forward's row pass
        for (int j = 0; j < end; ++j) p[j] = g.value(values, g.at(p[j]));
        normalise_abs_row(p, end, kend);
      });
}

template <typename S>
void spline_kernel_attention_infer(S* out, S* scratch, S* phi, const S* qkv, const AttentionKeys& keys,
                                   const S* values, const SplineShape& sp, int B, int T, int C, int H) {
  const int64_t N = static_cast<int64_t>(B) * T;
  gather_qk(phi, qkv, N, C);
  spline_forward(phi, phi, values, N * 2 * C, sp);  // in place: φ(q) | φ(k)
  strip_attention(
      out, scratch, phi, 2 * C, qkv, keys, false, B, T, C, H,
      [](MapR<S>& Sc, S*, const auto& FQ, const auto& FK, const Strip& st, int, int) {
        product_abt(Sc.leftCols(st.kend), FQ.middleRows(st.i0, st.rows), FK.topRows(st.kend));  // K_ij
      },
      [](S* p, int, int, int, int end, int kend) { normalise_abs_row(p, end, kend); });
}

// ---------------------------------------------------------------------------------------------
#define SRBENCH_INSTANTIATE(S)                                                                                    \
  template void attention_forward<S>(S*, S*, const S*, const AttentionKeys&, const ScoreTerms<S>&, int, int, int, \
                                     int);                                                                       \
  template void attention_backward<S>(S*, const RelativeGrads<S>&, S*, const S*, const S*, const S*,             \
                                      const AttentionKeys&, const ScoreTerms<S>&, int, int, int, int);           \
  template void spline_score_attention_forward<S>(S*, S*, S*, S*, const S*, const AttentionKeys&,                \
                                                  const ScoreTerms<S>&, const S*, const SplineShape&, int, int,  \
                                                  int, int);                                                     \
  template void spline_score_attention_backward<S>(S*, S*, const RelativeGrads<S>&, S*, const S*, const S*,     \
                                                   const S*, const S*, const S*, const AttentionKeys&,           \
                                                   const ScoreTerms<S>&, const S*, const SplineShape&, int, int, \
                                                   int, int);                                                    \
  template void spline_kernel_attention_forward<S>(S*, S*, S*, S*, const S*, const AttentionKeys&, const S*,     \
                                                   const SplineShape&, int, int, int, int);                      \
  template void spline_kernel_attention_backward<S>(S*, S*, S*, S*, S*, const S*, const S*, const S*, const S*,  \
                                                    const S*, const AttentionKeys&, const S*, const SplineShape&, \
                                                    int, int, int, int);                         \
  template void attention_infer<S>(S*, S*, const S*, const AttentionKeys&, const ScoreTerms<S>&, int, int, int,  \
                                   int);                                                                         \
  template void spline_score_attention_infer<S>(S*, S*, const S*, const AttentionKeys&, const ScoreTerms<S>&,    \
                                                const S*, const SplineShape&, int, int, int, int);               \
  template void spline_kernel_attention_infer<S>(S*, S*, S*, const S*, const AttentionKeys&, const S*,           \
                                                 const SplineShape&, int, int, int, int);

SRBENCH_INSTANTIATE(float)
SRBENCH_INSTANTIATE(double)

}  // namespace srbench::model
