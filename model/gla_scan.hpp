// The gated linear attention recurrence of GLA's mixer (linear-rnn.md, "GLA"; fla's
// `naive_recurrent_gla`), forward and hand-written backward, for B sequences of T positions and H
// heads of K key and V value channels at once (internal to model/; the projections, the gate's
// low-rank map, the norm and the output gate are the mixer's). Inputs q, k, α are (N, H·K), v and
// the output (N, H·V), N = B·T rows, row b·T + t; head h takes key channels hK … hK+K−1 and value
// channels hV … hV+V−1:
//
//   S_t = S_{t−1} diag(α_t) + v_t k_tᵀ           (S ∈ R^{V×K}: rows value channels, columns key channels)
//   o_t = S_t q_t / √K                            S_{−1} = 0; α ≡ 1 when no gate is given
//
// The decay acts on the key axis (column j of S scaled by α_j). The state is kept transposed —
// row j of a K×V block is column j of S — so the update, S q and ∂v are sums of rows (vertical, in
// j order) and only ∂q, ∂k and ∂α are dot products over the value channels. It is kept only at
// every kChunk-th position; backward recomputes one chunk's states at a time from there. Threads:
// the B·H (sequence, head) recurrences split over threads; every output and gradient belongs to
// one pair and every sum runs in a fixed order, so the numbers do not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "model/memory.hpp"

namespace srbench::model {

struct GlaDims {
  int B = 0, T = 0;  // sequences, positions
  int H = 0;         // heads
  int K = 0, V = 0;  // key and value channels per head
  int64_t rows() const { return static_cast<int64_t>(B) * T; }
};

template <typename S>
class GlaScan {
 public:
  static constexpr int kChunk = 16;  // positions between two saved states

  // Sizes the saved states (and with need_grads the backward's buffers) for `m`; grows only.
  void reserve(const GlaDims& m, bool need_grads);
  // The bytes reserve(m, need_grads) allocates from nothing (memory.hpp).
  CallMemory memory(const GlaDims& m, bool need_grads) const;
  // o (N, H·V) from q, k (N, H·K), v (N, H·V) and alpha (N, H·K; null: no decay). reserve was called.
  void forward(S* o, const S* q, const S* k, const S* v, const S* alpha, const GlaDims& m);
  // The gradients of the last forward's inputs given dout = ∂loss/∂o (each overwritten; dalpha
  // only with alpha). The inputs are the forward's, unchanged.
  void backward(S* dq, S* dk, S* dv, S* dalpha, const S* dout, const S* q, const S* k, const S* v, const S* alpha,
                const GlaDims& m);

 private:
  template <typename Self, typename F>
  static void buffers(Self& self, const GlaDims& m, bool need_grads, F&& f);

  std::vector<S> saved_;   // (B·H, chunks, K, V): the state before each chunk's first position
  std::vector<S> run_;     // (B·H, K, V): forward's running state
  std::vector<S> states_;  // (B·H, kChunk, K, V): backward: one chunk's states S_t
  std::vector<S> ds_;      // (B·H, K, V): backward: ∂loss/∂S_t
  std::vector<S> vecs_;    // (B·H, V): backward: dout·K^−½
};

}  // namespace srbench::model
