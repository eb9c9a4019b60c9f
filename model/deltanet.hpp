// The DeltaNet language model of linear-rnn.md (internal to model/): MixerMlpStack
// (mixer_stack.hpp) around the DeltaNet mixer (deltanet_mixer.hpp). The mixer's tensors, in
// buffer order (d = d_model, H = heads, κ = d_conv):
//   blocks.{l}.mixer.{q,k,v}_proj.weight [d,d]  .b_proj.weight [H,d]
//   .{q,k,v}_conv1d.weight [d,κ] (κ >= 1)  .a_proj.weight [H,d] .A_log [H] .dt_bias [H] (gated)
//   .g_proj.weight [d,d] (output_gate)  .o_norm.weight [d/H]  .o_proj.weight [d,d]
#pragma once

#include <string>

#include "model/deltanet_mixer.hpp"
#include "model/mixer_stack.hpp"

namespace srbench::model {

struct DeltaNetFamily {
  template <typename S>
  using Mixer = DeltaNetMixer<S>;
  struct Offsets {
    size_t q, k, v, qc, kc, vc, b, a, A_log, dt_bias, g, o_norm, o;  // kNone where absent
  };
  static Offsets offsets(const ParamLayout& layout, const std::string& m);
  static DeltaNetDims dims(const ModelConfig& cfg, int B, int T) {
    return DeltaNetDims{B, T, cfg.d_model, cfg.heads, cfg.d_conv, cfg.beta_scale, cfg.gated, cfg.output_gate};
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
using DeltaNetStack = MixerMlpStack<S, DeltaNetFamily>;

extern template class MixerMlpStack<float, DeltaNetFamily>;
extern template class MixerMlpStack<double, DeltaNetFamily>;

}  // namespace srbench::model
