// Transformer-XL's relative positions (`position: relative`, chomsky.md §7.3), the parameters and
// fixed tables the attention kernels' score terms need (internal to model/; attention.hpp's
// ScoreTerms and RelativeGrads):
//   s_ij = [(q_i + u_h)·k_j + (q_i + v_h)·(W_R R_{i−j})_h] / √d_h,   r = i − j,
//   R_r = [sin(r ω_0) … sin(r ω_{d/2−1}), cos(r ω_0) … cos(r ω_{d/2−1})], ω_k = 10000^(−2k/d),
// with u = blocks.{l}.attn.rel.u [H,d_h], v = blocks.{l}.attn.rel.v [H,d_h] and W_R =
// blocks.{l}.attn.rel.proj.weight [d,d] (nn.Linear, no bias) per layer.
//
// Forward, per layer: p_r = W_R·R_r for r = −(T−1) … T−1, one product (2T−1, d) · W_Rᵀ (saved
// for backward). Backward: the kernel gives ∂loss/∂p (and adds into ∂u, ∂v); W_R's gradient is
// then one product ∂pᵀ · R (under softmax with R's cosine half minus 1: relative.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "model/attention.hpp"
#include "model/config.hpp"
#include "model/memory.hpp"
#include "model/params.hpp"

namespace srbench::model {

template <typename S>
class RelativePositions {
 public:
  RelativePositions(const ModelConfig& cfg, const ParamLayout& layout);
  // Sizes the saved p (L, 2T−1, C), backward's buffers and the kernels' per-thread scratch.
  void reserve(int B, int T);
  // Adds what reserve(B, T) allocates from nothing, with `threads` OpenMP threads, to m (memory.hpp).
  void add_workspace(CallMemory& m, int B, int T, int threads) const;
  // Computes layer l's p_r for T positions and adds u, v, p and the scratch to `terms`.
  void forward(ScoreTerms<S>& terms, const S* params, int l, int T);
  // The same terms for the backward pass (p as forward saved it), and where the kernel puts
  // the gradients of u, v (into grads) and of p.
  void backward_terms(ScoreTerms<S>& terms, RelativeGrads<S>& drel, const S* params, S* grads, int l, int T);
  // Forward only: sizes the saved p alone (the forward-only kernels bring their own scratch);
  // saved_terms adds u, v and layer l's p as forward last computed it to `terms` (no scratch).
  void reserve_infer(int T);
  void saved_terms(ScoreTerms<S>& terms, const S* params, int l, int T);
  // After the kernel's backward: W_R's gradient += ∂pᵀ · R (into grads).
  void backward(S* grads, const S* params, int l, int T);

 private:
  template <typename Self, typename Fn>
  static void buffers(Self& self, int B, int T, int threads, Fn&& f);  // reserve's list (buffers.hpp)
  const S* table(const std::vector<S>& t, int T) const;  // rows r = −(T−1) … T−1 of t: (2T−1, C)
  S* pos(int l, int T) { return pos_.data() + static_cast<int64_t>(l) * (2 * T - 1) * C_; }
  int L_, C_, H_, max_len_;
  bool softmax_;                   // softmax attention: W_R's gradient from grad_table_
  std::vector<size_t> u_, v_, w_;  // per layer: offsets of u, v, W_R
  std::vector<S> table_;           // (2·max_len − 1, C): R_r in row r + max_len − 1
  std::vector<S> grad_table_;      // softmax only: R_r with its cosine half minus 1 (backward)
  std::vector<S> pos_, dpos_, partial_, scratch_;
};

extern template class RelativePositions<float>;
extern template class RelativePositions<double>;

}  // namespace srbench::model
