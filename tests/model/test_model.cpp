// The model as a whole: bad input errors, init statistics, bit-identical training for 1 and 2
// threads, and results that do not depend on earlier calls' shapes.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <cstring>

#include "helpers.hpp"
#include "model/model.hpp"
#include "model/optim.hpp"

using namespace srbench::model;
using srbench::test::Batch;

TEST_CASE("model: bad input is a ModelError that says what and where", "[model][errors]") {
  const ModelConfig cfg = srbench::test::tiny_config(Position::Learned, Norm::Layer, Activation::Gelu);
  Model m(cfg);
  m.init(0);
  std::vector<int32_t> tok = {0, 1, 2, 3, 4, 5}, tgt = {1, 2, 3, 4, 5, -1};
  CHECK_NOTHROW(m.forward_backward(tok.data(), tgt.data(), 2, 3, true));
  tok[4] = 7;
  CHECK_THROWS_AS(m.forward(tok.data(), tgt.data(), 2, 3), ModelError);
  CHECK_THROWS_WITH(m.forward(tok.data(), tgt.data(), 2, 3),
                    Catch::Contains("token id 7") && Catch::Contains("example 1, position 1") &&
                        Catch::Contains("[0, 7)"));
  tok[4] = -1;
  CHECK_THROWS_WITH(m.forward(tok.data(), tgt.data(), 2, 3), Catch::Contains("token id -1"));
  tok[4] = 4;
  tgt[2] = 7;
  CHECK_THROWS_WITH(m.forward(tok.data(), tgt.data(), 2, 3), Catch::Contains("target 7"));
  tgt[2] = -2;
  CHECK_THROWS_WITH(m.forward(tok.data(), tgt.data(), 2, 3), Catch::Contains("target -2"));
  tgt[2] = 3;
  std::vector<int32_t> long_tok(9, 0), long_tgt(9, 0);
  CHECK_THROWS_WITH(m.forward(long_tok.data(), long_tgt.data(), 1, 9),
                    Catch::Contains("length 9") && Catch::Contains("max_len 8"));
  CHECK_THROWS_WITH(m.forward(tok.data(), tgt.data(), 0, 3), Catch::Contains("B=0"));
  CHECK_THROWS_WITH(m.forward_backward(tok.data(), nullptr, 2, 3, true), Catch::Contains("targets"));
  const std::vector<int32_t> lengths = {3, 4}, input_lengths = {0, 2};
  CHECK_THROWS_WITH(m.forward(tok.data(), tgt.data(), 2, 3, {lengths.data(), nullptr}),
                    Catch::Contains("the length 4 of example 1 is outside [1, 3]"));
  CHECK_THROWS_WITH(m.forward(tok.data(), tgt.data(), 2, 3, {nullptr, input_lengths.data()}),
                    Catch::Contains("the input length 0 of example 0 is outside [1, 3]"));
  ModelConfig bad = cfg;
  bad.heads = 3;
  CHECK_THROWS_WITH(Model(bad), Catch::Contains("model.d_model"));
  CHECK_THROWS_WITH(m.param("blocks.0.ln1.gain"), Catch::Contains("blocks.0.ln1.gain"));
}

TEST_CASE("model: no scored position gives loss 0 and no gradient", "[model]") {
  const ModelConfig cfg = srbench::test::tiny_config(Position::None, Norm::Rms, Activation::Relu);
  Model m(cfg);
  m.init(0);
  std::vector<int32_t> tok = {0, 1, 2}, tgt = {-1, -1, -1};
  m.zero_grads();
  CHECK(m.forward_backward(tok.data(), tgt.data(), 1, 3, true) == 0.0f);
  CHECK(m.scored() == 0);
  for (size_t i = 0; i < m.num_params(); ++i) REQUIRE(m.grads()[i] == 0.0f);
  CHECK(m.forward(tok.data(), nullptr, 1, 3) == 0.0f);  // logits only
}

TEST_CASE("model: init as model.md says, and a function of the seed", "[model][init]") {
  ModelConfig cfg;
  cfg.vocab = 50;
  cfg.layers = 4;
  cfg.d_model = 64;
  cfg.heads = 4;
  Model a(cfg), b(cfg), c(cfg);
  a.init(42);
  b.init(42);
  c.init(43);
  CHECK(std::memcmp(a.params(), b.params(), a.num_params() * sizeof(float)) == 0);
  CHECK(std::memcmp(a.params(), c.params(), a.num_params() * sizeof(float)) != 0);
  auto stats = [&](std::string_view name) {
    const auto s = a.param(name);
    double m = 0, v = 0;
    for (float x : s) m += x;
    m /= s.size();
    for (float x : s) v += (x - m) * (x - m);
    return std::pair{m, std::sqrt(v / (s.size() - 1))};
  };
  const double resid = 0.02 / std::sqrt(8.0);
  CHECK(stats("tok_emb").second == Approx(0.02).epsilon(0.05));
  CHECK(stats("pos_emb").second == Approx(0.02).epsilon(0.05));
  CHECK(stats("blocks.1.attn.q.weight").second == Approx(0.02).epsilon(0.05));
  CHECK(stats("blocks.1.mlp.fc.weight").second == Approx(0.02).epsilon(0.05));
  CHECK(stats("head.weight").second == Approx(0.02).epsilon(0.05));
  CHECK(stats("blocks.2.attn.o.weight").second == Approx(resid).epsilon(0.05));
  CHECK(stats("blocks.3.mlp.proj.weight").second == Approx(resid).epsilon(0.05));
  CHECK(std::abs(stats("blocks.1.mlp.fc.weight").first) < 0.002);
  for (float x : a.param("blocks.0.attn.q.bias")) CHECK(x == 0.0f);
  for (float x : a.param("head.bias")) CHECK(x == 0.0f);
  for (float x : a.param("blocks.3.ln2.weight")) CHECK(x == 1.0f);
  for (float x : a.param("blocks.3.ln2.bias")) CHECK(x == 0.0f);
  for (float x : a.param("ln_f.weight")) CHECK(x == 1.0f);
}

namespace {

// Losses of `steps` training steps, and the final parameters, with `threads` OpenMP threads.
std::pair<std::vector<float>, std::vector<float>> train(const ModelConfig& cfg, int threads, int steps) {
  return srbench::test::train_with_threads(cfg, threads, steps, [&](int s) {
    Batch b = srbench::test::random_batch(16, 20, cfg.vocab, 100 + s);
    for (size_t i = 0; i < b.tokens.size(); ++i)  // learnable: predict the current token
      if (b.targets[i] != kNotScored) b.targets[i] = b.tokens[i];
    return b;
  });
}

}  // namespace

TEST_CASE("model: training is bit-identical with 1 and 2 threads", "[model][threads][training]") {
  for (auto pos : {Position::Learned, Position::Rope, Position::Alibi}) {
    ModelConfig cfg;
    cfg.vocab = 11;
    cfg.layers = 2;
    cfg.d_model = 48;  // 3d = 144 output features: three weight-gradient chunks
    cfg.heads = 4;
    cfg.max_len = 32;
    cfg.position = pos;
    INFO(to_string(pos));
    const auto one = train(cfg, 1, 10);  // 16·20 = 320 rows: five row chunks
    const auto two = train(cfg, 2, 10);
    REQUIRE(one.first.size() == 10);
    CHECK(std::memcmp(one.first.data(), two.first.data(), 10 * sizeof(float)) == 0);
    CHECK(std::memcmp(one.second.data(), two.second.data(), one.second.size() * sizeof(float)) == 0);
    CHECK(one.first.back() < one.first.front());  // it trains
  }
}

TEST_CASE("model: results do not depend on the shapes of earlier calls", "[model]") {
  const ModelConfig cfg = srbench::test::tiny_config(Position::Alibi, Norm::Layer, Activation::Gelu);
  Model fresh(cfg), used(cfg);
  fresh.init(3);
  used.init(3);
  const Batch big = srbench::test::random_batch(4, 8, cfg.vocab, 1);
  const Batch small = srbench::test::random_batch(2, 3, cfg.vocab, 2);
  used.zero_grads();
  used.forward_backward(big.tokens.data(), big.targets.data(), 4, 8, true);
  used.zero_grads();
  fresh.zero_grads();
  const float lu = used.forward_backward(small.tokens.data(), small.targets.data(), 2, 3, true);
  const float lf = fresh.forward_backward(small.tokens.data(), small.targets.data(), 2, 3, true);
  CHECK(lu == lf);
  CHECK(std::memcmp(used.grads(), fresh.grads(), used.num_params() * sizeof(float)) == 0);
  CHECK(std::memcmp(used.logits(), fresh.logits(), 2 * 3 * cfg.vocab * sizeof(float)) == 0);
}

TEST_CASE("model: diagnostics views of the last call (attention weights, values, block outputs)", "[model][views]") {
  // BasicModel<double>, layer norm, learned positions: the views checked with plain loops.
  const ModelConfig cfg = srbench::test::tiny_config(Position::Learned, Norm::Layer, Activation::Gelu);
  BasicModel<double> m(cfg);
  srbench::test::randomize(m, 4);
  CHECK(m.has_attention());
  CHECK_THROWS_WITH(m.attention(0), Catch::Contains("no forward call yet"));
  CHECK_THROWS_WITH(m.block_output(0), Catch::Contains("no forward call yet"));
  const Batch batch = srbench::test::random_batch(3, 5, cfg.vocab, 9);
  const int B = batch.B, T = batch.T, C = cfg.d_model, H = cfg.heads, V = cfg.vocab, L = cfg.layers;
  m.forward(batch.tokens.data(), batch.targets.data(), B, T);
  CHECK_THROWS_WITH(m.values(L), Catch::Contains("layer 2 is outside [0, 2)"));
  CHECK_THROWS_WITH(m.block_output(-1), Catch::Contains("layer -1"));
  CHECK(m.values_stride() == 3 * C);

  auto layernorm = [&](const double* x, const std::string& prefix) {  // one row
    const auto w = m.param(prefix + ".weight"), b = m.param(prefix + ".bias");
    double mean = 0, var = 0;
    for (int c = 0; c < C; ++c) mean += x[c] / C;
    for (int c = 0; c < C; ++c) var += (x[c] - mean) * (x[c] - mean) / C;
    std::vector<double> y(C);
    for (int c = 0; c < C; ++c) y[c] = (x[c] - mean) / std::sqrt(var + 1e-5) * w[c] + b[c];
    return y;
  };
  auto linear = [&](const std::vector<double>& x, const std::string& prefix, int row) {  // one output feature
    const auto W = m.param(prefix + ".weight"), b = m.param(prefix + ".bias");
    double s = b[row];
    for (size_t i = 0; i < x.size(); ++i) s += W[row * x.size() + i] * x[i];
    return s;
  };
  const auto tok = m.param("tok_emb"), pos = m.param("pos_emb");
  double worst = 0;
  for (int n = 0; n < B * T; ++n) {
    // values(0): block 0's v = LN1(tok_emb[x] + pos_emb[t])·Wvᵀ + bv
    std::vector<double> h(C);
    for (int c = 0; c < C; ++c) h[c] = tok[batch.tokens[n] * C + c] + pos[(n % T) * C + c];
    const auto a = layernorm(h.data(), "blocks.0.ln1");
    for (int c = 0; c < C; ++c)
      worst = std::max(worst, std::abs(m.values(0)[n * m.values_stride() + c] - linear(a, "blocks.0.attn.v", c)));
    // block_output(L−1) is what ln_f and the head read: logits = head(LN_f(block_output))
    const auto f = layernorm(m.block_output(L - 1) + n * C, "ln_f");
    for (int v = 0; v < V; ++v) worst = std::max(worst, std::abs(m.logits()[n * V + v] - linear(f, "head", v)));
  }
  CHECK(worst < 1e-12);
  // attention(l): rows of α, causal, summing to 1 under softmax; one layer's block differs from the other's
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < B * H * T; ++r) {
      const int i = r % T;
      const double* row = m.attention(l) + static_cast<int64_t>(r) * T;
      double sum = 0;
      for (int j = 0; j < T; ++j) {
        if (j > i) REQUIRE(row[j] == 0.0);
        sum += row[j];
      }
      REQUIRE(std::abs(sum - 1.0) < 1e-12);
    }
  CHECK(std::memcmp(m.attention(0), m.attention(1), sizeof(double) * B * H * T * T) != 0);
}
