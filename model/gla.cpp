// The GLA language model (gla.hpp): the mixer's tensors in the layout, its offsets and weights,
// and the stack's instantiation.
#include "model/gla.hpp"

#include <string>

#include "model/buffers.hpp"
#include "model/mixer_stack_impl.hpp"

namespace srbench::model {

void ParamLayout::add_gla(const ModelConfig& cfg) {
  const int64_t d = cfg.d_model, H = cfg.heads, R = GlaMixerDims::kGateRank;
  add_mixer_mlp(cfg, [&](const std::string& m) {
    add(m + "q_proj.weight", {d / 2, d}, true);
    add(m + "k_proj.weight", {d / 2, d}, true);
    add(m + "v_proj.weight", {d, d}, true);
    add(m + "g_proj.weight", {d, d}, true);
    if (cfg.gla_decay == GlaDecay::Gated) {
      add(m + "gk_proj.0.weight", {R, d}, true);
      add(m + "gk_proj.1.weight", {d / 2, R}, true);
      add(m + "gk_proj.1.bias", {d / 2}, false);
    }
    add(m + "o_norm.weight", {d / H}, false);
    add(m + "o_proj.weight", {d, d}, true);
  });
}

GlaFamily::Offsets GlaFamily::offsets(const ParamLayout& layout, const std::string& m) {
  auto at = [&](const std::string& n) { return offset_or_none(layout, m + n); };
  return Offsets{at("q_proj.weight"),    at("k_proj.weight"),    at("v_proj.weight"),
                 at("g_proj.weight"),    at("gk_proj.0.weight"), at("gk_proj.1.weight"),
                 at("gk_proj.1.bias"),   at("o_norm.weight"),    at("o_proj.weight")};
}

template <typename P>
auto GlaFamily::weights(const Offsets& o, P* p) {
  using S = std::remove_const_t<P>;
  using W = std::conditional_t<std::is_const_v<P>, GlaWeights<S>, GlaGrads<S>>;
  return W{tensor_at(p, o.q),   tensor_at(p, o.k),        tensor_at(p, o.v),      tensor_at(p, o.g), tensor_at(p, o.gk0),
           tensor_at(p, o.gk1), tensor_at(p, o.gk1_bias), tensor_at(p, o.o_norm), tensor_at(p, o.o)};
}

template class MixerMlpStack<float, GlaFamily>;
template class MixerMlpStack<double, GlaFamily>;

}  // namespace srbench::model
