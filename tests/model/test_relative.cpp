// Transformer-XL's relative positions (`position: relative`, chomsky.md §7.3): the parameters as
// the page names them (shapes, weight decay, group, init N(0, 0.02)), the combinations it leaves
// undefined as config errors, and a hand-worked one-query example of the position term. The
// forward pass against the plain reference and the gradients against finite differences, under
// both `causal` settings, are in test_gradients.cpp and test_bidirectional.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "model/params.hpp"
#include "tests/model/helpers.hpp"

using namespace srbench::model;

namespace {

ModelConfig relative_config(bool causal) {
  ModelConfig c = srbench::test::tiny_config(Position::Relative, Norm::Layer, Activation::Gelu);
  c.causal = causal;
  return c;
}

}  // namespace

TEST_CASE("relative: u, v and W_R per layer, as chomsky.md §7.3 names them", "[relative]") {
  ModelConfig c = relative_config(true);
  c.d_model = 12;
  c.heads = 3;
  c.layers = 3;
  const ParamLayout lay(c);
  CHECK(lay.find("pos_emb") == nullptr);
  for (int l = 0; l < c.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".attn.rel.";
    INFO(b);
    CHECK(lay.at(b + "u").shape == std::vector<int64_t>{3, 4});
    CHECK(lay.at(b + "v").shape == std::vector<int64_t>{3, 4});
    CHECK(lay.at(b + "proj.weight").shape == std::vector<int64_t>{12, 12});
    CHECK(lay.find(b + "proj.bias") == nullptr);
    // weight decay on W_R only (u and v are biases); all three in the main group
    CHECK_FALSE(lay.at(b + "u").decay);
    CHECK_FALSE(lay.at(b + "v").decay);
    CHECK(lay.at(b + "proj.weight").decay);
    for (const char* n : {"u", "v", "proj.weight"}) CHECK(lay.at(b + n).group == ParamGroup::Main);
  }
  // without relative positions none of them
  c.position = Position::Alibi;
  CHECK(ParamLayout(c).find("blocks.0.attn.rel.u") == nullptr);
}

TEST_CASE("relative: u, v and W_R start N(0, 0.02)", "[relative]") {
  ModelConfig c = relative_config(false);
  c.d_model = 64;
  c.heads = 4;
  c.layers = 4;
  Model m(c);
  m.init(3);
  for (const char* n : {"u", "v", "proj.weight"}) {
    std::vector<double> all;
    for (int l = 0; l < c.layers; ++l)
      for (float x : m.param("blocks." + std::to_string(l) + ".attn.rel." + n)) all.push_back(x);
    double mean = 0, var = 0;
    for (double x : all) mean += x / all.size();
    for (double x : all) var += (x - mean) * (x - mean) / all.size();
    INFO(n << ": " << all.size() << " values, mean " << mean << ", sd " << std::sqrt(var));
    // 256 values for u, v (sd of the sample sd ≈ 0.02/√512 ≈ 0.0009), 16384 for W_R
    CHECK(std::abs(mean) < 5 * 0.02 / std::sqrt(static_cast<double>(all.size())));
    CHECK(std::abs(std::sqrt(var) - 0.02) < 0.004);
  }
}

TEST_CASE("relative: spline-kernel attention and an odd d_model are config errors",
          "[relative][config][errors][splines]") {
  ModelConfig c = relative_config(false);
  c.validate();
  c.attention = Attention::SplineScore;  // scores to add the terms to: defined
  c.validate();
  c.attention = Attention::SplineKernel;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.position") && Catch::Contains("relative") &&
                                      Catch::Contains("model.attention") && Catch::Contains("spline-kernel"));
  CHECK_THROWS_AS(Model(c), ModelError);
  c.causal = true;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("relative") && Catch::Contains("spline-kernel"));
  c.attention = Attention::Softmax;
  c.d_model = 5;  // R_r's sine and cosine halves need an even width
  c.heads = 1;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.position") && Catch::Contains("relative needs an even d_model"));
  CHECK(ModelConfig::from_yaml("{position: relative}").position == Position::Relative);
}

TEST_CASE("relative: a hand-worked query, and r = i − j under both settings", "[relative][reference]") {
  // One layer, d = 2, one head (d_h = 2): R_r = [sin r, cos r] (ω_0 = 1). With every q, k weight and
  // bias 0 except the query bias, q_i = (1, 0) for every i and k_j = 0: the content term is
  // (q_i + u)·k_j = 0, and with W_R = I, v = 0 the position term is q_i·R_{i−j} = sin(i − j), so
  // s_ij = sin(i − j)/√2. Query 1 of a bidirectional row of length 3 reads keys 0, 1, 2 with
  // scores sin 1, sin 0, sin(−1) over √2; a causal query 2 reads sin 2, sin 1, sin 0 over √2.
  for (bool causal : {false, true}) {
    ModelConfig c = relative_config(causal);
    c.layers = 1;
    c.d_model = 2;
    c.heads = 1;
    c.vocab = 3;
    Model m(c);
    for (size_t i = 0; i < m.num_params(); ++i) m.params()[i] = 0.0f;
    m.param("blocks.0.attn.q.bias")[0] = 1.0f;
    auto w = m.param("blocks.0.attn.rel.proj.weight");
    w[0] = w[3] = 1.0f;
    const std::vector<int32_t> tokens = {0, 1, 2}, targets = {0, 1, 2};
    m.forward(tokens.data(), targets.data(), 1, 3);
    const int i = causal ? 2 : 1;
    std::vector<double> s;
    for (int j = 0; j < 3; ++j) s.push_back(std::sin(static_cast<double>(i - j)) / std::sqrt(2.0));
    double z = 0;
    for (double x : s) z += std::exp(x);
    INFO((causal ? "causal" : "bidirectional"));
    for (int j = 0; j < 3; ++j) CHECK(m.attention(0)[i * 3 + j] == Approx(std::exp(s[j]) / z).epsilon(1e-6));
    // u shifts every key's score of a row by u·k_j = 0 here; v adds v·R_{i−j}: v = (0, 1) adds cos(i − j)
    m.param("blocks.0.attn.rel.v")[1] = 1.0f;
    m.forward(tokens.data(), targets.data(), 1, 3);
    z = 0;
    for (int j = 0; j < 3; ++j) s[j] += std::cos(static_cast<double>(i - j)) / std::sqrt(2.0), z += std::exp(s[j]);
    for (int j = 0; j < 3; ++j) CHECK(m.attention(0)[i * 3 + j] == Approx(std::exp(s[j]) / z).epsilon(1e-6));
  }
}
