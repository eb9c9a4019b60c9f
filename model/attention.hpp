// The attention kernels of the transformer, as free functions in the manner of layers.hpp
// (outputs, inputs, weights, sizes; layers.hpp's shape legend): softmax, spline-score and
// spline-kernel attention, forward and backward. Each runs over the (example, head) pairs, in
// parallel, with its products on sgemm (float) or Eigen (double).
#pragma once

#include <cstdint>

#include "model/layers.hpp"

namespace srbench::model {

// Causal softmax attention. qkv (N,3C) holds q | k | v per row; head h uses columns
// [h·hs, (h+1)·hs) of each. att (B,H,T,T) saves the probabilities (0 above the diagonal);
// out (N,C) = heads concatenated. alibi_slopes (H) or nullptr: score bias −s_h·(i−j).
template <typename S>
void attention_forward(S* out, S* att, const S* qkv, const S* alibi_slopes, int B, int T, int C, int H);
// dqkv (N,3C) = gradient (overwritten); scratch holds T·T values per OpenMP thread
// (omp_get_max_threads()).
template <typename S>
void attention_backward(S* dqkv, S* scratch, const S* dout, const S* qkv, const S* att, int B, int T, int C,
                        int H);

// Spline-score attention: s_ij = q_i·k_j/√hs (− s_h·(i−j) under ALiBi), α_ij = φ(s_ij) /
// (Σ_{j'≤i} |φ(s_ij')| + 1e-6). Like attention_forward, plus: scores (B,H,T,T) saves s (lower
// triangle), norm (B,H,T) saves the denominators.
template <typename S>
void spline_score_attention_forward(S* out, S* att, S* scores, S* norm, const S* qkv, const S* alibi_slopes,
                                    const S* values, const SplineShape& sp, int B, int T, int C, int H);
// dqkv (N,3C) overwritten; dvalues (K) += the spline values' gradient (per (example, head) pair,
// then the pairs in order); scratch as attention_backward.
template <typename S>
void spline_score_attention_backward(S* dqkv, S* dvalues, S* scratch, const S* dout, const S* qkv, const S* att,
                                     const S* scores, const S* norm, const S* values, const SplineShape& sp, int B,
                                     int T, int C, int H);

// Spline-kernel attention: phi (N,2C) = φ of the q | k columns of qkv (after RoPE, no scaling);
// K_ij = φ(q_i)·φ(k_j) per head, α_ij = K_ij / (Σ_{j'≤i} |K_ij'| + 1e-6). att, norm as above.
// phi is an output (saved for backward).
template <typename S>
void spline_kernel_attention_forward(S* out, S* att, S* norm, S* phi, const S* qkv, const S* values,
                                     const SplineShape& sp, int B, int T, int C, int H);
// dqkv (N,3C) overwritten; dvalues (K) += the spline values' gradient. qk, dphi: (N,2C) scratch;
// scratch as attention_backward.
template <typename S>
void spline_kernel_attention_backward(S* dqkv, S* dvalues, S* scratch, S* qk, S* dphi, const S* dout, const S* qkv,
                                      const S* att, const S* norm, const S* phi, const S* values,
                                      const SplineShape& sp, int B, int T, int C, int H);

}  // namespace srbench::model
