// The forward-only evaluation path (BasicModel::infer, attention.hpp's *_infer kernels): groups
// of examples through every block, attention in query strips. Its logits and loss must equal
// forward()'s bit for bit in float — every position scheme × causal / bidirectional × every
// attention kind and LIMe, lengths that are not multiples of the strip (kAttentionStripRows),
// batches that span more than one group — and agree to double rounding in double (where the
// products are Eigen's, whose blocking depends on the shapes). Also: the same bits at 1 and 2
// threads, the activation views refused after infer, and infer's allocations linear in T.
#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/attention.hpp"
#include "model/model.hpp"
#include "tests/model/helpers.hpp"

using namespace srbench::model;

namespace {

const std::vector<Position>& kPositions = srbench::test::kAllPositions;
// The attention kind, LIMe and the MLP's activation of a case.
struct Variant {
  const char* name;
  Attention attention;
  Activation activation;
  bool lime;
};
const std::vector<Variant> kVariants = {{"softmax", Attention::Softmax, Activation::Gelu, false},
                                        {"spline-score", Attention::SplineScore, Activation::Gelu, false},
                                        {"spline-kernel", Attention::SplineKernel, Activation::Gelu, false},
                                        {"lime", Attention::Softmax, Activation::Gelu, true},
                                        {"lime, spline MLP", Attention::SplineScore, Activation::Spline, true}};

ModelConfig config_for(Position pos, bool causal, const Variant& v, int max_len) {
  ModelConfig c = srbench::test::tiny_config(pos, Norm::Layer, v.activation);
  c.d_model = 16;
  c.heads = 2;
  c.vocab = 9;
  c.max_len = max_len;
  c.causal = causal;
  c.attention = v.attention;
  if (v.lime) c.lime = Lime::Static, c.layers = 3, c.norm = Norm::Rms;
  for (SplineConfig* sc : {&c.mlp_spline, &c.attn_spline}) sc->keypoints = 9, sc->range = 2.0;
  return c;
}
bool defined(const ModelConfig& c) {  // alibi and relative need scores: not under spline-kernel
  return !((c.position == Position::Alibi || c.position == Position::Relative) &&
           c.attention == Attention::SplineKernel);
}
std::string label(const ModelConfig& c, const Variant& v, int B, int T) {
  return std::string(to_string(c.position)) + (c.causal ? "/causal/" : "/bidirectional/") + v.name +
         " B=" + std::to_string(B) + " T=" + std::to_string(T);
}

// A batch whose rows (bidirectional) have lengths spread over [1, T].
srbench::test::Batch batch_for(const ModelConfig& c, int B, int T, uint64_t seed) {
  srbench::test::Batch b = srbench::test::random_batch(B, T, c.vocab, seed);
  if (!c.causal)
    for (int i = 0; i < B; ++i) b.lengths.push_back(1 + static_cast<int>((seed * 31 + i * 17) % T));
  return b;
}

// The index of the largest logit of each row, and whether the row has a unique largest.
int argmax(const float* row, int V, bool* tied) {
  const int k = static_cast<int>(std::max_element(row, row + V) - row);
  *tied = std::count(row, row + V, row[k]) > 1;
  return k;
}

}  // namespace

TEST_CASE("infer: float logits and loss equal forward's bit for bit, every position × causal × attention × LIMe",
          "[infer]") {
  omp_set_num_threads(1);
  // T = 1; 37 (one strip, not full); 130 (three strips, the last of 2 rows); B·T = 4550 > the
  // 4096 rows of a group: two groups of 31 and 4 examples.
  const std::vector<std::pair<int, int>> shapes = {{3, 1}, {5, 37}, {35, 130}};
  int cases = 0;
  for (Position pos : kPositions)
    for (bool causal : {true, false})
      for (const Variant& v : kVariants) {
        const ModelConfig c = config_for(pos, causal, v, 130);
        if (!defined(c)) continue;
        Model m(c);
        srbench::test::randomize(m, 11);
        for (auto [B, T] : shapes) {
          INFO(label(c, v, B, T));
          const srbench::test::Batch bt = batch_for(c, B, T, 7 + T);
          const float loss_f = m.forward(bt.tokens.data(), bt.targets.data(), B, T, bt.rows());
          const std::vector<float> ref(m.logits(), m.logits() + static_cast<size_t>(B) * T * c.vocab);
          const float loss_i = m.infer(bt.tokens.data(), bt.targets.data(), B, T, bt.rows());
          CHECK(std::memcmp(&loss_i, &loss_f, sizeof(float)) == 0);
          int differ = 0, ties = 0;
          for (size_t n = 0; n < ref.size(); ++n) differ += std::memcmp(&ref[n], m.logits() + n, sizeof(float)) != 0;
          CHECK(differ == 0);
          for (int r = 0; r < B * T; ++r) {  // argmax, the evaluation's prediction, on the untied rows
            bool tied_ref = false, tied_new = false;
            const int a = argmax(ref.data() + static_cast<size_t>(r) * c.vocab, c.vocab, &tied_ref);
            const int b = argmax(m.logits() + static_cast<size_t>(r) * c.vocab, c.vocab, &tied_new);
            ties += tied_ref;
            if (!tied_ref) CHECK(a == b);
          }
          CHECK(ties < B * T / 10 + 1);  // the random model's rows are not degenerate
          ++cases;
        }
      }
  CHECK(cases == (6 * 2 * 5 - 2 * 2) * 3);
}

TEST_CASE("infer: double logits agree with forward's to double rounding", "[infer][precision]") {
  omp_set_num_threads(1);
  // Eigen's double products may sum in another order for a strip than for the whole matrix:
  // each score or mixed value is a sum of at most T = 70 products of O(1) terms, each rounding
  // by ≤ 2^-53 relative; through 2 blocks (norms, softmax, MLP) the logits (|x| ≲ 10) may move by a
  // few hundred ulps, far below 1e-11 — while any real difference (a wrong key, a missing term)
  // moves them by more than 1e-3.
  const int B = 3, T = 70;
  for (Position pos : kPositions)
    for (bool causal : {true, false})
      for (const Variant& v : kVariants) {
        const ModelConfig c = config_for(pos, causal, v, T);
        if (!defined(c)) continue;
        INFO(label(c, v, B, T));
        BasicModel<double> m(c);
        srbench::test::randomize(m, 5);
        const srbench::test::Batch bt = batch_for(c, B, T, 3);
        const double loss_f = m.forward(bt.tokens.data(), bt.targets.data(), B, T, bt.rows());
        const std::vector<double> ref(m.logits(), m.logits() + static_cast<size_t>(B) * T * c.vocab);
        const double loss_i = m.infer(bt.tokens.data(), bt.targets.data(), B, T, bt.rows());
        CHECK(std::abs(loss_i - loss_f) <= 1e-12 * std::abs(loss_f));
        double worst = 0;
        for (size_t n = 0; n < ref.size(); ++n) worst = std::max(worst, std::abs(ref[n] - m.logits()[n]));
        CHECK(worst <= 1e-11);
      }
}

TEST_CASE("infer: the same bits at 1 and 2 threads", "[infer][threads]") {
  const Variant v = kVariants[0];
  for (Position pos : {Position::Learned, Position::Relative, Position::Alibi})
    for (bool causal : {true, false}) {
      const ModelConfig c = config_for(pos, causal, v, 200);
      INFO(label(c, v, 24, 200));
      Model m(c);
      srbench::test::randomize(m, 2);
      const srbench::test::Batch bt = batch_for(c, 24, 200, 1);  // 24·200 rows: two groups
      std::vector<float> out[2];
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        m.infer(bt.tokens.data(), bt.targets.data(), 24, 200, bt.rows());
        out[threads - 1].assign(m.logits(), m.logits() + static_cast<size_t>(24) * 200 * c.vocab);
      }
      omp_set_num_threads(1);
      CHECK(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)) == 0);
    }
}

TEST_CASE("infer: the activation views are refused after it, and back after forward", "[infer][views]") {
  omp_set_num_threads(1);
  const ModelConfig c = config_for(Position::Learned, true, kVariants[0], 16);
  Model m(c);
  m.init(1);
  const srbench::test::Batch bt = batch_for(c, 2, 16, 1);
  m.infer(bt.tokens.data(), bt.targets.data(), 2, 16);
  CHECK_THROWS_WITH(m.attention(0), Catch::Contains("infer") && Catch::Contains("keeps no activations"));
  CHECK_THROWS_WITH(m.block_output(1), Catch::Contains("infer"));
  m.forward(bt.tokens.data(), bt.targets.data(), 2, 16);
  CHECK_NOTHROW(m.attention(0));
  CHECK_NOTHROW(m.values(1));
}
