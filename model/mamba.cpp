// The Mamba language model (mamba.hpp): the mixer's tensors in the layout, its offsets, weights
// and init, and the stack's instantiation.
#include "model/mamba.hpp"

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/init_random.hpp"
#include "model/mixer_stack_impl.hpp"

namespace srbench::model {

void ParamLayout::add_mamba(const ModelConfig& cfg) {
  const int64_t d = cfg.d_model, E = static_cast<int64_t>(cfg.expand) * d, N = cfg.d_state;
  const int64_t R = cfg.resolved_dt_rank(), K = cfg.d_conv;
  add_mixer_mlp(cfg, [&](const std::string& m) {
    add(m + "in_proj.weight", {2 * E, d}, true);
    add(m + "conv1d.weight", {E, K}, true);
    add(m + "conv1d.bias", {E}, false);
    add(m + "x_proj.weight", {R + 2 * N, E}, true);
    add(m + "dt_proj.weight", {E, R}, true);
    add(m + "dt_proj.bias", {E}, false);
    add(m + "A_log", {E, N}, false);
    add(m + "D", {E}, false);
    add(m + "out_proj.weight", {d, E}, true);
  });
}

MambaFamily::Offsets MambaFamily::offsets(const ParamLayout& layout, const std::string& m) {
  auto at = [&](const std::string& n) { return layout.at(m + n).offset; };
  return Offsets{at("in_proj.weight"), at("conv1d.weight"), at("conv1d.bias"), at("x_proj.weight"),
                 at("dt_proj.weight"), at("dt_proj.bias"),  at("A_log"),       at("D"),
                 at("out_proj.weight")};
}

template <typename P>
auto MambaFamily::weights(const Offsets& o, P* p) {
  using S = std::remove_const_t<P>;
  using W = std::conditional_t<std::is_const_v<P>, MambaWeights<S>, MambaGrads<S>>;
  return W{p + o.in_proj, p + o.conv_w, p + o.conv_b, p + o.x_proj,  p + o.dt_w,
           p + o.dt_b,    p + o.A_log,  p + o.D,      p + o.out_proj};
}

template <typename S>
void MambaFamily::init(const ModelConfig& cfg, const ParamLayout& layout, S* params, uint64_t seed) {
  InitRandom rng(seed);
  const bool grazzi = cfg.init == InitScheme::Grazzi;
  const double d = cfg.d_model, E = static_cast<double>(cfg.expand) * cfg.d_model, K = cfg.d_conv, R = cfg.resolved_dt_rank();
  const int Nst = cfg.d_state;
  for (const auto& p : layout.tensors()) {
    S* x = params + p.offset;
    auto fill_uniform = [&](double b) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(b * (2.0 * rng.uniform() - 1.0));
    };
    auto fill_normal = [&](double sd) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(sd * rng.normal());
    };
    auto fill = [&](double v) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(v);
    };
    const std::string& n = p.name;
    if (n == "tok_emb") fill_normal(grazzi ? 1.0 : 0.02);
    else if (n == "head.weight") grazzi ? fill_uniform(1.0 / std::sqrt(d)) : fill_normal(0.02);
    else if (n == "head.bias" || ends_with(n, "ln1.bias") || n == "ln_f.bias") fill(0.0);
    else if (ends_with(n, "ln1.weight") || n == "ln_f.weight") fill(1.0);
    else if (ends_with(n, "in_proj.weight")) fill_uniform(1.0 / std::sqrt(d));
    else if (ends_with(n, "x_proj.weight")) fill_uniform(1.0 / std::sqrt(E));
    else if (ends_with(n, "conv1d.weight") || ends_with(n, "conv1d.bias")) fill_uniform(1.0 / std::sqrt(K));
    else if (ends_with(n, "dt_proj.weight")) fill_uniform(1.0 / std::sqrt(R));
    else if (ends_with(n, "dt_proj.bias")) {
      // dt log-uniform in [0.001, 0.1]; the bias is softplus⁻¹(dt) = dt + log(−expm1(−dt))
      for (size_t i = 0; i < p.size; ++i) {
        const double dt = std::exp(rng.uniform() * (std::log(0.1) - std::log(0.001)) + std::log(0.001));
        x[i] = static_cast<S>(dt + std::log(-std::expm1(-dt)));
      }
    } else if (ends_with(n, "A_log")) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(std::log(static_cast<double>(i % Nst + 1)));
    } else if (ends_with(n, ".D")) fill(1.0);
    else if (ends_with(n, "out_proj.weight")) fill_uniform(1.0 / std::sqrt(E) / (grazzi ? 1.0 : std::sqrt(cfg.layers)));
    else throw ModelError("mamba init: no rule for " + n);
  }
}

template class MixerMlpStack<float, MambaFamily>;
template class MixerMlpStack<double, MambaFamily>;

}  // namespace srbench::model
