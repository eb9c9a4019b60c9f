// The learnable splines (model.md, "The learnable spline", "Attention"): the spline layer against
// hand values and finite differences; whole spline models (MLP activation, spline-score and
// spline-kernel attention, per-layer and shared, both extrapolations, padding targets) against
// central finite differences in double precision; spline-score with exp init against softmax;
// the inits at the keypoints; the optimiser groups (spline lr, freezing, spline-only and
// weights-only updates); threads; checkpoints with the spline attributes.
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
#include "model/attention.hpp"
#include "model/layers.hpp"
#include "model/model.hpp"
#include "model/optim.hpp"
#include "tests/support.hpp"

using namespace srbench::model;
namespace h5 = srbench::h5;
using srbench::test::Batch;
using srbench::test::gelu_exact;
using srbench::test::randomize_splines;
using srbench::test::smooth_values;

namespace {

ModelConfig spline_config(Position pos, Activation act, Attention att, Extrapolate ex, SplineShare share) {
  ModelConfig c = srbench::test::tiny_config(pos, Norm::Layer, act);
  c.attention = att;
  for (SplineConfig* sc : {&c.mlp_spline, &c.attn_spline}) {
    sc->keypoints = 9;  // h = 0.5: many segments are crossed, and inputs fall beyond ±R
    sc->range = 2.0;
    sc->extrapolate = ex;
    sc->share = share;
  }
  return c;
}

std::string label(const ModelConfig& c) {
  return std::string(to_string(c.position)) + "/" + to_string(c.activation) + "/" + to_string(c.attention) + "/" +
         to_string(c.mlp_spline.extrapolate) + "/share " + to_string(c.mlp_spline.share);
}

}  // namespace

TEST_CASE("spline layer: hand-computed values and gradients, both extrapolations", "[splines][gradients][reference]") {
  // K = 3, R = 1: keypoints −1, 0, 1 (h = 1), values 1, 3, −1.
  const std::vector<double> theta = {1.0, 3.0, -1.0};
  const std::vector<double> x = {-0.5, 0.25, 2.0, -3.0, 1.0, -1.0};
  std::vector<double> y(x.size()), dx(x.size());
  SplineShape sp{3, 1.0, false};
  spline_forward(y.data(), x.data(), theta.data(), static_cast<int64_t>(x.size()), sp);
  // φ(−0.5) = 1 + 0.5·2; φ(0.25) = 3 + 0.25·(−4); beyond the range: the end values.
  CHECK(y == std::vector<double>{2.0, 2.0, -1.0, 1.0, -1.0, 1.0});
  std::vector<double> dvals(3, 0.0), ones(x.size(), 1.0);
  spline_backward(dx.data(), dvals.data(), ones.data(), x.data(), theta.data(), static_cast<int64_t>(x.size()), sp);
  // slopes 2, −4; 0 where clamped; at x = ±R (u = 0, K−1) the end segment's slope.
  CHECK(dx == std::vector<double>{2.0, -4.0, 0.0, 0.0, -4.0, 2.0});
  // dθ: x=−0.5 → (0.5, 0.5, 0); 0.25 → (0, 0.75, 0.25); 2 → (0, 0, 1); −3 → (1, 0, 0); 1 → (0, 0, 1);
  // −1 → (1, 0, 0).
  CHECK(dvals == std::vector<double>{2.5, 1.25, 2.25});

  sp.linear = true;  // the end segments continue
  spline_forward(y.data(), x.data(), theta.data(), static_cast<int64_t>(x.size()), sp);
  CHECK(y == std::vector<double>{2.0, 2.0, -5.0, -3.0, -1.0, 1.0});
  std::fill(dvals.begin(), dvals.end(), 0.0);
  spline_backward(dx.data(), dvals.data(), ones.data(), x.data(), theta.data(), static_cast<int64_t>(x.size()), sp);
  CHECK(dx == std::vector<double>{2.0, -4.0, -4.0, 2.0, -4.0, 2.0});
  // x = 2: k = 1, t = 2 → (0, −1, 2); x = −3: k = 0, t = −2 → (3, −2, 0).
  CHECK(dvals == std::vector<double>{0.5 + 3.0 + 1.0, 0.5 + 0.75 - 1.0 - 2.0, 0.25 + 2.0 + 1.0});

  // A NaN input stays NaN (a diverging run is reported, never hidden or out of bounds).
  const double nan = std::nan("");
  for (bool linear : {false, true}) {
    sp.linear = linear;
    spline_forward(y.data(), &nan, theta.data(), 1, sp);
    CHECK(std::isnan(y[0]));
  }
}

TEST_CASE("spline layer: gradients w.r.t. inputs and values match central differences", "[splines][gradients]") {
  // Inputs placed away from the keypoints (offsets 0.1h … 0.9h inside a segment, or beyond ±R
  // by more than the probe), so that no probe x ± 1e-6 crosses a keypoint.
  for (bool linear : {false, true}) {
    INFO((linear ? "linear" : "constant"));
    SplineConfig sc;
    sc.keypoints = 12;
    sc.range = 3.0;
    const SplineShape sp{sc.keypoints, sc.range, linear};
    const auto theta0 = smooth_values(sc, 5, gelu_exact, 0.5);
    std::mt19937_64 gen(3);
    std::uniform_real_distribution<double> off(0.1, 0.9), far(0.01, 2.0);
    std::vector<double> x, g;
    for (int i = 0; i < 60; ++i) {
      const int k = static_cast<int>(gen() % (sc.keypoints - 1));
      x.push_back(-sc.range + (k + off(gen)) * sc.step());
    }
    for (int i = 0; i < 10; ++i) x.push_back((i % 2 ? 1 : -1) * (sc.range + far(gen)));
    const int64_t n = static_cast<int64_t>(x.size());
    std::normal_distribution<double> nd(0.0, 1.0);
    for (int64_t i = 0; i < n; ++i) g.push_back(nd(gen));  // loss = Σ g_i·φ(x_i)
    auto loss = [&](const std::vector<double>& xs, const std::vector<double>& th) {
      std::vector<double> y(xs.size());
      spline_forward(y.data(), xs.data(), th.data(), n, sp);
      double s = 0;
      for (int64_t i = 0; i < n; ++i) s += g[i] * y[i];
      return s;
    };
    std::vector<double> dx(n), dth(theta0.size(), 0.0);
    spline_backward(dx.data(), dth.data(), g.data(), x.data(), theta0.data(), n, sp);
    const double h = 1e-6;
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      auto xp = x, xm = x;
      xp[i] += h, xm[i] -= h;
      const double fd = (loss(xp, theta0) - loss(xm, theta0)) / (2 * h);
      worst = std::max(worst, std::abs(fd - dx[i]));
      CHECK(dx[i] == Approx(fd).margin(1e-8));
    }
    for (size_t k = 0; k < theta0.size(); ++k) {
      auto tp = theta0, tm = theta0;
      tp[k] += h, tm[k] -= h;
      const double fd = (loss(x, tp) - loss(x, tm)) / (2 * h);
      worst = std::max(worst, std::abs(fd - dth[k]));
      CHECK(dth[k] == Approx(fd).margin(1e-8));
    }
    std::printf("spline layer (%s): worst |analytic - numeric| = %.3g\n", linear ? "linear" : "constant", worst);
  }
}

TEST_CASE("spline init: gelu, relu, identity, exp, elu1, zero at the keypoints, exactly", "[splines][init]") {
  for (auto [K, R] : {std::pair{17, 8.0}, std::pair{64, 8.0}, std::pair{9, 2.0}}) {
    SplineConfig sc;
    sc.keypoints = K;
    sc.range = R;
    INFO("K " << K << " R " << R);
    for (SplineInit init : {SplineInit::Gelu, SplineInit::Relu, SplineInit::Identity, SplineInit::Exp,
                            SplineInit::Elu1, SplineInit::Zero}) {
      INFO(to_string(init));
      const auto v = spline_init_values(sc, init);
      REQUIRE(v.size() == static_cast<size_t>(K));
      std::vector<double> xk(K), phi(K);
      for (int k = 0; k < K; ++k) {
        xk[k] = -R + k * (2 * R / (K - 1));
        const double x = xk[k];
        const double want = init == SplineInit::Gelu       ? gelu_exact(x)
                            : init == SplineInit::Relu     ? std::max(x, 0.0)
                            : init == SplineInit::Identity ? x
                            : init == SplineInit::Exp      ? std::exp(x)
                            : init == SplineInit::Elu1     ? (x > 0 ? x + 1 : std::exp(x))
                                                           : 0.0;
        CHECK(v[k] == want);  // the values are the function at the keypoints
      }
      // φ at the keypoints gives them back: exactly when h is a power of two (K = 17, R = 8:
      // h = 1; K = 9, R = 2: h = 0.5), else to rounding of u = (x+R)/h.
      spline_forward(phi.data(), xk.data(), v.data(), K, SplineShape{K, R, false});
      const bool exact = (K == 17 && R == 8.0) || (K == 9 && R == 2.0);
      for (int k = 0; k < K; ++k) {
        if (exact) CHECK(phi[k] == v[k]);
        else CHECK(phi[k] == Approx(v[k]).epsilon(1e-13).margin(1e-13));
      }
    }
  }
  // A model's init puts these values into its spline tensors, the attention's default by form.
  ModelConfig c = spline_config(Position::Rope, Activation::Spline, Attention::SplineKernel, Extrapolate::Constant,
                                SplineShare::Layer);
  Model m(c);
  m.init(1);
  const auto gelu = spline_init_values(c.mlp_spline, SplineInit::Gelu);
  const auto elu1 = spline_init_values(c.attn_spline, SplineInit::Elu1);
  for (int k = 0; k < 9; ++k) {
    CHECK(m.param("blocks.1.mlp.act.values")[k] == static_cast<float>(gelu[k]));
    CHECK(m.param("blocks.0.attn.kernel.values")[k] == static_cast<float>(elu1[k]));
  }
  // the random stream of the other parameters is that of the model without splines
  ModelConfig plain_cfg = c;
  plain_cfg.activation = Activation::Gelu;
  plain_cfg.attention = Attention::Softmax;
  Model plain(plain_cfg);
  plain.init(1);
  CHECK(std::memcmp(plain.params(), m.params(), plain.num_params() * sizeof(float)) == 0);
}

TEST_CASE("spline models: gradients of every parameter match central finite differences", "[splines][gradients]") {
  // Double precision, probe h = 1e-6 (rounding error ~1e-16/h ~ 1e-10). φ is piecewise linear
  // (and |·| has a kink at 0): a probe whose perturbation moves some spline input across a
  // keypoint sees a mix of two slopes. Such elements are detected and skipped: with the forward
  // and backward one-sided differences d+ and d−, a kink inside the probe makes the central
  // difference err by at most |d+ − d−| (smooth functions: |d+ − d−| = O(h·f'') ~ 1e-6). An
  // element is skipped only when its error is that large AND explained by |d+ − d−|; at most 2%
  // may be skipped, and a wrong gradient (error without a kink) fails.
  struct Case {
    Position pos;
    Activation act;
    Attention att;
    Extrapolate ex;
    SplineShare share;
    bool mixed_sign;
  };
  const std::vector<Case> cases = {
      {Position::Learned, Activation::Spline, Attention::Softmax, Extrapolate::Constant, SplineShare::Layer, false},
      {Position::Rope, Activation::Spline, Attention::Softmax, Extrapolate::Linear, SplineShare::Model, false},
      {Position::Alibi, Activation::Gelu, Attention::SplineScore, Extrapolate::Constant, SplineShare::Layer, false},
      {Position::Rope, Activation::Relu, Attention::SplineScore, Extrapolate::Linear, SplineShare::Model, false},
      {Position::Learned, Activation::Gelu, Attention::SplineScore, Extrapolate::Constant, SplineShare::Layer, true},
      {Position::Rope, Activation::Gelu, Attention::SplineKernel, Extrapolate::Constant, SplineShare::Layer, false},
      {Position::None, Activation::Gelu, Attention::SplineKernel, Extrapolate::Linear, SplineShare::Model, false},
      {Position::Sinusoidal, Activation::Gelu, Attention::SplineKernel, Extrapolate::Constant, SplineShare::Layer, true},
      {Position::Rope, Activation::Spline, Attention::SplineScore, Extrapolate::Linear, SplineShare::Layer, false},
      {Position::Learned, Activation::Spline, Attention::SplineKernel, Extrapolate::Constant, SplineShare::Model, false},
  };
  double worst_all = 0;
  std::string worst_where;
  int64_t checked_all = 0, skipped_all = 0;
  for (const Case& cs : cases) {
    const ModelConfig cfg = spline_config(cs.pos, cs.act, cs.att, cs.ex, cs.share);
    INFO(label(cfg) << (cs.mixed_sign ? " (φ of both signs)" : ""));
    BasicModel<double> m(cfg);
    srbench::test::randomize(m, 3);
    randomize_splines(m, 17, cs.mixed_sign);
    const Batch batch = srbench::test::random_batch(3, 5, cfg.vocab, 7);
    // every tensor is exercised — the key bias too: only softmax ignores a shift of the scores
    auto zero_in_theory = [&](const std::string& name) {
      return name.find("attn.k.bias") != std::string::npos && cs.att == Attention::Softmax && cs.pos != Position::Rope;
    };
    const auto r = srbench::test::check_finite_differences(m, batch, 1e-6, true, zero_in_theory);
    if (r.worst > worst_all) worst_all = r.worst, worst_where = label(cfg) + " " + r.where;
    checked_all += r.checked, skipped_all += r.skipped;
  }
  std::printf("spline finite differences: worst |analytic - numeric| = %.3g (%s); %lld of %lld elements "
              "skipped (keypoint inside the probe)\n",
              worst_all, worst_where.c_str(), static_cast<long long>(skipped_all), static_cast<long long>(checked_all));
}

TEST_CASE("spline-score with exp init reproduces softmax attention up to interpolation error", "[splines][init]") {
  // On a segment of width h, the chord of exp lies above it by a relative error of at most
  // ρ = max_t (1 − t + t·e^h)/e^{t·h} − 1 (≈ h²/8 for small h): φ(s) = e^s·(1 + r), 0 ≤ r ≤ ρ.
  // Then α_ij = φ_ij/(Σφ + ε) and the softmax p_ij differ by at most |α − p| ≤ (ρ + ε/Σφ)·p. With
  // K = 64, R = 8 (h = 0.254): ρ = 8.1e-3. The scores stay inside ±R (small weights).
  ModelConfig cfg = srbench::test::tiny_config(Position::Learned, Norm::Layer, Activation::Gelu);
  ModelConfig scfg = cfg;
  scfg.attention = Attention::SplineScore;
  BasicModel<double> soft(cfg), spl(scfg);
  spl.init(1);
  srbench::test::randomize(soft, 4, 0.3);
  std::copy(soft.params(), soft.params() + soft.num_params(), spl.params());  // splines stay exp
  const double h = scfg.attn_spline.step();
  double rho = 0;
  for (int i = 0; i <= 1000; ++i) {
    const double t = i / 1000.0;
    rho = std::max(rho, (1 - t + t * std::exp(h)) / std::exp(t * h) - 1);
  }
  CHECK(rho == Approx(h * h / 8).epsilon(0.05));
  const Batch batch = srbench::test::random_batch(3, 8, cfg.vocab, 2);
  soft.forward(batch.tokens.data(), batch.targets.data(), 3, 8);
  spl.forward(batch.tokens.data(), batch.targets.data(), 3, 8);
  // Layer 0 sees identical inputs: the bound holds entry by entry (Σφ ≥ e^{−R}… in practice ≥ 0.1,
  // so ε/Σφ ≤ 1e-5).
  const double* a = spl.attention(0);
  const double* p = soft.attention(0);
  double worst_rel = 0;
  for (int64_t i = 0; i < 3 * cfg.heads * 8 * 8; ++i) {
    CHECK(std::abs(a[i] - p[i]) <= (rho + 1e-5) * p[i] + 1e-15);
    if (p[i] > 0) worst_rel = std::max(worst_rel, std::abs(a[i] - p[i]) / p[i]);
  }
  CHECK(worst_rel > 1e-4);  // not trivially equal: interpolation error is present
  // and the model's logits follow closely
  double worst_logit = 0, max_logit = 0;
  for (int i = 0; i < 3 * 8 * cfg.vocab; ++i) {
    worst_logit = std::max(worst_logit, std::abs(spl.logits()[i] - soft.logits()[i]));
    max_logit = std::max(max_logit, std::abs(soft.logits()[i]));
  }
  CHECK(worst_logit < 0.05 * max_logit);
  std::printf("spline-score (exp) vs softmax: worst relative attention difference %.3g (bound ρ = %.3g), "
              "logits %.3g of max\n",
              worst_rel, rho, worst_logit / max_logit);
}

namespace {

ModelConfig train_config(Activation act, Attention att) {
  ModelConfig c;
  c.vocab = 11;
  c.layers = 2;
  c.d_model = 48;
  c.heads = 4;
  c.max_len = 32;
  c.position = Position::Rope;
  c.activation = act;
  c.attention = att;
  c.mlp_spline.keypoints = 32;
  c.attn_spline.keypoints = 32;
  return c;
}

Batch copy_batch(int B, int T, int V, uint64_t seed) {
  Batch b = srbench::test::random_batch(B, T, V, seed);
  for (size_t i = 0; i < b.tokens.size(); ++i)
    if (b.targets[i] != kNotScored) b.targets[i] = b.tokens[i];
  return b;
}

// Parameters after `steps` steps under `st` with `threads` threads.
std::vector<float> trained(const ModelConfig& cfg, const TrainSettings& st, int steps, int threads, int B = 8,
                           int T = 12, std::vector<float>* losses = nullptr) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  Model m(cfg);
  m.init(5);
  AdamW opt(m.layout());
  for (int s = 0; s < steps; ++s) {
    const Batch b = copy_batch(B, T, cfg.vocab, 50 + s);
    const StepResult r = train_step(m, opt, b.tokens.data(), b.targets.data(), b.B, b.T, s, st);
    REQUIRE(r.finite);
    if (losses) losses->push_back(static_cast<float>(r.loss));
  }
  omp_set_num_threads(saved);
  return {m.params(), m.params() + m.num_params()};
}

}  // namespace

TEST_CASE("spline optimiser group: own lr, no decay, freezing, spline-only and weights-only updates", "[splines]") {
  const ModelConfig cfg = train_config(Activation::Spline, Attention::SplineScore);
  Model init(cfg);
  init.init(5);
  const auto blk = init.layout().spline_block();
  const std::vector<float> p0(init.params(), init.params() + init.num_params());
  auto splines_same = [&](const std::vector<float>& p) {
    return std::memcmp(p.data() + blk.offset, p0.data() + blk.offset, blk.size * sizeof(float)) == 0;
  };
  auto weights_same = [&](const std::vector<float>& p) {
    return std::memcmp(p.data(), p0.data(), blk.offset * sizeof(float)) == 0;
  };
  TrainSettings st;
  st.steps = 20;
  st.warmup = 2;
  st.lr = 3e-3;

  const auto all = trained(cfg, st, 4, 1);
  CHECK_FALSE(splines_same(all));
  CHECK_FALSE(weights_same(all));

  TrainSettings frozen = st;
  frozen.freeze_splines = true;
  const auto f = trained(cfg, frozen, 4, 1);
  CHECK(splines_same(f));  // bit-identical
  CHECK_FALSE(weights_same(f));

  TrainSettings wonly = st;
  wonly.update = Update::WeightsOnly;
  const auto w = trained(cfg, wonly, 4, 1);
  CHECK(splines_same(w));
  CHECK(std::memcmp(w.data(), f.data(), w.size() * sizeof(float)) == 0);  // the same as frozen

  TrainSettings sonly = st;
  sonly.update = Update::SplinesOnly;
  const auto s = trained(cfg, sonly, 4, 1);
  CHECK(weights_same(s));  // every non-spline parameter bit-identical
  CHECK_FALSE(splines_same(s));

  // One step by hand: splines take lr spline_lr (warm-up 1/2 of 1e-2), no decay, Adam's first
  // step moves each by lr·sign(g) (|g| ≫ ε).
  Model m(cfg);
  m.init(5);
  AdamW opt(m.layout());
  const Batch b = copy_batch(8, 12, cfg.vocab, 1);
  TrainSettings one = st;
  one.clip = 0;
  const StepResult r = train_step(m, opt, b.tokens.data(), b.targets.data(), b.B, b.T, 0, one);
  CHECK(r.spline_lr == Approx(5e-3));
  CHECK(r.lr == Approx(1.5e-3));
  int moved = 0;
  for (size_t i = 0; i < blk.size; ++i) {
    const float g = m.spline_grads()[i];
    const float d = m.spline_values()[i] - p0[blk.offset + i];
    if (std::abs(g) > 1e-6f) {
      CHECK(d == Approx(-5e-3 * (g > 0 ? 1 : -1)).epsilon(1e-3));
      ++moved;
    }
  }
  CHECK(moved > 10);
  CHECK(opt.steps_taken(ParamGroup::Spline) == 1);
  // a spline-only step advances only the spline group's step count
  one.update = Update::SplinesOnly;
  train_step(m, opt, b.tokens.data(), b.targets.data(), b.B, b.T, 1, one);
  CHECK(opt.steps_taken(ParamGroup::Main) == 1);
  CHECK(opt.steps_taken(ParamGroup::Spline) == 2);
  // the norm and clipping cover the updated groups only
  m.zero_grads();
  m.forward_backward(b.tokens.data(), b.targets.data(), b.B, b.T, true);
  double ss = 0;
  for (float g : m.spline_grads()) ss += static_cast<double>(g) * g;
  GroupMask only_splines{};
  only_splines[static_cast<size_t>(ParamGroup::Spline)] = true;
  CHECK(global_norm(m.layout(), m.grads(), only_splines) == Approx(std::sqrt(ss)).epsilon(1e-12));
  GroupMask both{true, true};
  CHECK(global_norm(m.layout(), m.grads(), both) == global_norm(m.grads(), m.num_params()));
}

TEST_CASE("spline models: training is bit-identical with 1 and 2 threads", "[splines][threads][training]") {
  for (auto [act, att] : {std::pair{Activation::Spline, Attention::Softmax}, std::pair{Activation::Gelu, Attention::SplineScore},
                          std::pair{Activation::Spline, Attention::SplineKernel}}) {
    const ModelConfig cfg = train_config(act, att);
    INFO(to_string(act) << " " << to_string(att));
    TrainSettings st;
    st.steps = 20;
    st.warmup = 2;
    st.lr = 3e-3;
    // 16·24 rows × F 192 = 73728 MLP elements: the spline's chunks run in parallel
    std::vector<float> l1, l2;
    const auto one = trained(cfg, st, 5, 1, 16, 24, &l1);
    const auto two = trained(cfg, st, 5, 2, 16, 24, &l2);
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    CHECK(l1 == l2);
    CHECK(l1.back() < l1.front());  // it trains
  }
}

TEST_CASE("spline values: read and written as one block, copied between models", "[splines]") {
  const ModelConfig cfg = spline_config(Position::Rope, Activation::Spline, Attention::SplineScore,
                                        Extrapolate::Constant, SplineShare::Layer);
  Model a(cfg), b(cfg);
  a.init(1);
  b.init(1);
  randomize_splines(a, 3);
  CHECK(a.spline_values().size() == 4 * 9);
  const Batch batch = srbench::test::random_batch(2, 6, cfg.vocab, 1);
  const float la = a.forward(batch.tokens.data(), batch.targets.data(), 2, 6);
  CHECK(b.forward(batch.tokens.data(), batch.targets.data(), 2, 6) != la);
  b.set_spline_values(a.spline_values());
  CHECK(b.forward(batch.tokens.data(), batch.targets.data(), 2, 6) == la);
  CHECK(a.param("blocks.1.mlp.act.values")[3] == b.param("blocks.1.mlp.act.values")[3]);
  const std::vector<float> short_block(5, 0.0f);
  CHECK_THROWS_WITH(b.set_spline_values(short_block), Catch::Contains("5 values") && Catch::Contains("36"));
  ModelConfig none = cfg;
  none.activation = Activation::Gelu;
  none.attention = Attention::Softmax;
  CHECK(Model(none).spline_values().empty());
}

TEST_CASE("checkpoint: spline datasets carry range, keypoints, extrapolate; load checks them",
          "[splines][checkpoint]") {
  srbench::test::TempDir dir;
  for (SplineShare share : {SplineShare::Layer, SplineShare::Model}) {
    ModelConfig cfg = spline_config(Position::Rope, Activation::Spline, Attention::SplineKernel, Extrapolate::Linear,
                                    share);
    cfg.mlp_spline.range = 2.5;
    cfg.mlp_spline.extrapolate = Extrapolate::Constant;
    Model m(cfg);
    m.init(2);
    randomize_splines(m, 9);
    const std::string path = dir.path() + "/ck-" + to_string(share) + ".h5";
    save_checkpoint(m, path);
    const Model back = load_checkpoint(path);
    CHECK(back.config() == cfg);
    CHECK(std::memcmp(back.params(), m.params(), m.num_params() * sizeof(float)) == 0);
    const std::string mlp = share == SplineShare::Layer ? "blocks.1.mlp.act.values" : "spline.mlp.values";
    const std::string attn = share == SplineShare::Layer ? "blocks.0.attn.kernel.values" : "spline.attn.values";
    {
      h5::Id f = h5::open_file(path, "test");
      for (const auto& [name, range, ex] : {std::tuple{mlp, 2.5, "constant"}, std::tuple{attn, 2.0, "linear"}}) {
        INFO(name);
        h5::Id ds(H5Dopen2(f, ("model/params/" + name).c_str(), H5P_DEFAULT));
        REQUIRE(ds.valid());
        CHECK(h5::shape_of(ds) == std::vector<int64_t>{9});
        double r = 0;
        int64_t k = 0;
        h5::Id ar(H5Aopen(ds, "range", H5P_DEFAULT)), ak(H5Aopen(ds, "keypoints", H5P_DEFAULT));
        H5Aread(ar, H5T_NATIVE_DOUBLE, &r);
        H5Aread(ak, H5T_NATIVE_INT64, &k);
        CHECK(r == range);
        CHECK(k == 9);
        h5::Id ae(H5Aopen(ds, "extrapolate", H5P_DEFAULT));
        h5::Id type(H5Aget_type(ae));
        h5::Id mem(H5Tcopy(H5T_C_S1));
        H5Tset_size(mem, H5T_VARIABLE);
        char* text = nullptr;
        H5Aread(ae, mem, &text);
        CHECK(std::string(text) == ex);
        H5free_memory(text);
      }
      // non-spline datasets carry no such attributes
      h5::Id w(H5Dopen2(f, "model/params/head.weight", H5P_DEFAULT));
      CHECK(H5Aexists(w, "range") == 0);
    }
    // a wrong attribute is a ModelError naming the dataset and the attribute
    {
      h5::Id f(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
      h5::Id ds(H5Dopen2(f, ("model/params/" + attn).c_str(), H5P_DEFAULT));
      h5::Id a(H5Aopen(ds, "keypoints", H5P_DEFAULT));
      const int64_t wrong = 10;
      H5Awrite(a, H5T_NATIVE_INT64, &wrong);
    }
    CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains(attn) && Catch::Contains("keypoints"));
    {
      h5::Id f(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
      h5::Id ds(H5Dopen2(f, ("model/params/" + attn).c_str(), H5P_DEFAULT));
      h5::Id a(H5Aopen(ds, "keypoints", H5P_DEFAULT));
      const int64_t right = 9;
      H5Awrite(a, H5T_NATIVE_INT64, &right);
      h5::Id dm(H5Dopen2(f, ("model/params/" + mlp).c_str(), H5P_DEFAULT));
      H5Adelete(dm, "range");
    }
    CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains(mlp) && Catch::Contains("range") && Catch::Contains("missing"));
  }
}
