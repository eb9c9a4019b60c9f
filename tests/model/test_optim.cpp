// AdamW against a hand-computed two-step update, the schedules at hand-computed steps, clipping,
// and a diverged step reported, not thrown.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <limits>

#include "helpers.hpp"
#include "model/optim.hpp"

using namespace srbench::model;

namespace {
ModelConfig small_config() {
  ModelConfig c;
  c.vocab = 3;
  c.layers = 1;
  c.d_model = 2;
  c.heads = 1;
  c.mlp_ratio = 1;
  c.max_len = 2;
  return c;
}
}  // namespace

TEST_CASE("adamw: two steps as computed by hand", "[optim][reference]") {
  const ParamLayout layout(small_config());
  const size_t n = layout.total();
  const auto& w = layout.at("blocks.0.attn.q.weight");  // decayed
  const auto& b = layout.at("blocks.0.attn.q.bias");    // not decayed
  std::vector<float> params(n, 0.0f), grads(n, 0.0f);
  AdamW opt(layout);
  GroupHypers hp;
  hp[0] = {0.1, 0.01};
  params[w.offset] = 1.0f;
  params[b.offset] = 1.0f;
  grads[w.offset] = 0.5f;
  grads[b.offset] = 0.5f;
  opt.step(params.data(), grads.data(), hp);
  // θ = 1·(1 − 0.1·0.01) = 0.999; m = 0.05, v = 0.005; m̂ = 0.5, v̂ = 0.25: θ −= 0.1·0.5/0.5.
  CHECK(params[w.offset] == Approx(0.899).epsilon(1e-6));
  CHECK(params[b.offset] == Approx(0.9).epsilon(1e-6));
  CHECK(opt.m()[w.offset] == Approx(0.05f));
  CHECK(opt.v()[w.offset] == Approx(0.005f));
  grads[w.offset] = -0.25f;
  grads[b.offset] = -0.25f;
  opt.step(params.data(), grads.data(), hp);
  // θ = 0.899·0.999 = 0.898101; m = 0.02, v = 0.00615; m̂ = 0.02/0.19, v̂ = 0.00615/0.0396:
  // θ −= 0.1·0.1052632/0.3940850 = 0.0267110 → 0.8713902 (bias: 0.9 − 0.0267110 = 0.8732890).
  CHECK(params[w.offset] == Approx(0.8713902).epsilon(1e-6));
  CHECK(params[b.offset] == Approx(0.8732892).epsilon(1e-6));
  CHECK(opt.steps_taken() == 2);
  // a zero gradient and zero moments leave a non-decayed zero parameter at zero
  CHECK(params[b.offset + 1] == 0.0f);
}

TEST_CASE("adamw: weight decay only on matrices and embeddings", "[optim]") {
  const ParamLayout layout(small_config());
  std::vector<float> params(layout.total(), 2.0f), grads(layout.total(), 0.0f);
  AdamW opt(layout);
  GroupHypers hp;
  hp[0] = {0.5, 0.1};
  opt.step(params.data(), grads.data(), hp);
  for (const auto& p : layout.tensors()) {
    INFO(p.name);
    CHECK(params[p.offset] == Approx(p.decay ? 2.0 * (1 - 0.05) : 2.0));
  }
  CHECK(layout.at("tok_emb").decay);
  CHECK(layout.at("pos_emb").decay);
  CHECK(layout.at("head.weight").decay);
  CHECK_FALSE(layout.at("head.bias").decay);
  CHECK_FALSE(layout.at("ln_f.weight").decay);
}

TEST_CASE("schedule: warm-up then cosine, linear, constant, at hand-computed steps", "[optim][reference]") {
  const double lr = 1e-3;
  // warm-up: lr·(s+1)/W
  CHECK(scheduled_lr(lr, 0, 10, 110, Schedule::Cosine) == Approx(1e-4));
  CHECK(scheduled_lr(lr, 4, 10, 110, Schedule::Linear) == Approx(5e-4));
  CHECK(scheduled_lr(lr, 9, 10, 110, Schedule::Constant) == Approx(1e-3));
  // after warm-up: lr_min = 1e-4
  CHECK(scheduled_lr(lr, 10, 10, 110, Schedule::Cosine) == Approx(1e-3));
  CHECK(scheduled_lr(lr, 60, 10, 110, Schedule::Cosine) == Approx(5.5e-4));
  CHECK(scheduled_lr(lr, 109, 10, 110, Schedule::Cosine) == Approx(1.0022204783542078e-4));
  CHECK(scheduled_lr(lr, 10, 10, 110, Schedule::Linear) == Approx(1e-3));
  CHECK(scheduled_lr(lr, 60, 10, 110, Schedule::Linear) == Approx(5.5e-4));
  CHECK(scheduled_lr(lr, 85, 10, 110, Schedule::Linear) == Approx(3.25e-4));
  CHECK(scheduled_lr(lr, 60, 10, 110, Schedule::Constant) == Approx(1e-3));
  // no warm-up
  CHECK(scheduled_lr(lr, 0, 0, 100, Schedule::Cosine) == Approx(1e-3));
  CHECK(parse_schedule("linear") == Schedule::Linear);
  CHECK_THROWS_WITH(parse_schedule("step"), Catch::Contains("train.schedule") && Catch::Contains("cosine"));
}

TEST_CASE("clipping: like torch clip_grad_norm_", "[optim][reference]") {
  std::vector<float> g = {3.0f, 4.0f};
  CHECK(clip_grad_norm(g.data(), 2, 10.0) == Approx(5.0));
  CHECK(g[0] == 3.0f);  // coefficient 10/5 > 1: untouched
  CHECK(clip_grad_norm(g.data(), 2, 1.0) == Approx(5.0));
  const double coef = 1.0 / (5.0 + 1e-6);
  CHECK(g[0] == Approx(3.0 * coef).epsilon(1e-6));
  CHECK(g[1] == Approx(4.0 * coef).epsilon(1e-6));
  // many elements over several partial sums
  std::vector<float> big(10000, 0.5f);
  CHECK(global_norm(big.data(), big.size()) == Approx(50.0));
  // enough partial sums to run in parallel: the same bits with 1 and 2 threads
  std::vector<float> huge(200003);
  for (size_t i = 0; i < huge.size(); ++i) huge[i] = static_cast<float>(std::sin(0.1 * i));
  double expected = 0;
  for (float x : huge) expected += static_cast<double>(x) * x;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const double n1 = global_norm(huge.data(), huge.size());
  omp_set_num_threads(2);
  const double n2 = global_norm(huge.data(), huge.size());
  omp_set_num_threads(saved);
  CHECK(n1 == n2);
  CHECK(n1 == Approx(std::sqrt(expected)).epsilon(1e-12));
  std::vector<float> bad = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  CHECK(std::isnan(clip_grad_norm(bad.data(), 2, 1.0)));
  CHECK(bad[0] == 1.0f);
}

TEST_CASE("train_step: a non-finite loss is reported and the parameters are not updated", "[optim][training]") {
  ModelConfig c = small_config();
  Model m(c);
  m.init(1);
  AdamW opt(m.layout());
  const int32_t tokens[4] = {0, 1, 2, 1}, targets[4] = {1, 2, 1, 0};
  TrainSettings st;
  st.steps = 10;
  st.warmup = 2;
  const StepResult ok = train_step(m, opt, tokens, targets, 2, 2, 0, st);
  CHECK(ok.finite);
  CHECK(ok.lr == Approx(5e-4));
  CHECK(ok.loss == Approx(std::log(3.0)).epsilon(0.05));  // near-uniform prediction at init
  m.param("head.bias")[0] = std::numeric_limits<float>::infinity();
  const std::vector<float> before(m.params(), m.params() + m.num_params());
  const StepResult bad = train_step(m, opt, tokens, targets, 2, 2, 1, st);
  CHECK_FALSE(bad.finite);
  CHECK(opt.steps_taken() == 1);
  for (size_t i = 0; i < before.size(); ++i)
    if (std::isfinite(before[i])) REQUIRE(m.params()[i] == before[i]);
}
