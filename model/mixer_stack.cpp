// The layout of mixer_stack.hpp's LM around a Family's mixer tensors.
#include "model/mixer_stack.hpp"

#include <string>

namespace srbench::model {

void ParamLayout::add_mixer_mlp(const ModelConfig& cfg, const std::function<void(const std::string&)>& mixer) {
  const int64_t V = cfg.vocab, d = cfg.d_model, I = cfg.resolved_mlp_hidden();
  const bool bias = cfg.resolved_norm() == Norm::Layer;
  auto norm = [&](const std::string& prefix) {
    add(prefix + ".weight", {d}, false);
    if (bias) add(prefix + ".bias", {d}, false);
  };
  add("tok_emb", {V, d}, true);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    norm(b + "ln1");
    mixer(b + "mixer.");
    if (I > 0) {
      norm(b + "ln2");
      add(b + "mlp.gate_proj.weight", {I, d}, true);
      add(b + "mlp.up_proj.weight", {I, d}, true);
      add(b + "mlp.down_proj.weight", {d, I}, true);
    }
  }
  if (cfg.final_norm) norm("ln_f");
  add("head.weight", {V, d}, true);
  add("head.bias", {V}, false);
  spline_block_.offset = total_;
}

}  // namespace srbench::model
