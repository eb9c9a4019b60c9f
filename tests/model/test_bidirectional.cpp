// The bidirectional transformer (`causal: false`, chomsky.md §7.3): every position attends to
// every position of its own example, the keys at or past a row's length masked, ALiBi symmetric.
// Checked against the plain reference (helpers.hpp), central finite differences on every element
// of every tensor, each example of a mixed-length batch against itself alone, padding tokens that
// change nothing, 1 vs 2 threads, and the key in configs and checkpoints.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "model/checkpoint.hpp"
#include "model/model.hpp"
#include "model/optim.hpp"
#include "tests/model/fd_check.hpp"
#include "tests/model/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::model;
using srbench::test::Batch;

namespace {

const std::vector<Position>& kPositions = srbench::test::kAllPositions;

// A variant beyond position and norm: the attention kind, or LIMe.
struct Variant {
  const char* name;
  Attention attention = Attention::Softmax;
  bool lime = false;
};
const std::vector<Variant> kVariants = {{"softmax"},
                                        {"spline-score", Attention::SplineScore},
                                        {"spline-kernel", Attention::SplineKernel},
                                        {"lime", Attention::Softmax, true}};

ModelConfig bidirectional(Position pos, Norm norm = Norm::Layer, const Variant& v = kVariants[0]) {
  ModelConfig c = srbench::test::tiny_config(pos, norm, Activation::Gelu);
  c.causal = false;
  c.attention = v.attention;
  if (v.lime) c.lime = Lime::Static, c.layers = 3;
  for (SplineConfig* sc : {&c.mlp_spline, &c.attn_spline}) sc->keypoints = 9, sc->range = 2.0;
  return c;
}
bool defined(const ModelConfig& c) {  // alibi and relative: no scores to bias under spline-kernel attention
  return !((c.position == Position::Alibi || c.position == Position::Relative) &&
           c.attention == Attention::SplineKernel);
}

std::string label(const ModelConfig& c) {
  return std::string(to_string(c.position)) + "/" + to_string(c.norm) + "/" + to_string(c.attention) +
         (c.lime == Lime::Static ? "/lime" : "");
}

// The key bias shifts every score of a row by the same amount (q_i·b_k, for every key the row
// reads): softmax ignores it unless RoPE rotates the keys differently at each position.
auto key_bias_zero(const ModelConfig& c) {
  return [c](const std::string& name) {
    return name.find("attn.k.bias") != std::string::npos && c.attention == Attention::Softmax &&
           c.position != Position::Rope;
  };
}

// Random parameters and smooth splines. Under spline-score attention the query and key weights
// are half as large and relative's u, v and W_R a third, so that the scores stay mostly inside
// the spline's range (past it, constant extrapolation leaves a layer without gradient).
template <typename S>
void randomize_all(BasicModel<S>& m, uint64_t seed) {
  srbench::test::randomize(m, seed);
  srbench::test::randomize_splines(m, seed + 1);
  if (m.config().attention != Attention::SplineScore) return;
  for (const auto& p : m.layout().tensors()) {
    const bool qk = p.name.find("attn.q.weight") != std::string::npos || p.name.find("attn.k.weight") != std::string::npos;
    const bool rel = p.name.find("attn.rel.") != std::string::npos;
    if (!qk && !rel) continue;
    for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] /= rel ? 3 : 2;
  }
}

// Example r of a batch alone: its real positions only (B = 1, T = its length).
Batch alone(const Batch& b, int r) {
  const int len = b.lengths[static_cast<size_t>(r)];
  Batch one{1, len, {}, {}, {}};
  one.tokens.assign(b.tokens.begin() + r * b.T, b.tokens.begin() + r * b.T + len);
  one.targets.assign(b.targets.begin() + r * b.T, b.targets.begin() + r * b.T + len);
  return one;
}

int64_t scored(const Batch& b) {
  return std::count_if(b.targets.begin(), b.targets.end(), [](int32_t t) { return t >= 0; });
}

}  // namespace

TEST_CASE("bidirectional: forward matches the plain reference; no weight on padding keys",
          "[bidirectional][reference][padding]") {
  for (auto pos : kPositions)
    for (auto norm : {Norm::Layer, Norm::Rms}) {
      const ModelConfig cfg = bidirectional(pos, norm);
      INFO(label(cfg));
      BasicModel<double> m(cfg);
      srbench::test::randomize(m, 11);
      for (const Batch& batch : {srbench::test::mixed_length_batch({8, 3, 1, 6}, 8, cfg.vocab, 5),
                                 srbench::test::random_batch(2, 7, cfg.vocab, 6),  // no lengths: T long
                                 srbench::test::random_batch(1, 1, cfg.vocab, 7)}) {
        const double loss = m.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, batch.rows());
        const auto ref = srbench::test::reference_forward(m, batch);
        double worst = 0;
        for (size_t i = 0; i < ref.logits.size(); ++i) worst = std::max(worst, std::abs(m.logits()[i] - ref.logits[i]));
        CHECK(worst < 1e-12);
        CHECK(loss == Approx(ref.loss).epsilon(1e-12));
        // attention(l): each query's weights sum to 1 over its example's keys, 0 past them
        const int T = batch.T, H = cfg.heads;
        for (int l = 0; l < cfg.layers; ++l)
          for (int r = 0; r < batch.B * H * T; ++r) {
            const int len = batch.lengths.empty() ? T : batch.lengths[static_cast<size_t>(r / (H * T))];
            const double* row = m.attention(l) + static_cast<int64_t>(r) * T;
            double sum = 0;
            for (int j = 0; j < T; ++j) {
              if (j >= len) REQUIRE(row[j] == 0.0);
              sum += row[j];
            }
            REQUIRE(std::abs(sum - 1.0) < 1e-12);
          }
      }
    }
}

TEST_CASE("bidirectional: gradients of every parameter match central finite differences, padding masked",
          "[bidirectional][gradients][padding]") {
  // Double precision, h = 1e-5 (1e-6 for the piecewise-linear spline attentions, whose probes
  // that cross a keypoint are skipped: fd_check.hpp); a batch of lengths 6, 4 and 1.
  srbench::test::FdReport worst;
  std::string worst_where;
  int64_t checked = 0, skipped = 0;
  for (const Variant& v : kVariants)
    for (auto pos : kPositions)
      for (auto norm : {Norm::Layer, Norm::Rms}) {
        if (v.attention != Attention::Softmax && norm == Norm::Rms) continue;  // the spline kinds: layer norm only
        if (v.lime && (norm == Norm::Rms || pos == Position::Sinusoidal)) continue;
        const ModelConfig cfg = bidirectional(pos, norm, v);
        if (!defined(cfg)) continue;
        INFO(label(cfg));
        BasicModel<double> m(cfg);
        randomize_all(m, 3);
        const Batch batch = srbench::test::mixed_length_batch({6, 4, 1}, 6, cfg.vocab, 7);
        const bool spline = cfg.attention != Attention::Softmax;
        const auto r = srbench::test::check_finite_differences(m, batch, spline ? 1e-6 : 1e-5, spline,
                                                               key_bias_zero(cfg));
        checked += r.checked, skipped += r.skipped;
        if (r.worst > worst.worst) worst = r, worst_where = label(cfg) + " " + r.where;
      }
  std::printf("bidirectional finite differences: worst |analytic - numeric| = %.3g (%s); %lld of %lld elements "
              "skipped (keypoint inside the probe)\n",
              worst.worst, worst_where.c_str(), static_cast<long long>(skipped), static_cast<long long>(checked));
}

TEST_CASE("bidirectional: each example of a mixed-length batch gets exactly the result it gets alone",
          "[bidirectional][padding]") {
  // Lengths 8, 5 and 1, padded to 8 with random tokens. In float the logits at the real positions
  // are bit-identical to each example's own (B = 1, T = its length); in double the loss and every
  // gradient of the batch equal the examples' own, weighted by their scored positions (the batch
  // loss is the mean over all of them).
  const std::vector<int32_t> lengths = {8, 5, 1};
  for (const Variant& v : kVariants)
    for (auto pos : kPositions) {
      const ModelConfig cfg = bidirectional(pos, Norm::Layer, v);
      if (!defined(cfg)) continue;
      INFO(label(cfg));
      const Batch batch = srbench::test::mixed_length_batch(lengths, 8, cfg.vocab, 21);
      {
        Model m(cfg);
        randomize_all(m, 4);
        m.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, batch.rows());
        const std::vector<float> together(m.logits(), m.logits() + batch.B * batch.T * cfg.vocab);
        for (int r = 0; r < batch.B; ++r) {
          const Batch one = alone(batch, r);
          m.forward(one.tokens.data(), one.targets.data(), 1, one.T);
          for (int64_t i = 0; i < static_cast<int64_t>(one.T) * cfg.vocab; ++i)
            REQUIRE(m.logits()[i] == together[static_cast<size_t>(r) * batch.T * cfg.vocab + i]);
        }
      }
      BasicModel<double> m(cfg);
      randomize_all(m, 4);
      m.zero_grads();
      const double loss = m.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true,
                                             batch.rows());
      const std::vector<double> grads(m.grads(), m.grads() + m.num_params());
      std::vector<double> sum(m.num_params(), 0.0);
      double loss_sum = 0;
      for (int r = 0; r < batch.B; ++r) {
        const Batch one = alone(batch, r);
        const double w = static_cast<double>(scored(one)) / static_cast<double>(scored(batch));
        m.zero_grads();
        loss_sum += w * m.forward_backward(one.tokens.data(), one.targets.data(), 1, one.T, true);
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += w * m.grads()[i];
      }
      CHECK(loss == Approx(loss_sum).epsilon(1e-13));
      for (const auto& p : m.layout().tensors()) {
        INFO(p.name);
        double mx = 0, err = 0;
        for (size_t i = p.offset; i < p.offset + p.size; ++i)
          mx = std::max(mx, std::abs(sum[i])), err = std::max(err, std::abs(grads[i] - sum[i]));
        CHECK(err <= 1e-13 * std::max(mx, 1.0));
      }
    }
}

TEST_CASE("bidirectional: padding tokens and earlier calls change nothing; a causal model ignores the lengths",
          "[bidirectional][padding]") {
  // A batch of lengths 7, 2, 1, 5 gives bit for bit the same loss, gradients and logits at the
  // real positions (float): with other tokens at its padding positions; in a model that first ran
  // a batch of the same shape without lengths (whose every key was read: nothing of it may remain
  // in the workspace). A causal model gives the same results with the lengths as without them.
  const std::vector<int32_t> lengths = {7, 2, 1, 5};
  for (const Variant& v : kVariants)
    for (auto pos : kPositions)
      for (bool causal : {false, true}) {
        ModelConfig cfg = bidirectional(pos, Norm::Layer, v);
        cfg.causal = causal;
        if (!defined(cfg)) continue;
        INFO(label(cfg) << (causal ? " causal" : ""));
        Model fresh(cfg), used(cfg);
        randomize_all(fresh, 8);
        randomize_all(used, 8);
        const Batch a = srbench::test::mixed_length_batch(lengths, 7, cfg.vocab, 31);
        Batch b = a;  // other tokens at the padding positions; causal: no lengths at all
        for (int r = 0; r < b.B; ++r)
          for (int t = lengths[static_cast<size_t>(r)]; t < b.T; ++t) {
            int32_t& x = b.tokens[static_cast<size_t>(r) * b.T + t];
            x = (x + 3) % cfg.vocab;
          }
        if (causal) b = a, b.lengths.clear();
        auto run = [&](Model& m, const Batch& batch) {
          m.zero_grads();
          const float loss =
              m.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true, batch.rows());
          std::vector<float> out(m.grads(), m.grads() + m.num_params());
          for (int r = 0; r < batch.B; ++r)  // the logits at the real positions
            for (int64_t i = 0; i < static_cast<int64_t>(lengths[static_cast<size_t>(r)]) * cfg.vocab; ++i)
              out.push_back(m.logits()[static_cast<int64_t>(r) * batch.T * cfg.vocab + i]);
          out.push_back(loss);
          return out;
        };
        const auto want = run(fresh, a);
        Batch full = srbench::test::random_batch(a.B, a.T, cfg.vocab, 32);
        run(used, full);
        for (const Batch* batch : {&a, static_cast<const Batch*>(&b)}) {
          const auto got = run(used, *batch);
          CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
        }
      }
}

namespace {

// Losses of `steps` AdamW steps on batches of 16 rows of lengths 1 … 20, and the final parameters.
std::pair<std::vector<float>, std::vector<float>> train_mixed(const ModelConfig& cfg, int threads, int steps) {
  return srbench::test::train_with_threads(cfg, threads, steps, [&](int s) {
    std::vector<int32_t> lengths;
    for (int r = 0; r < 16; ++r) lengths.push_back(1 + (r * 7 + s) % 20);
    Batch b = srbench::test::mixed_length_batch(lengths, 20, cfg.vocab, 100 + s);
    for (size_t i = 0; i < b.tokens.size(); ++i)  // learnable: predict the current token
      if (b.targets[i] != kNotScored) b.targets[i] = b.tokens[i];
    return b;
  });
}

}  // namespace

TEST_CASE("bidirectional: training is bit-identical with 1 and 2 threads", "[bidirectional][threads][training]") {
  for (const Variant& v : kVariants)
    for (auto pos : {Position::Learned, Position::Rope, Position::Alibi, Position::Relative}) {
      ModelConfig cfg;
      cfg.vocab = 11;
      cfg.layers = v.lime ? 3 : 2;
      cfg.d_model = 48;  // 16·4 pairs of 20×20 scores over 12 features: the attention loops run on two threads
      cfg.heads = 4;
      cfg.max_len = 32;
      cfg.position = pos;
      cfg.attention = v.attention;
      cfg.lime = v.lime ? Lime::Static : Lime::None;
      cfg.causal = false;
      if (!defined(cfg)) continue;
      INFO(label(cfg));
      const auto one = train_mixed(cfg, 1, 8), two = train_mixed(cfg, 2, 8);
      CHECK(std::memcmp(one.first.data(), two.first.data(), one.first.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(one.second.data(), two.second.data(), one.second.size() * sizeof(float)) == 0);
      CHECK(one.first.back() < one.first.front());  // it trains
    }
}

TEST_CASE("bidirectional: `causal` is a model key; its default leaves configs and checkpoints as they were",
          "[bidirectional][checkpoint][config]") {
  ModelConfig c = srbench::test::tiny_config(Position::Alibi, Norm::Layer, Activation::Gelu);
  const std::string causal_yaml = c.to_yaml();
  CHECK_THAT(causal_yaml, !Catch::Contains("causal"));
  c.set("causal", "true");
  CHECK(c.to_yaml() == causal_yaml);
  c.set("causal", "false");
  CHECK_FALSE(c.causal);
  const std::string y = c.to_yaml();
  CHECK_THAT(y, Catch::Contains("causal: false"));
  CHECK(ModelConfig::from_yaml(y) == c);
  CHECK_FALSE(ModelConfig::from_yaml(y) == ModelConfig::from_yaml(causal_yaml));
  CHECK(ModelConfig::from_yaml("{causal: false}").causal == false);
  CHECK_THROWS_WITH(c.set("causal", "sometimes"),
                    Catch::Contains("model.causal") && Catch::Contains("expected true or false"));
  CHECK(std::find(ModelConfig::keys().begin(), ModelConfig::keys().end(), "causal") != ModelConfig::keys().end());

  srbench::test::TempDir dir;
  Model m(c);
  m.init(5);
  save_checkpoint(m, dir.file("bidirectional.h5"));
  const Model back = load_checkpoint(dir.file("bidirectional.h5"));
  CHECK_FALSE(back.config().causal);
  CHECK(back.config() == c);
  CHECK(std::memcmp(back.params(), m.params(), m.num_params() * sizeof(float)) == 0);
}
