// The layout of mixer_stack.hpp's LM around a Family's mixer tensors, and deltanet's and gla's init.
#include "model/mixer_stack.hpp"

#include <cmath>
#include <string>

#include "model/init_random.hpp"

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

template <typename S>
void init_deltanet_gla(const ModelConfig& cfg, const ParamLayout& layout, S* params, uint64_t seed) {
  InitRandom rng(seed);
  auto uniform = [&] { return rng.uniform(); };
  auto normal = [&] { return rng.normal(); };
  const bool grazzi = cfg.init == InitScheme::Grazzi;
  for (const auto& p : layout.tensors()) {
    S* x = params + p.offset;
    auto fill_uniform = [&](double b) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(b * (2.0 * uniform() - 1.0));
    };
    auto fill_normal = [&](double sd) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(sd * normal());
    };
    auto fill = [&](double v) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(v);
    };
    const std::string& n = p.name;
    const bool mixer_linear = n.find(".mixer.") != std::string::npos && ends_with(n, "_proj.weight");
    if (n == "head.bias" || ends_with(n, "ln1.bias") || ends_with(n, "ln2.bias") || n == "ln_f.bias" ||
        ends_with(n, "gk_proj.1.bias"))
      fill(0.0);
    else if (ends_with(n, "ln1.weight") || ends_with(n, "ln2.weight") || n == "ln_f.weight" || ends_with(n, "o_norm.weight"))
      fill(1.0);
    else if (ends_with(n, "A_log")) {  // ln a, a ~ U(0, 16); a draw of exactly 0 drawn again
      for (size_t i = 0; i < p.size; ++i) {
        double a = 0;
        while (a == 0) a = 16.0 * uniform();
        x[i] = static_cast<S>(std::log(a));
      }
    } else if (ends_with(n, "dt_bias")) {  // as mamba's dt_proj.bias: softplus⁻¹ of a log-uniform dt
      for (size_t i = 0; i < p.size; ++i) {
        const double dt = std::exp(uniform() * (std::log(0.1) - std::log(0.001)) + std::log(0.001));
        x[i] = static_cast<S>(dt + std::log(-std::expm1(-dt)));
      }
    } else if (!grazzi) {
      fill_normal(0.02);  // tok_emb, head, every Linear and Conv1d weight
    } else if (mixer_linear) {  // xavier_uniform with gain 2^−2.5
      const double fan_out = static_cast<double>(p.shape[0]), fan_in = static_cast<double>(p.shape[1]);
      fill_uniform(std::pow(2.0, -2.5) * std::sqrt(6.0 / (fan_in + fan_out)));
    } else if (ends_with(n, "conv1d.weight")) {
      fill_uniform(1.0 / std::sqrt(static_cast<double>(cfg.d_conv)));
    } else if (ends_with(n, "mlp.down_proj.weight")) {
      fill_normal(0.02 / std::sqrt(2.0 * cfg.layers));
    } else {
      fill_normal(0.02);  // tok_emb, head.weight, mlp.gate_proj, mlp.up_proj
    }
  }
}

template void init_deltanet_gla<float>(const ModelConfig&, const ParamLayout&, float*, uint64_t);
template void init_deltanet_gla<double>(const ModelConfig&, const ParamLayout&, double*, uint64_t);

}  // namespace srbench::model
