// The GLA language model of linear-rnn.md (internal to model/): MixerMlpStack (mixer_stack.hpp)
// around the GLA mixer (gla_mixer.hpp). The mixer's tensors, in buffer order (d = d_model,
// H = heads):
//   blocks.{l}.mixer.{q,k}_proj.weight [d/2,d]  .{v,g}_proj.weight [d,d]
//   .gk_proj.0.weight [16,d]  .gk_proj.1.weight [d/2,16]  .gk_proj.1.bias [d/2]   (gla_decay: gated)
//   .o_norm.weight [d/H]  .o_proj.weight [d,d]
#pragma once

#include <string>

#include "model/gla_mixer.hpp"
#include "model/mixer_stack.hpp"

namespace srbench::model {

struct GlaFamily {
  template <typename S>
  using Mixer = GlaMixer<S>;
  struct Offsets {
    size_t q, k, v, g, gk0, gk1, gk1_bias, o_norm, o;  // kNone where absent
  };
  static Offsets offsets(const ParamLayout& layout, const std::string& m);
  static GlaMixerDims dims(const ModelConfig& cfg, int B, int T) {
    return GlaMixerDims{B, T, cfg.d_model, cfg.heads, cfg.gla_decay == GlaDecay::Gated};
  }
  template <typename P>
  static auto weights(const Offsets& o, P* p);
  static constexpr double kNormEps = 1e-6;  // every norm's ε (linear-rnn.md: F's norm_eps)
  template <typename S>
  static void init(const ModelConfig& cfg, const ParamLayout& layout, S* params, uint64_t seed) {
    init_deltanet_gla(cfg, layout, params, seed);
  }
};

template <typename S>
using GlaStack = MixerMlpStack<S, GlaFamily>;

extern template class MixerMlpStack<float, GlaFamily>;
extern template class MixerMlpStack<double, GlaFamily>;

}  // namespace srbench::model
