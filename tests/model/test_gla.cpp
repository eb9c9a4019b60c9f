// The GLA language model (model/gla.hpp, linear-rnn.md): every parameter's gradient against
// central finite differences (double; rms and layer norm, gla_decay gated and none, with and
// without the MLP and ln_f), the float model against the double one, right padding, the same bits
// at 1 and 2 threads, and the resolved YAML and tensors as linear-rnn.md lists them.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "recurrent_helpers.hpp"
#include "tests/model/fd_check.hpp"

using namespace srbench::model;
using srbench::test::RowBatch;

namespace {

ModelConfig gla_config() {
  ModelConfig c;
  c.arch = Arch::Gla;
  c.vocab = 5, c.layers = 2, c.d_model = 8, c.heads = 2, c.gated_mlp_hidden = 6, c.max_len = 64;
  return c;
}

std::vector<ModelConfig> configs() {
  std::vector<ModelConfig> out;
  ModelConfig a = gla_config();
  a.layers = 1;
  out.push_back(a);
  ModelConfig b = gla_config();  // LayerNorm, one head
  b.heads = 1, b.norm = Norm::Layer, b.norm_stated = true;
  out.push_back(b);
  ModelConfig c = gla_config();  // causal linear attention, no MLP, no ln_f
  c.gla_decay = GlaDecay::None, c.gated_mlp_hidden = 0, c.final_norm = false;
  out.push_back(c);
  return out;
}

std::string name_of(const ModelConfig& c) {
  return "layers " + std::to_string(c.layers) + ", heads " + std::to_string(c.heads) + ", norm " +
         to_string(c.resolved_norm()) + ", gla_decay " + to_string(c.gla_decay) + ", mlp " +
         std::to_string(c.resolved_mlp_hidden()) + (c.final_norm ? "" : ", no ln_f");
}

// srbench::test::perturb, then linear-rnn.md's gate: gk_proj.1.bias U(−10, 1) and gk_proj.1.weight
// doubled, so that logsigmoid works in its bend and in its linear part.
template <typename S>
void perturb(BasicModel<S>& m, uint64_t seed) {
  srbench::test::perturb(m, seed);
  std::mt19937_64 gen(seed + 100);
  std::uniform_real_distribution<double> u(-10.0, 1.0);
  for (const auto& p : m.layout().tensors()) {
    const std::string& n = p.name;
    if (n.find("gk_proj.1.bias") != std::string::npos)
      for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] = static_cast<S>(u(gen));
    else if (n.find("gk_proj.1.weight") != std::string::npos)
      for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] *= S(2);
  }
}

RowBatch batch(const ModelConfig& cfg, uint64_t seed) {
  return srbench::test::padded_batch(3, 19, cfg.vocab, seed, {19, 13, 8});
}

}  // namespace

TEST_CASE("gla: gradients of every parameter match central finite differences", "[gla][gradients]") {
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

TEST_CASE("gla: float agrees with double, right padding changes nothing, 1 and 2 threads the same bits", "[gla]") {
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    BasicModel<double> md(cfg);
    BasicModel<float> mf(cfg);
    perturb(md, 5);
    srbench::test::check_float_padding_threads(md, mf, batch(cfg, 9));
  }
}

TEST_CASE("gla: the resolved YAML and the tensors are linear-rnn.md's", "[gla]") {
  ModelConfig c = gla_config();
  c.gated_mlp_hidden = -1;  // F's rule: 256 at d 8
  CHECK(c.to_yaml() ==
        "vocab: 5\narch: gla\nlayers: 2\nd_model: 8\nmax_len: 64\nheads: 2\ngla_decay: gated\nmlp_hidden: 256\n"
        "norm: rms\nfinal_norm: true\n");
  const ParamLayout layout(c);
  std::vector<std::string> names;
  for (const auto& p : layout.tensors())
    if (p.name.rfind("blocks.0.", 0) == 0) names.push_back(p.name + " " + std::to_string(p.size));
  CHECK(names == std::vector<std::string>{"blocks.0.ln1.weight 8",           "blocks.0.mixer.q_proj.weight 32",
                                          "blocks.0.mixer.k_proj.weight 32",   "blocks.0.mixer.v_proj.weight 64",
                                          "blocks.0.mixer.g_proj.weight 64",   "blocks.0.mixer.gk_proj.0.weight 128",
                                          "blocks.0.mixer.gk_proj.1.weight 64", "blocks.0.mixer.gk_proj.1.bias 4",
                                          "blocks.0.mixer.o_norm.weight 4",    "blocks.0.mixer.o_proj.weight 64",
                                          "blocks.0.ln2.weight 8",             "blocks.0.mlp.gate_proj.weight 2048",
                                          "blocks.0.mlp.up_proj.weight 2048",  "blocks.0.mlp.down_proj.weight 2048"});
  c.gla_decay = GlaDecay::None;
  CHECK(ParamLayout(c).find("blocks.0.mixer.gk_proj.0.weight") == nullptr);
  CHECK(c.to_yaml().find("gla_decay: none\n") != std::string::npos);
  // heads must divide d_model/2 (K = d/(2H) key channels per head)
  c.heads = 3;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("d_model/2 = 4 is not divisible by heads 3"));
}
