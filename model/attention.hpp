// The attention kernels of the transformer, as free functions in the manner of layers.hpp
// (outputs, inputs, weights, sizes; layers.hpp's shape legend): softmax, spline-score and
// spline-kernel attention, forward and backward. Each runs over the (example, head) pairs, in
// parallel, with its products on sgemm (float) or Eigen (double).
//
// Every kernel reads qkv (N,3C): q | k | v per row, head h in columns [h·hs, (h+1)·hs) of each;
// it writes out (N,C), the heads concatenated, and att (B,H,T,T), the weights α (0 for the keys
// a query does not read). Which keys a query reads is an AttentionKeys; the terms added to the
// scores s_ij = q_i·k_j/√hs (softmax and spline-score) are ScoreTerms.
#pragma once

#include <cstdint>

#include "model/layers.hpp"

namespace srbench::model {

// The keys query i of example b reads: under `causal`, j ≤ i; otherwise every key of its own
// example, j < lengths[b] (right padding is masked; lengths (B) in [1, T], or nullptr: every
// example is T long). Queries at padding positions read their example's keys likewise.
struct AttentionKeys {
  bool causal = true;
  const int32_t* lengths = nullptr;
  // The keys of example b that any of its queries reads: [0, count).
  int count(int b, int T) const { return causal || !lengths ? T : lengths[b]; }
  // Query i reads keys [0, end).
  int end(int b, int i, int T) const { return causal ? i + 1 : count(b, T); }
};

// The terms of the scores besides q_i·k_j/√hs, all optional (nullptr: absent).
// - ALiBi, slopes s_h (H): causal, s_ij −= s_h·(i−j); otherwise s_ij += s_h·(−|i−j| + ½·[j < i])
//   (symmetric, the ½ breaking the tie between left and right; chomsky.md §7.3).
// - Transformer-XL's relative positions (chomsky.md §7.3, `relative`), r = i − j in both settings:
//   s_ij = [(q_i + u_h)·k_j + (q_i + v_h)·p_{i−j,h}] / √hs, with u, v (H,hs) and rel_pos (2T−1,C)
//   holding p_r = W_R·R_r in row r + T − 1 for r = −(T−1) … T−1 (head h: columns h·hs …).
//   rel_scratch: relative_scratch_size(T, hs) values per OpenMP thread (omp_get_max_threads()).
template <typename S>
struct ScoreTerms {
  const S* alibi_slopes = nullptr;
  const S* rel_u = nullptr;
  const S* rel_v = nullptr;
  const S* rel_pos = nullptr;
  S* rel_scratch = nullptr;
  bool relative() const { return rel_pos != nullptr; }
};
int64_t relative_scratch_size(int T, int hs);

// The gradients of the relative terms, for a backward pass under relative positions: du, dv
// (H,hs) are added into; dpos (2T−1,C) is overwritten with ∂loss/∂rel_pos; partial holds
// relative_partial_size(B, T, C) values (each pair's share, summed over the examples in order).
// Unused (all nullptr) without relative positions.
template <typename S>
struct RelativeGrads {
  S* du = nullptr;
  S* dv = nullptr;
  S* dpos = nullptr;
  S* partial = nullptr;
};
int64_t relative_partial_size(int B, int T, int C);

// Softmax attention: α_ij = softmax over the keys j that query i reads of s_ij.
template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const AttentionKeys& keys, const ScoreTerms<S>& terms, int B,
                       int T, int C, int H);
// dqkv (N,3C) = gradient (overwritten); drel as RelativeGrads says; scratch holds T·T values
// per OpenMP thread (omp_get_max_threads()); keys and terms as in the forward pass.
template <typename S>
void attention_backward(S* dqkv, const RelativeGrads<S>& drel, S* scratch, const S* dout, const S* qkv, const S* att,
                        const AttentionKeys& keys, const ScoreTerms<S>& terms, int B, int T, int C, int H);

// Spline-score attention: α_ij = φ(s_ij) / (Σ_j' |φ(s_ij')| + 1e-6) over the keys query i reads.
// Like attention_forward, plus: scores (B,H,T,T) saves s (0 for the keys not read), norm (B,H,T)
// saves the denominators.
template <typename S>
void spline_score_attention_forward(S* out, S* att, S* scores, S* norm, const S* qkv, const AttentionKeys& keys,
                                    const ScoreTerms<S>& terms, const S* values, const SplineShape& sp, int B, int T,
                                    int C, int H);
// dqkv (N,3C) overwritten; dvalues (K) += the spline values' gradient (per (example, head) pair,
// then the pairs in order); drel, scratch, keys, terms as attention_backward.
template <typename S>
void spline_score_attention_backward(S* dqkv, S* dvalues, const RelativeGrads<S>& drel, S* scratch, const S* dout,
                                     const S* qkv, const S* att, const S* scores, const S* norm,
                                     const AttentionKeys& keys, const ScoreTerms<S>& terms, const S* values,
                                     const SplineShape& sp, int B, int T, int C, int H);

// Spline-kernel attention: phi (N,2C) = φ of the q | k columns of qkv (after RoPE, no scaling);
// K_ij = φ(q_i)·φ(k_j) per head, α_ij = K_ij / (Σ_j' |K_ij'| + 1e-6) over the keys query i reads.
// att, norm as above. phi is an output (saved for backward). No score terms: ALiBi and relative
// positions are not defined for the kernel form.
template <typename S>
void spline_kernel_attention_forward(S* out, S* att, S* norm, S* phi, const S* qkv, const AttentionKeys& keys,
                                     const S* values, const SplineShape& sp, int B, int T, int C, int H);
// dqkv (N,3C) overwritten; dvalues (K) += the spline values' gradient. qk, dphi: (N,2C) scratch;
// scratch as attention_backward.
template <typename S>
void spline_kernel_attention_backward(S* dqkv, S* dvalues, S* scratch, S* qk, S* dphi, const S* dout, const S* qkv,
                                      const S* att, const S* norm, const S* phi, const AttentionKeys& keys,
                                      const S* values, const SplineShape& sp, int B, int T, int C, int H);

// ---- forward only (evaluation) ------------------------------------------------------------
// The three kernels without their (B,H,T,T) outputs: each (example, head) pair runs in strips
// of kAttentionStripRows queries, the strip's scores for the keys its queries read (a strip ×
// keys tile), its row pass (softmax, or φ and the |·| normaliser) and its rows of out. Every
// value is the same product, sum and row pass as in the *_forward kernels, so out equals theirs
// bit for bit in float (sgemm's sums do not depend on how a product is split; sgemm.hpp); in
// double (Eigen's products) to rounding. No state is kept for backward. scratch holds
// attention_infer_scratch_size(T, hs, relative) values per OpenMP thread (omp_get_max_threads()).
inline constexpr int kAttentionStripRows = 64;
int64_t attention_infer_scratch_size(int T, int hs, bool relative);

template <typename S>
void attention_infer(S* out, S* scratch, const S* qkv, const AttentionKeys& keys, const ScoreTerms<S>& terms, int B,
                     int T, int C, int H);
template <typename S>
void spline_score_attention_infer(S* out, S* scratch, const S* qkv, const AttentionKeys& keys,
                                  const ScoreTerms<S>& terms, const S* values, const SplineShape& sp, int B, int T,
                                  int C, int H);
// phi (N,2C): φ of q | k, an output as in spline_kernel_attention_forward.
template <typename S>
void spline_kernel_attention_infer(S* out, S* scratch, S* phi, const S* qkv, const AttentionKeys& keys,
                                   const S* values, const SplineShape& sp, int B, int T, int C, int H);

}  // namespace srbench::model
