// The mixer of a DeltaNet block (linear-rnn.md, "DeltaNet"; fla's `DeltaNet` layer, with
// `GatedDeltaNet`'s gate and output gate as options), forward and hand-written backward, for B
// sequences of T positions (internal to model/). Input u and output are (N, d), N = B·T rows, H
// heads of K = d/H channels:
//
//   q̃, k̃, ṽ = W_q u, W_k u, W_v u                     q/k/v_proj (d, d)
//   q̂, k̂, v̂ = SiLU(conv(q̃)), SiLU(conv(k̃)), SiLU(conv(ṽ))   q/k/v_conv1d (d, κ), no bias (κ = 0: no conv)
//   q, k = l2(q̂), l2(k̂) per head (ε 1e-6 inside the root);  v = v̂
//   β = beta_scale·σ(W_b u)                             b_proj (H, d)
//   α = exp(−exp(A_log)·softplus(W_a u + dt_bias))      gated only: a_proj (H, d), A_log (H), dt_bias (H)
//   o = the delta rule (delta_rule.hpp) of q, k, v, β, α
//   ô = RMSNorm_{o_norm}(o) per head (ε 1e-6), ⊙ SiLU(W_g u) with output_gate (g_proj (d, d))
//   out = W_o ô                                         o_proj (d, d)
#pragma once

#include <cstdint>
#include <vector>

#include "model/delta_rule.hpp"
#include "model/memory.hpp"

namespace srbench::model {

struct DeltaNetDims {
  int B = 0, T = 0;
  int d = 0, H = 0, K = 0;  // d_model, heads, d_conv (κ; 0: no convolution)
  int beta_scale = 1;
  bool gated = false, output_gate = false;
  int64_t rows() const { return static_cast<int64_t>(B) * T; }
  int head_dim() const { return d / H; }
};

// One mixer's parameters in the reference's shapes (above; absent ones null); and their gradients.
template <typename S>
struct DeltaNetWeights {
  const S *q_proj, *k_proj, *v_proj, *q_conv, *k_conv, *v_conv, *b_proj, *a_proj, *A_log, *dt_bias, *g_proj,
      *o_norm, *o_proj;
};
template <typename S>
struct DeltaNetGrads {
  S *q_proj, *k_proj, *v_proj, *q_conv, *k_conv, *v_conv, *b_proj, *a_proj, *A_log, *dt_bias, *g_proj, *o_norm,
      *o_proj;
};

template <typename S>
class DeltaNetMixer {
 public:
  void reserve(const DeltaNetDims& m, bool need_grads);
  CallMemory memory(const DeltaNetDims& m, bool need_grads) const;
  // out (N, d) = the mixer of u (N, d); saves what backward needs.
  void forward(S* out, const S* u, const DeltaNetWeights<S>& w, const DeltaNetDims& m);
  // du (N, d) = ∂loss/∂u (overwritten); g += ∂loss/∂weights, given dout = ∂loss/∂out of the last forward.
  void backward(S* du, const DeltaNetGrads<S>& g, const S* dout, const S* u, const DeltaNetWeights<S>& w,
                const DeltaNetDims& m);

 private:
  template <typename Self, typename F>
  static void buffers(Self& self, const DeltaNetDims& m, bool need_grads, F&& f);

  DeltaRule<S> rule_;
  // saved by forward: per projection p = q, k, v (each (N, d)): the projection, the conv's output
  // before SiLU, and after it; q and k's l2 factors (N·H); β's and the gate's pre-activations
  // (N, H), β and α; the rule's output o, the norm's 1/rms (N·H), ô before the output gate, g
  std::vector<S> proj_, conv_, act_, inv_, qk_, bz_, beta_, az_, alpha_, o_, rstd_, on_, g_, gated_;
  std::vector<S> conv_t_;  // (κ, d): one projection's taps transposed
  // backward
  std::vector<S> d_gated_, d_on_, d_o_, d_qkv_, d_act_, d_beta_, d_alpha_, d_bz_, d_az_, d_conv_w_, d_g_;
  std::vector<S> du_part_;  // (N, d): ∂loss/∂u through one projection, added into du
};

}  // namespace srbench::model
