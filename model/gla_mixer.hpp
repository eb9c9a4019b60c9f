// The mixer of a GLA block (linear-rnn.md, "GLA"; fla's `GatedLinearAttention` with its defaults),
// forward and hand-written backward, for B sequences of T positions (internal to model/). Input u
// and output are (N, d), N = B·T rows, H heads of K = d/(2H) key and V = d/H value channels:
//
//   q, k = W_q u, W_k u  (d/2 each);  v, g = W_v u, W_g u  (d each)   q/k_proj (d/2, d); v/g_proj (d, d)
//   z = W_gk1 (W_gk0 u) + b_gk1;  α = exp(logsigmoid(z)/16)           gated only: gk_proj.0 (16, d), gk_proj.1 (d/2, 16) + bias
//   o = the GLA recurrence (gla_scan.hpp) of q, k, v, α               (α ≡ 1 under gla_decay: none)
//   ô = RMSNorm_{o_norm}(o) per head (ε 1e-6) ⊙ SiLU(g)               o_norm (V), shared by the heads
//   out = W_o ô                                                        o_proj (d, d)
#pragma once

#include <cstdint>
#include <vector>

#include "model/gla_scan.hpp"
#include "model/memory.hpp"

namespace srbench::model {

struct GlaMixerDims {
  int B = 0, T = 0;
  int d = 0, H = 0;  // d_model (even), heads (dividing d/2)
  bool gated = true;
  static constexpr int kGateRank = 16;  // gk_proj's low rank (F's gate_low_rank_dim)
  int64_t rows() const { return static_cast<int64_t>(B) * T; }
  int key_dim() const { return d / (2 * H); }
  int value_dim() const { return d / H; }
};

// One mixer's parameters in the reference's shapes (above; absent ones null); and their gradients.
template <typename S>
struct GlaWeights {
  const S *q_proj, *k_proj, *v_proj, *g_proj, *gk0, *gk1, *gk1_bias, *o_norm, *o_proj;
};
template <typename S>
struct GlaGrads {
  S *q_proj, *k_proj, *v_proj, *g_proj, *gk0, *gk1, *gk1_bias, *o_norm, *o_proj;
};

template <typename S>
class GlaMixer {
 public:
  void reserve(const GlaMixerDims& m, bool need_grads);
  CallMemory memory(const GlaMixerDims& m, bool need_grads) const;
  // out (N, d) = the mixer of u (N, d); saves what backward needs.
  void forward(S* out, const S* u, const GlaWeights<S>& w, const GlaMixerDims& m);
  // du (N, d) = ∂loss/∂u (overwritten); g += ∂loss/∂weights, given dout = ∂loss/∂out of the last forward.
  void backward(S* du, const GlaGrads<S>& g, const S* dout, const S* u, const GlaWeights<S>& w, const GlaMixerDims& m);

 private:
  template <typename Self, typename F>
  static void buffers(Self& self, const GlaMixerDims& m, bool need_grads, F&& f);

  GlaScan<S> scan_;
  // saved by forward: q, k (N, d/2 each), v, g (N, d each), the gate's low-rank y (N, 16), z and α
  // (N, d/2), the recurrence's output o, the norm's 1/rms (N·H), ô before the output gate, the
  // gated ô
  std::vector<S> qk_, v_, g_, y_, z_, alpha_, o_, rstd_, on_, top_;
  // backward
  std::vector<S> d_top_, d_on_, d_g_, d_o_, d_qk_, d_v_, d_alpha_, d_z_, d_y_, du_part_;
};

}  // namespace srbench::model
