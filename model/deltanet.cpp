// The DeltaNet language model (deltanet.hpp): the mixer's tensors in the layout, its offsets and
// weights, and the stack's instantiation.
#include "model/deltanet.hpp"

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/mixer_stack_impl.hpp"

namespace srbench::model {

void ParamLayout::add_deltanet(const ModelConfig& cfg) {
  const int64_t d = cfg.d_model, H = cfg.heads, K = cfg.d_conv;
  add_mixer_mlp(cfg, [&](const std::string& m) {
    add(m + "q_proj.weight", {d, d}, true);
    add(m + "k_proj.weight", {d, d}, true);
    add(m + "v_proj.weight", {d, d}, true);
    add(m + "b_proj.weight", {H, d}, true);
    if (K > 0)
      for (const char* c : {"q_conv1d", "k_conv1d", "v_conv1d"}) add(m + c + ".weight", {d, K}, true);
    if (cfg.gated) {
      add(m + "a_proj.weight", {H, d}, true);
      add(m + "A_log", {H}, false);
      add(m + "dt_bias", {H}, false);
    }
    if (cfg.output_gate) add(m + "g_proj.weight", {d, d}, true);
    add(m + "o_norm.weight", {d / H}, false);
    add(m + "o_proj.weight", {d, d}, true);
  });
}

DeltaNetFamily::Offsets DeltaNetFamily::offsets(const ParamLayout& layout, const std::string& m) {
  auto at = [&](const std::string& n) { return offset_or_none(layout, m + n); };
  return Offsets{at("q_proj.weight"),   at("k_proj.weight"), at("v_proj.weight"), at("q_conv1d.weight"),
                 at("k_conv1d.weight"), at("v_conv1d.weight"), at("b_proj.weight"), at("a_proj.weight"),
                 at("A_log"),           at("dt_bias"),       at("g_proj.weight"), at("o_norm.weight"),
                 at("o_proj.weight")};
}

template <typename P>
auto DeltaNetFamily::weights(const Offsets& o, P* p) {
  using S = std::remove_const_t<P>;
  using W = std::conditional_t<std::is_const_v<P>, DeltaNetWeights<S>, DeltaNetGrads<S>>;
  return W{tensor_at(p, o.q),     tensor_at(p, o.k),       tensor_at(p, o.v), tensor_at(p, o.qc),
           tensor_at(p, o.kc),    tensor_at(p, o.vc),      tensor_at(p, o.b), tensor_at(p, o.a),
           tensor_at(p, o.A_log), tensor_at(p, o.dt_bias), tensor_at(p, o.g), tensor_at(p, o.o_norm),
           tensor_at(p, o.o)};
}

template class MixerMlpStack<float, DeltaNetFamily>;
template class MixerMlpStack<double, DeltaNetFamily>;

}  // namespace srbench::model
