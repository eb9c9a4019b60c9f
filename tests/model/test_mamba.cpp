// The Mamba language model (model/mamba.hpp, linear-rnn.md): every parameter's gradient against
// central finite differences (double; rms and layer norm, with and without ln_f, signed
// eigenvalues, d_conv 1), the float model against the double one, right padding, the same bits
// at 1 and 2 threads, the checkpoint's tensors and the config's YAML as linear-rnn.md lists them.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include <yaml-cpp/yaml.h>

#include "model/model.hpp"
#include "recurrent_helpers.hpp"
#include "tests/model/fd_check.hpp"

using namespace srbench::model;
using srbench::test::RowBatch;

namespace {

ModelConfig mamba_config(int layers = 2) {
  ModelConfig c;
  c.arch = Arch::Mamba;
  c.vocab = 5, c.layers = layers, c.d_model = 6, c.d_state = 3, c.expand = 2, c.d_conv = 4, c.max_len = 32;
  return c;
}

std::vector<ModelConfig> configs() {
  std::vector<ModelConfig> out = {mamba_config(1), mamba_config(2)};
  ModelConfig layer = mamba_config(2);
  layer.norm = Norm::Layer, layer.norm_stated = true;
  out.push_back(layer);
  ModelConfig g = mamba_config(2);  // Grazzi et al.'s: d_conv 1, no ln_f, signed eigenvalues
  g.d_conv = 1, g.final_norm = false, g.eigenvalues = Eigenvalues::Signed, g.init = InitScheme::Grazzi;
  out.push_back(g);
  return out;
}

std::string name_of(const ModelConfig& c) {
  return "layers " + std::to_string(c.layers) + ", norm " + to_string(c.resolved_norm()) + ", d_conv " +
         std::to_string(c.d_conv) + ", final_norm " + (c.final_norm ? "true" : "false") + ", " +
         to_string(c.eigenvalues);
}

// srbench::test::perturb, then the mixer's own tensors as linear-rnn.md's init spreads them but
// wider, so that every path carries an O(1) signal: A_log U(−1, 1.5) (decays from fast to
// slow), dt_proj.bias U(−3, 1) (softplus over its curved range), D U(−1, 1).
template <typename S>
void perturb(BasicModel<S>& m, uint64_t seed) {
  srbench::test::perturb(m, seed);
  std::mt19937_64 gen(seed + 100);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const auto& p : m.layout().tensors()) {
    auto set = [&](double lo, double hi) {
      for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] = static_cast<S>(lo + (hi - lo) * u(gen));
    };
    const std::string& n = p.name;
    if (n.size() >= 5 && n.compare(n.size() - 5, 5, "A_log") == 0) set(-1.0, 1.5);
    else if (n.find("dt_proj.bias") != std::string::npos) set(-3.0, 1.0);
    else if (n.size() >= 2 && n.compare(n.size() - 2, 2, ".D") == 0) set(-1.0, 1.0);
    else if (n.find("dt_proj.weight") != std::string::npos || n.find("x_proj.weight") != std::string::npos) set(-1.5, 1.5);
  }
}

// B 3, T 21 (two scan chunks), right-padded rows of 21, 14, 9.
RowBatch batch(const ModelConfig& cfg, uint64_t seed) {
  return srbench::test::padded_batch(3, 21, cfg.vocab, seed, {21, 14, 9});
}

}  // namespace

TEST_CASE("mamba: gradients of every parameter match central finite differences", "[mamba][gradients]") {
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

TEST_CASE("mamba: float agrees with double, right padding changes nothing, 1 and 2 threads the same bits",
          "[mamba]") {
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    BasicModel<double> md(cfg);
    BasicModel<float> mf(cfg);
    perturb(md, 5);
    for (size_t i = 0; i < md.num_params(); ++i) mf.params()[i] = static_cast<float>(md.params()[i]);
    const RowBatch b = batch(cfg, 9);
    srbench::test::loss_at(md, b);  // the logits of both models on b
    srbench::test::loss_at(mf, b);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < static_cast<size_t>(b.B * b.T * cfg.vocab); ++i) {
      worst = std::max(worst, std::abs(mf.logits()[i] - md.logits()[i]));
      largest = std::max(largest, std::abs(md.logits()[i]));
    }
    CHECK(largest > 0.1);
    CHECK(worst <= 1e-4 * largest);
    // the loss within 1e-5, the padding's tokens, 1 and 2 threads (a batch of 8 x 30)
    srbench::test::check_float_padding_threads(md, mf, b, 30);
  }
}

TEST_CASE("mamba: the checkpoint's tensors and the config's YAML as linear-rnn.md lists them", "[mamba][config]") {
  ModelConfig c = mamba_config(2);
  c.validate();
  std::set<std::string> names;
  const ParamLayout lay(c);
  for (const auto& p : lay.tensors()) names.insert(p.name);
  std::set<std::string> want = {"tok_emb", "head.weight", "head.bias", "ln_f.weight"};
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    want.insert(b + "ln1.weight");
    for (const char* t : {"in_proj.weight", "conv1d.weight", "conv1d.bias", "x_proj.weight", "dt_proj.weight",
                          "dt_proj.bias", "A_log", "D", "out_proj.weight"})
      want.insert(b + "mixer." + t);
  }
  CHECK(names == want);
  CHECK(lay.at("blocks.0.mixer.in_proj.weight").shape == std::vector<int64_t>{24, 6});
  CHECK(lay.at("blocks.0.mixer.x_proj.weight").shape == std::vector<int64_t>{1 + 6, 12});  // R = ⌈6/16⌉ = 1
  CHECK(lay.at("blocks.0.mixer.A_log").shape == std::vector<int64_t>{12, 3});
  CHECK(lay.at("blocks.0.mixer.conv1d.weight").shape == std::vector<int64_t>{12, 4});
  CHECK(lay.at("blocks.0.mixer.A_log").decay == false);
  CHECK(lay.at("blocks.0.mixer.x_proj.weight").decay == true);
  // norm: layer adds the biases; final_norm: false removes ln_f
  ModelConfig l = c;
  l.set("norm", "layer");
  l.set("final_norm", "false");
  CHECK(ParamLayout(l).find("blocks.1.ln1.bias") != nullptr);
  CHECK(ParamLayout(l).find("ln_f.weight") == nullptr);
  // the YAML: only mamba's keys, in linear-rnn.md's order, every one resolved
  CHECK(c.to_yaml() ==
        "vocab: 5\narch: mamba\nlayers: 2\nd_model: 6\nmax_len: 32\nd_state: 3\nd_conv: 4\nexpand: 2\ndt_rank: 1\n"
        "eigenvalues: positive\nnorm: rms\nfinal_norm: true\ninit: default\n");
  CHECK(ModelConfig::from_yaml(c.to_yaml()) == c);
  // keys that do not apply are errors when stated
  ModelConfig bad;
  CHECK_THROWS_WITH(bad.apply_yaml(YAML::Load("{arch: mamba, heads: 4}")),
                    Catch::Contains("heads") && Catch::Contains("does not apply under arch mamba"));
  ModelConfig bad2;
  CHECK_THROWS_WITH(bad2.apply_yaml(YAML::Load("{arch: lstm, d_state: 4}")), Catch::Contains("d_state"));
  ModelConfig bad3;
  CHECK_THROWS_WITH(bad3.set("eigenvalues", "negative"), Catch::Contains("positive, signed"));
}
