// The (gated) delta rule of DeltaNet's mixer (linear-rnn.md, "DeltaNet"; fla's
// `delta_rule_recurrence` and `naive_recurrent_gated_delta_rule`), forward and hand-written
// backward, for B sequences of T positions and H heads of K channels at once (internal to model/;
// the projections, convolutions, norms and gates around it are the mixer's). Inputs are (N, H·K)
// or (N, H), N = B·T rows, row b·T + t; head h takes channels hK … hK+K−1:
//
//   u_t = v_t − α_t S_{t−1} k_t                   (S ∈ R^{K×K}: rows value channels, columns key channels)
//   S_t = α_t S_{t−1} + β_t u_t k_tᵀ              = α_t S_{t−1} (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ
//   o_t = S_t q_t / √K                            S_{−1} = 0; α ≡ 1 when no gate is given
//
// Decay first, the delta update on the decayed state, the read-out after the update; β multiplies
// both the erase and the write. q and k are taken as given (the mixer l2-normalises them).
//
// The state is kept only at every kChunk-th position; backward recomputes one chunk's states at a
// time from there (memory T·K²/kChunk per sequence and head rather than T·K²). Threads: the
// recurrences of the B·H (sequence, head) pairs split over threads; every output and gradient
// belongs to one pair and every sum runs in a fixed order, so the numbers do not depend on the
// thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "model/memory.hpp"

namespace srbench::model {

struct DeltaDims {
  int B = 0, T = 0;  // sequences, positions
  int H = 0, K = 0;  // heads, channels per head (keys and values alike)
  int64_t rows() const { return static_cast<int64_t>(B) * T; }
};

template <typename S>
class DeltaRule {
 public:
  static constexpr int kChunk = 16;  // positions between two saved states

  // Sizes the saved states (and with need_grads the backward's buffers) for `m`; grows only.
  void reserve(const DeltaDims& m, bool need_grads);
  // The bytes reserve(m, need_grads) allocates from nothing (memory.hpp).
  CallMemory memory(const DeltaDims& m, bool need_grads) const;
  // o (N, H·K) from q, k, v (N, H·K), beta (N, H) and alpha (N, H; null: no decay). reserve was called.
  void forward(S* o, const S* q, const S* k, const S* v, const S* beta, const S* alpha, const DeltaDims& m);
  // The gradients of the last forward's inputs given dout = ∂loss/∂o (each overwritten; dalpha
  // only with alpha). The inputs are the forward's, unchanged.
  void backward(S* dq, S* dk, S* dv, S* dbeta, S* dalpha, const S* dout, const S* q, const S* k, const S* v,
                const S* beta, const S* alpha, const DeltaDims& m);

 private:
  template <typename Self, typename F>
  static void buffers(Self& self, const DeltaDims& m, bool need_grads, F&& f);
  // forward and backward with a gate (alpha given) or without (α ≡ 1, its products left out).
  template <bool Gated>
  void forward_impl(S* o, const S* q, const S* k, const S* v, const S* beta, const S* alpha, const DeltaDims& m);
  template <bool Gated>
  void backward_impl(S* dq, S* dk, S* dv, S* dbeta, S* dalpha, const S* dout, const S* q, const S* k, const S* v,
                     const S* beta, const S* alpha, const DeltaDims& m);

  std::vector<S> saved_;   // (B·H, chunks, K, K): the state before each chunk's first position
  std::vector<S> run_;     // (B·H, K, K): forward's running state
  std::vector<S> fvecs_;   // (B·H, 2·K): forward: S_{t−1} k and v − α S_{t−1} k
  std::vector<S> states_;  // (B·H, kChunk, K, K): backward: one chunk's states S_t
  std::vector<S> ds_;      // (B·H, K, K): backward: ∂loss/∂S_t
  std::vector<S> vecs_;    // (B·H, (2·kChunk + 5)·K): backward: w = S_{t−1} k and u of each of the chunk's
                           // positions (kept from the recomputation), dout·K^−½, ∂S_t k, ∂S_t·S_{t−1}, β u, ∂w
};

}  // namespace srbench::model
