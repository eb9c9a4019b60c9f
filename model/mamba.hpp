// The Mamba-1 language model of linear-rnn.md (internal to model/): MixerMlpStack
// (mixer_stack.hpp) around the Mamba mixer (mamba_mixer.hpp), without an MLP:
//
//   h_0 = tok_emb[tokens]
//   h_{l+1} = h_l + Mixer_l(Norm_{ln1,l}(h_l))     l = 0 … L−1
//   logits = head(Norm_{ln_f}(h_L))                 (final_norm: false: head(h_L))
//
// Norm is RMSNorm (`norm: rms`, the default under mamba) or LayerNorm, ε 1e-5 both. The mixer's
// tensors, in buffer order (d = d_model, E = expand·d, N = d_state, R = dt_rank, κ = d_conv):
//   blocks.{l}.mixer.in_proj.weight [2E,d]  .conv1d.weight [E,κ]  .conv1d.bias [E]
//   .x_proj.weight [R+2N,E]  .dt_proj.weight [E,R]  .dt_proj.bias [E]  .A_log [E,N]  .D [E]
//   .out_proj.weight [d,E]
// Weight decay on tok_emb, head.weight and every 2-D mixer weight; not on norms, biases, A_log, D.
#pragma once

#include <string>

#include "model/mamba_mixer.hpp"
#include "model/mixer_stack.hpp"

namespace srbench::model {

struct MambaFamily {
  template <typename S>
  using Mixer = MambaMixer<S>;
  struct Offsets {
    size_t in_proj, conv_w, conv_b, x_proj, dt_w, dt_b, A_log, D, out_proj;
  };
  static Offsets offsets(const ParamLayout& layout, const std::string& m);
  static MambaDims dims(const ModelConfig& cfg, int B, int T) {
    MambaDims m;
    m.B = B, m.T = T, m.d = cfg.d_model, m.E = cfg.expand * cfg.d_model, m.N = cfg.d_state;
    m.R = cfg.resolved_dt_rank(), m.K = cfg.d_conv, m.signed_eigenvalues = cfg.eigenvalues == Eigenvalues::Signed;
    return m;
  }
  template <typename P>
  static auto weights(const Offsets& o, P* p);
  static constexpr double kNormEps = 1e-5;  // ln1's and ln_f's (M's RMSNorm and LayerNorm)
  // linear-rnn.md's init, one generator over the tensors in layout order (`init: default`: the
  // reference LM's, M's `Mamba.__init__` and `_init_weights`; `init: grazzi`: G's MambaLM).
  template <typename S>
  static void init(const ModelConfig& cfg, const ParamLayout& layout, S* params, uint64_t seed);
};

template <typename S>
using MambaStack = MixerMlpStack<S, MambaFamily>;

extern template class MixerMlpStack<float, MambaFamily>;
extern template class MixerMlpStack<double, MambaFamily>;

}  // namespace srbench::model
