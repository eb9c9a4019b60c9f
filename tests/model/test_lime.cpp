// LIMe (model.md, "LIMe"): identity init reproduces the baseline bit for bit; the forward pass
// against the plain reference of helpers.hpp; gradients through the routers and the mixed keys
// and values against finite differences; the routers' init, checkpoint, optimiser group; results
// independent of the thread count; deep narrow models learn.
#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "fd_check.hpp"
#include "helpers.hpp"
#include "model/checkpoint.hpp"
#include "model/optim.hpp"
#include "tests/support.hpp"

using namespace srbench::model;
namespace h5 = srbench::h5;
using srbench::test::Batch;
using srbench::test::TempDir;

namespace {

ModelConfig lime_config(Position pos, int layers, Attention att = Attention::Softmax,
                        const std::string& init = "uniform") {
  ModelConfig c = srbench::test::tiny_config(pos, Norm::Layer, Activation::Gelu);
  c.layers = layers;
  c.attention = att;
  c.lime = Lime::Static;
  c.lime_init = init;
  return c;
}

std::string router_name(int l) { return "blocks." + std::to_string(l) + ".attn.router"; }

template <typename T>
bool same_bits(const T* a, const T* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(T)) == 0;
}

}  // namespace

TEST_CASE("lime: identity init gives the baseline's logits, loss and gradients bit for bit", "[lime][init]") {
  for (Position pos : {Position::Learned, Position::Rope, Position::Alibi})
    for (Attention att : {Attention::Softmax, Attention::SplineScore}) {
      ModelConfig base_cfg = lime_config(pos, 3, att, "identity");
      base_cfg.lime = Lime::None;
      const ModelConfig lime_cfg = lime_config(pos, 3, att, "identity");
      INFO(to_string(pos) << "/" << to_string(att));
      Model base(base_cfg), lime(lime_cfg);
      base.init(4);
      srbench::test::randomize(base, 4, 0.3);
      lime.init(4);  // routers: identity blocks, zeros elsewhere
      for (const auto& p : base.layout().tensors()) {
        const auto src = base.param(p.name);
        std::copy(src.begin(), src.end(), lime.param(p.name).begin());
      }
      const Batch batch = srbench::test::random_batch(3, 7, base_cfg.vocab, 8);  // with unscored positions
      base.zero_grads();
      lime.zero_grads();
      const float lb = base.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true);
      const float ll = lime.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true);
      CHECK(std::memcmp(&lb, &ll, sizeof lb) == 0);
      CHECK(same_bits(base.logits(), lime.logits(), static_cast<size_t>(batch.B) * batch.T * base_cfg.vocab));
      for (int l = 0; l < 3; ++l)  // the values as attention uses them (row stride 3C)
        for (int64_t r = 0; r < batch.B * batch.T; ++r)
          CHECK(same_bits(base.values(l) + r * base.values_stride(), lime.values(l) + r * lime.values_stride(),
                          static_cast<size_t>(base_cfg.d_model)));
      for (const auto& p : base.layout().tensors()) {
        INFO(p.name);
        CHECK(same_bits(base.grad(p.name).data(), lime.grad(p.name).data(), p.size));
      }
      // the routers still learn: their gradient is not zero (every entry of layer 2's router)
      for (int l = 1; l < 3; ++l) {
        const auto g = lime.grad(router_name(l));
        double largest = 0;
        for (float x : g) largest = std::max(largest, static_cast<double>(std::abs(x)));
        CHECK(largest > 1e-6);
        if (l == 2)
          for (float x : g) CHECK(x != 0.0f);
      }
    }
}

TEST_CASE("lime: forward matches the plain reference of model.md", "[lime][reference]") {
  for (Position pos : {Position::Learned, Position::Rope, Position::Alibi, Position::None}) {
    INFO(to_string(pos));
    BasicModel<double> m(lime_config(pos, 4));
    srbench::test::randomize(m, 12);  // routers too: random mixing
    for (auto [B, T] : {std::pair{3, 5}, std::pair{1, 1}, std::pair{2, 8}}) {
      const Batch batch = srbench::test::random_batch(B, T, m.config().vocab, 5);
      const double loss = m.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
      const auto ref = srbench::test::reference_forward(m, batch);
      double worst = 0;
      for (size_t i = 0; i < ref.logits.size(); ++i) worst = std::max(worst, std::abs(m.logits()[i] - ref.logits[i]));
      CHECK(worst < 1e-12);
      CHECK(loss == Approx(ref.loss).epsilon(1e-12));
    }
  }
}

TEST_CASE("lime: gradients through the routers and the mixed keys and values match finite differences",
          "[lime][gradients]") {
  // Double precision, h = 1e-6 (see test_gradients.cpp and test_splines.cpp). The spline case
  // skips probes that straddle a keypoint (error explained by the one-sided differences' gap),
  // at most 2% of them.
  struct Case {
    Position pos;
    Attention att;
    int layers;
  };
  const std::vector<Case> cases = {{Position::Rope, Attention::Softmax, 4},
                                   {Position::Alibi, Attention::Softmax, 4},
                                   {Position::Learned, Attention::Softmax, 3},
                                   {Position::Rope, Attention::SplineScore, 3}};
  double worst_all = 0;
  std::string worst_where;
  for (const Case& cs : cases) {
    ModelConfig cfg = lime_config(cs.pos, cs.layers, cs.att);
    cfg.attn_spline.keypoints = 17;
    cfg.attn_spline.range = 4.0;
    cfg.attn_spline.extrapolate = Extrapolate::Linear;
    const std::string label = std::string(to_string(cs.pos)) + "/" + to_string(cs.att);
    INFO(label);
    BasicModel<double> m(cfg);
    m.init(2);
    std::vector<double> splines(m.spline_values().begin(), m.spline_values().end());  // exp: smooth and positive
    srbench::test::randomize(m, 3, 0.4);
    m.set_spline_values(splines);
    const Batch batch = srbench::test::random_batch(3, 6, cfg.vocab, 7);
    // Every tensor is exercised but the key bias under softmax without RoPE: mixed into the keys
    // of every later layer it is still a per-row shift of the scores (model.cpp); its analytic
    // gradient is exactly 0.
    auto zero_in_theory = [&](const std::string& name) {
      return name.find("attn.k.bias") != std::string::npos && cs.att == Attention::Softmax && cs.pos != Position::Rope;
    };
    const auto r = srbench::test::check_finite_differences(m, batch, 1e-6, cs.att != Attention::Softmax, zero_in_theory);
    if (r.worst > worst_all) worst_all = r.worst, worst_where = label + " " + r.where;
    for (const auto& p : m.layout().tensors())
      if (zero_in_theory(p.name))
        CHECK(std::all_of(m.grads() + p.offset, m.grads() + p.offset + p.size, [](double g) { return g == 0.0; }));
  }
  std::printf("lime finite differences: worst |analytic - numeric| = %.3g (%s)\n", worst_all, worst_where.c_str());
}

TEST_CASE("lime: router init (uniform bounds and spread, identity block), other tensors as the baseline",
          "[lime][init]") {
  ModelConfig cfg = lime_config(Position::Rope, 16);
  cfg.d_model = 16;
  cfg.heads = 4;
  const int H = cfg.heads;
  ModelConfig base_cfg = cfg;
  base_cfg.lime = Lime::None;
  Model base(base_cfg), uni(cfg);
  base.init(9);
  uni.init(9);
  cfg.lime_init = "identity";
  Model ident(cfg);
  ident.init(9);
  for (const auto& p : base.layout().tensors()) {  // routers are drawn last: the rest is unchanged
    INFO(p.name);
    CHECK(same_bits(base.param(p.name).data(), uni.param(p.name).data(), p.size));
    CHECK(same_bits(base.param(p.name).data(), ident.param(p.name).data(), p.size));
  }
  CHECK(!uni.layout().find(router_name(0)));
  double sum = 0, sum_sq = 0, top = 0;
  int64_t count = 0;
  for (int l = 1; l < cfg.layers; ++l) {
    const ParamInfo& info = uni.layout().at(router_name(l));
    const int cols = (l + 1) * H;
    CHECK(info.shape == std::vector<int64_t>{H, cols});
    CHECK(info.group == ParamGroup::Router);
    CHECK(!info.decay);
    const double a = std::sqrt(3.0 / cols);
    const auto u = uni.param(router_name(l)), z = ident.param(router_name(l));
    for (int i = 0; i < H; ++i)
      for (int c = 0; c < cols; ++c) {
        const float x = u[static_cast<size_t>(i) * cols + c], y = z[static_cast<size_t>(i) * cols + c];
        if (c >= l * H) {  // the current layer's block: the identity
          CHECK(x == (c - l * H == i ? 1.0f : 0.0f));
          CHECK(y == x);
          continue;
        }
        CHECK(y == 0.0f);
        CHECK(std::abs(x) <= a);
        sum += x / a, sum_sq += (x / a) * (x / a), top = std::max(top, std::abs(x / a));
        ++count;
      }
  }
  // x/a is U(−1, 1): mean 0 (sd 1/√(3n)), mean square 1/3 (sd √(4/45n)); n = 1920 here
  REQUIRE(count == 1920);
  CHECK(std::abs(sum / count) < 4.0 / std::sqrt(3.0 * count));
  CHECK(std::abs(sum_sq / count - 1.0 / 3.0) < 4.0 * std::sqrt(4.0 / 45.0 / count));
  CHECK(top > 0.99);
}

TEST_CASE("lime: config round trip, checkpoint with routers bit for bit under model.md's names and shapes",
          "[lime][checkpoint][config]") {
  ModelConfig cfg = lime_config(Position::Alibi, 3);
  ModelConfig parsed;
  parsed.set("lime", "static");
  CHECK(parsed.lime == Lime::Static);
  CHECK_THROWS_WITH(parsed.set("lime", "dynamic"), Catch::Contains("model.lime") && Catch::Contains("static"));
  CHECK_THROWS_WITH(parsed.set("lime_init", "zeros"), Catch::Contains("model.lime_init"));
  for (const std::string init : {"uniform", "identity"}) {
    cfg.lime_init = init;
    CHECK(ModelConfig::from_yaml(cfg.to_yaml()) == cfg);
    CHECK(cfg.to_yaml().find("lime: static") != std::string::npos);
  }
  TempDir dir;
  Model m(cfg);
  m.init(3);
  srbench::test::randomize(m, 3);
  save_checkpoint(m, dir.file("ck.h5"));
  const Model back = load_checkpoint(dir.file("ck.h5"));
  CHECK(back.config() == cfg);
  CHECK(same_bits(m.params(), back.params(), m.num_params()));
  h5::Id f = h5::open_file(dir.file("ck.h5"), "test");
  h5::Id params = h5::open_group(f, "model/params");
  CHECK(!h5::has_link(params, router_name(0)));
  for (int l = 1; l < 3; ++l) {
    h5::Id ds(H5Dopen2(params, router_name(l).c_str(), H5P_DEFAULT));
    REQUIRE(ds.valid());
    CHECK(h5::shape_of(ds) == std::vector<int64_t>{cfg.heads, (l + 1) * cfg.heads});
  }
}

TEST_CASE("lime: routers train with router_lr, no weight decay; weights-only steps update them, splines-only not",
          "[lime][splines][training]") {
  const ModelConfig cfg = lime_config(Position::Rope, 3);
  Model m(cfg);
  m.init(1);
  const auto w0 = m.param(router_name(2));
  const std::vector<float> before(w0.begin(), w0.end());
  AdamW opt(m.layout());
  TrainSettings st;
  st.warmup = 2, st.steps = 10, st.lr = 1e-3, st.router_lr = 4e-2, st.weight_decay = 0.5, st.clip = 0;
  const Batch batch = srbench::test::random_batch(2, 6, cfg.vocab, 3);
  st.update = Update::SplinesOnly;
  train_step(m, opt, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, 0, st);
  CHECK(same_bits(before.data(), m.param(router_name(2)).data(), before.size()));
  st.update = Update::All;
  m.zero_grads();
  m.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true);
  const std::vector<float> g(m.grad(router_name(2)).begin(), m.grad(router_name(2)).end());
  const StepResult r = apply_gradients(m, opt, 1.0, 0, st);
  REQUIRE(r.finite);
  CHECK(r.router_lr == Approx(2e-2));  // warm-up: 1/2 of router_lr
  CHECK(opt.steps_taken(ParamGroup::Router) == 1);
  // Adam's first step moves every entry by lr·sign(g) (|m/√v| = 1 up to ε/|g|), with no decay term.
  const auto w1 = m.param(router_name(2));
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::abs(g[i]) < 1e-5f) continue;
    CHECK(w1[i] - before[i] == Approx(g[i] > 0 ? -2e-2 : 2e-2).epsilon(1e-4));
  }
}

TEST_CASE("lime: training is bit-identical with 1 and 2 threads", "[lime][threads][training]") {
  for (Attention att : {Attention::Softmax, Attention::SplineKernel}) {
    INFO(to_string(att));
    ModelConfig cfg = lime_config(Position::Rope, 3, att);
    cfg.max_len = 48;
    auto train = [&](int threads) {
      const int saved = omp_get_max_threads();
      omp_set_num_threads(threads);
      Model m(cfg);
      m.init(5);
      AdamW opt(m.layout());
      TrainSettings st;
      st.warmup = 1;
      for (int s = 0; s < 3; ++s) {
        const Batch b = srbench::test::random_batch(8, 40, cfg.vocab, 50 + s);  // 320 rows: the parallel paths
        REQUIRE(train_step(m, opt, b.tokens.data(), b.targets.data(), b.B, b.T, s, st).finite);
      }
      omp_set_num_threads(saved);
      return std::vector<float>(m.params(), m.params() + m.num_params());
    };
    const auto one = train(1), two = train(2);
    CHECK(same_bits(one.data(), two.data(), one.size()));
  }
}

// [long]: left out of the sanitizer subset (scripts/sanitize.sh): 24 layers of kernels the other tests cover.
TEST_CASE("lime: deep narrow models (24 layers, d_model 32) train stably, baseline and LIMe",
          "[lime][training][long]") {
  // One thread: a learning check. Task: target_t = x_{t−1} (one attention hop through 24 layers),
  // positions 1…T−1 scored. Loss must stay finite and fall well below chance.
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  for (Lime lime : {Lime::None, Lime::Static}) {
    INFO(to_string(lime));
    ModelConfig cfg;
    cfg.vocab = 8, cfg.layers = 24, cfg.d_model = 32, cfg.heads = 4, cfg.max_len = 16;
    cfg.position = Position::Rope;
    cfg.lime = lime;
    Model m(cfg);
    m.init(3);
    AdamW opt(m.layout());
    TrainSettings st;
    st.steps = 150, st.warmup = 15, st.lr = 3e-3;
    const int B = 16, T = 8;
    std::mt19937_64 gen(4);
    std::vector<int32_t> tokens(B * T), targets(B * T);
    double first = 0, last = 0;
    for (int s = 0; s < st.steps; ++s) {
      for (int i = 0; i < B * T; ++i) {
        tokens[i] = static_cast<int32_t>(gen() % cfg.vocab);
        targets[i] = i % T == 0 ? kNotScored : tokens[i - 1];
      }
      const StepResult r = train_step(m, opt, tokens.data(), targets.data(), B, T, s, st);
      REQUIRE(r.finite);
      if (s < 10) first += r.loss / 10;
      if (s >= st.steps - 10) last += r.loss / 10;
    }
    std::printf("deep narrow %s: mean loss of the first 10 steps %.3f, of the last 10 %.3f (chance ln 8 = %.3f)\n",
                to_string(lime), first, last, std::log(8.0));
    CHECK(first > 0.9 * std::log(8.0));
    CHECK(last < 0.3 * first);
  }
  omp_set_num_threads(saved);
}
