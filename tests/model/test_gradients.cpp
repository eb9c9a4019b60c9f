// The backward pass against central finite differences (double precision), for every parameter
// tensor, under every position scheme × norm × activation; the forward pass against a plain
// reference written from model.md; and the float model against the double one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "fd_check.hpp"
#include "helpers.hpp"
#include "model/model.hpp"

using namespace srbench::model;
using srbench::test::Batch;

namespace {

const std::vector<Position> kPositions = {Position::Learned, Position::Sinusoidal, Position::Rope, Position::Alibi,
                                          Position::None, Position::Relative};
const std::vector<Norm> kNorms = {Norm::Layer, Norm::Rms};
const std::vector<Activation> kActivations = {Activation::Gelu, Activation::Relu};

std::string label(const ModelConfig& c) {
  return std::string(to_string(c.position)) + "/" + to_string(c.norm) + "/" + to_string(c.activation);
}

}  // namespace

TEST_CASE("model: forward matches a plain reference implementation of model.md", "[model][reference]") {
  for (auto pos : kPositions)
    for (auto norm : kNorms)
      for (auto act : kActivations) {
        const ModelConfig cfg = srbench::test::tiny_config(pos, norm, act);
        INFO(label(cfg));
        BasicModel<double> m(cfg);
        srbench::test::randomize(m, 11);
        for (auto [B, T] : {std::pair{3, 5}, std::pair{1, 1}, std::pair{2, 8}}) {
          const Batch batch = srbench::test::random_batch(B, T, cfg.vocab, 5);
          const double loss = m.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
          const auto ref = srbench::test::reference_forward(m, batch);
          double worst = 0;
          for (size_t i = 0; i < ref.logits.size(); ++i)
            worst = std::max(worst, std::abs(m.logits()[i] - ref.logits[i]));
          CHECK(worst < 1e-12);
          CHECK(loss == Approx(ref.loss).epsilon(1e-12));
        }
      }
}

TEST_CASE("model: gradients of every parameter match central finite differences", "[model][gradients]") {
  // Double precision: with h = 1e-5 the truncation error is O(h²·f''') ~ 1e-10 and the rounding
  // error O(1e-16/h) ~ 1e-11, so analytic and numeric gradients agree to ~1e-9 absolute.
  double worst_all = 0;
  std::string worst_where;
  for (auto pos : kPositions)
    for (auto norm : kNorms)
      for (auto act : kActivations) {
        const ModelConfig cfg = srbench::test::tiny_config(pos, norm, act);
        INFO(label(cfg));
        BasicModel<double> m(cfg);
        srbench::test::randomize(m, 3);
        const Batch batch = srbench::test::random_batch(3, 5, cfg.vocab, 7);
        // Every tensor is exercised: its gradient is not identically zero — except the key bias,
        // which shifts every score of a row equally (softmax is invariant to that) unless RoPE
        // rotates it differently at each position.
        auto zero_in_theory = [&](const std::string& name) {
          return name.find("attn.k.bias") != std::string::npos && pos != Position::Rope;
        };
        const auto r = srbench::test::check_finite_differences(m, batch, 1e-5, false, zero_in_theory);
        if (r.worst > worst_all) worst_all = r.worst, worst_where = label(cfg) + " " + r.where;
      }
  std::printf("finite differences: worst |analytic - numeric| = %.3g (%s)\n", worst_all, worst_where.c_str());
}

TEST_CASE("model: gradients flow into the embedding input: token rows used, untouched rows zero",
          "[model][gradients]") {
  const ModelConfig cfg = srbench::test::tiny_config(Position::Learned, Norm::Layer, Activation::Gelu);
  BasicModel<double> m(cfg);
  srbench::test::randomize(m, 5);
  Batch batch{2, 3, {1, 2, 1, 2, 1, 2}, {2, 1, -1, 1, -1, 0}, {}};
  m.zero_grads();
  m.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true);
  const auto g = m.grad("tok_emb");
  const auto gp = m.grad("pos_emb");
  auto row_norm = [&](std::span<const double> s, int r) {
    double n = 0;
    for (int c = 0; c < cfg.d_model; ++c) n += s[static_cast<size_t>(r) * cfg.d_model + c] * s[static_cast<size_t>(r) * cfg.d_model + c];
    return n;
  };
  CHECK(row_norm(g, 0) == 0.0);
  CHECK(row_norm(g, 1) > 0.0);
  CHECK(row_norm(g, 2) > 0.0);
  CHECK(row_norm(g, 3) == 0.0);
  CHECK(row_norm(gp, 2) > 0.0);  // scored in example 1
  for (int t = 3; t < cfg.max_len; ++t) CHECK(row_norm(gp, t) == 0.0);
}

TEST_CASE("model: backward adds into the gradients; forward alone leaves them", "[model][gradients]") {
  const ModelConfig cfg = srbench::test::tiny_config(Position::Rope, Norm::Layer, Activation::Gelu);
  BasicModel<double> m(cfg);
  srbench::test::randomize(m, 9);
  const Batch batch = srbench::test::random_batch(3, 5, cfg.vocab, 1);
  m.zero_grads();
  const double l1 = m.forward_backward(batch.tokens.data(), batch.targets.data(), 3, 5, true);
  const std::vector<double> g1(m.grads(), m.grads() + m.num_params());
  const double l2 = m.forward_backward(batch.tokens.data(), batch.targets.data(), 3, 5, true);
  const double l3 = m.forward(batch.tokens.data(), batch.targets.data(), 3, 5);
  CHECK(l1 == l2);
  CHECK(l1 == l3);
  for (size_t i = 0; i < g1.size(); ++i) REQUIRE(m.grads()[i] == Approx(2 * g1[i]).margin(1e-15));
}

TEST_CASE("model: float model agrees with the double model", "[model][precision]") {
  double worst_logit = 0, worst_grad = 0;
  int zero_key_biases = 0, compared = 0;
  for (auto pos : kPositions)
    for (auto norm : kNorms) {
      const ModelConfig cfg = srbench::test::tiny_config(pos, norm, Activation::Gelu);
      INFO(label(cfg));
      BasicModel<double> md(cfg);
      Model mf(cfg);
      srbench::test::randomize(md, 21);
      for (size_t i = 0; i < md.num_params(); ++i) {
        mf.params()[i] = static_cast<float>(md.params()[i]);
        md.params()[i] = mf.params()[i];  // the same values in both
      }
      const Batch batch = srbench::test::random_batch(3, 5, cfg.vocab, 2);
      md.zero_grads();
      mf.zero_grads();
      const double ld = md.forward_backward(batch.tokens.data(), batch.targets.data(), 3, 5, true);
      const float lf = mf.forward_backward(batch.tokens.data(), batch.targets.data(), 3, 5, true);
      CHECK(lf == Approx(ld).epsilon(1e-5));
      double max_logit = 0, err_logit = 0;
      for (int i = 0; i < 3 * 5 * cfg.vocab; ++i) {
        max_logit = std::max(max_logit, std::abs(md.logits()[i]));
        err_logit = std::max(err_logit, std::abs(md.logits()[i] - mf.logits()[i]));
      }
      CHECK(err_logit / max_logit < 1e-5);
      worst_logit = std::max(worst_logit, err_logit / max_logit);
      for (const auto& p : md.layout().tensors()) {
        INFO(p.name);
        double mx = 0, mx_float = 0, err = 0;
        for (size_t i = p.offset; i < p.offset + p.size; ++i) {
          mx = std::max(mx, std::abs(md.grads()[i]));
          mx_float = std::max(mx_float, static_cast<double>(std::abs(mf.grads()[i])));
          err = std::max(err, std::abs(md.grads()[i] - mf.grads()[i]));
        }
        // The key bias's gradient is zero in theory (softmax ignores a shift of a row's scores;
        // not so under RoPE), and the model keeps it exactly 0 in both precisions: checked as
        // such, not as an agreement of two zeros.
        if (p.name.find("attn.k.bias") != std::string::npos && pos != Position::Rope) {
          CHECK(mx == 0.0);
          CHECK(mx_float == 0.0);
          ++zero_key_biases;
          continue;
        }
        // Every other gradient is not identically zero; agreement relative to its largest entry.
        REQUIRE(mx > 0.0);
        const double rel = err / mx;
        CHECK(rel < 1e-4);
        worst_grad = std::max(worst_grad, rel);
        ++compared;
      }
    }
  std::printf("float vs double: worst logits %.3g, worst gradient %.3g (relative to tensor max, %d tensors); "
              "key bias exactly 0 in both in %d\n",
              worst_logit, worst_grad, compared, zero_key_biases);
}
