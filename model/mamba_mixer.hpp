// The mixer of a Mamba-1 block (linear-rnn.md, "Mamba"; state-spaces/mamba's `mamba_simple.py`
// slow path with `selective_scan_ref`), forward and hand-written backward, for B sequences of T
// positions at once (internal to model/; the block, its norms and the model around it are the
// arch's). Input u and output are (N, d), N = B·T rows, row b·T + t:
//
//   [x̃ ; z] = W_in u                 in_proj (2E, d)
//   x       = SiLU(conv(x̃))          conv1d weight (E, κ), bias (E): causal, depthwise
//   [δ ; B ; C] = W_x x              x_proj (R + 2N, E)
//   Δ       = softplus(W_dt δ + b)    dt_proj weight (E, R), bias (E)
//   Ā       = exp(Δ·A), A = −exp(A_log)      (signed: 2·exp(Δ·A) − 1)
//   s_t     = Ā_t ⊙ s_{t−1} + (Δ_t ⊙ x_t) ⊗ B_t,   y_t = s_t C_t + D ⊙ x_t
//   out     = W_out (y ⊙ SiLU(z))    out_proj (d, E)
//
// The scan keeps the state s (N × E per sequence: vectors along channels) only at every
// kChunk-th position; backward
// recomputes the states of one chunk at a time from there, so training memory grows as
// T·E·N / kChunk rather than T·E·N. Threads: the scan splits over sequences, each sequence's
// parameter gradients kept apart and summed in sequence order afterwards, so the numbers do
// not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "model/memory.hpp"

namespace srbench::model {

struct MambaDims {
  int B = 0, T = 0;                // sequences, positions
  int d = 0, E = 0, N = 0, R = 0;  // d_model, d_inner = expand·d, d_state, dt_rank
  int K = 0;                       // d_conv (κ)
  bool signed_eigenvalues = false;
  int64_t rows() const { return static_cast<int64_t>(B) * T; }
};

// One mixer's parameters, in the reference's shapes (above); and their gradients.
template <typename S>
struct MambaWeights {
  const S *in_proj, *conv_w, *conv_b, *x_proj, *dt_w, *dt_b, *A_log, *D, *out_proj;
};
template <typename S>
struct MambaGrads {
  S *in_proj, *conv_w, *conv_b, *x_proj, *dt_w, *dt_b, *A_log, *D, *out_proj;
};

template <typename S>
class MambaMixer {
 public:
  static constexpr int kChunk = 16;  // positions between two saved states

  // Sizes the saved activations (and with need_grads the backward's buffers) for `m`; grows only.
  void reserve(const MambaDims& m, bool need_grads);
  // The bytes reserve(m, need_grads) allocates from nothing: forward's buffers as saved,
  // backward's as scratch (memory.hpp).
  CallMemory memory(const MambaDims& m, bool need_grads) const;
  // out (N, d) = the mixer of u (N, d); saves what backward needs. reserve(m, …) was called.
  void forward(S* out, const S* u, const MambaWeights<S>& w, const MambaDims& m);
  // du (N, d) = ∂loss/∂u (overwritten); g += ∂loss/∂weights, given dout = ∂loss/∂out of the last
  // forward, for its u and weights (reserve was called with need_grads).
  void backward(S* du, const MambaGrads<S>& g, const S* dout, const S* u, const MambaWeights<S>& w,
                const MambaDims& m);

 private:
  // Every buffer for `m`, listed once: f(vector, elements, role) (buffers.hpp).
  template <typename Self, typename F>
  static void buffers(Self& self, const MambaDims& m, bool need_grads, F&& f);
  void scan_backward(const MambaWeights<S>& w, const MambaDims& m);
  void conv_backward(const MambaWeights<S>& w, const MambaDims& m);

  // saved by forward
  std::vector<S> xz_;     // (N, 2E): x̃ | z
  std::vector<S> xc_;     // (N, E): conv(x̃) before SiLU
  std::vector<S> x_;      // (N, E)
  std::vector<S> dbl_;    // (N, R + 2N): δ | B | C
  std::vector<S> din_;    // (N, R): δ, contiguous
  std::vector<S> dtraw_;  // (N, E): W_dt δ + b
  std::vector<S> delta_;  // (N, E): Δ
  std::vector<S> A_;      // (N, E): −exp(A_log), transposed (the scan runs along channels)
  std::vector<S> y_;      // (N, E): s C + D x
  std::vector<S> gated_;  // (N, E): y ⊙ SiLU(z)
  std::vector<S> saved_;  // (B, chunks, N, E): the state before each chunk's first position
  std::vector<S> conv_t_;  // (κ, E): the conv's taps transposed
  std::vector<S> run_;    // per sequence: the scan's running state (N, E), Δ⊙x (E), y's sum (E)
  // backward
  std::vector<S> dgated_, dy_, dx_, ddelta_, ddbl_, ddin_, dxz_, dxc_;
  std::vector<S> dA_, dD_, dconv_w_, dconv_b_;  // per sequence: (B, N·E), (B, E), (B, E·κ), (B, E)
  std::vector<S> states_, exps_;                 // per sequence: one chunk of states and exp(Δ·A) (kChunk, N, E)
  std::vector<S> ds_;                            // per sequence: the state's gradient (N, E)
  std::vector<S> vecs_;                          // per sequence: three vectors of E
};

}  // namespace srbench::model
