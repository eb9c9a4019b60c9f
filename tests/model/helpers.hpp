// Shared helpers for the model tests: tiny configurations, random batches with padding, and
// an independent plain-loop reference forward pass written from model.md.
#pragma once

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "model/optim.hpp"

namespace srbench::test {

inline model::ModelConfig tiny_config(model::Position pos, model::Norm norm, model::Activation act) {
  model::ModelConfig c;
  c.vocab = 7;
  c.layers = 2;
  c.d_model = 8;
  c.heads = 2;
  c.mlp_ratio = 4;
  c.max_len = 8;
  c.position = pos;
  c.norm = norm;
  c.activation = act;
  return c;
}

// Every position scheme of model.md and chomsky.md §7.3.
inline const std::vector<model::Position> kAllPositions = {model::Position::None,     model::Position::Learned,
                                                           model::Position::Sinusoidal, model::Position::Rope,
                                                           model::Position::Alibi,    model::Position::Relative};

struct Batch {
  int B = 0, T = 0;
  std::vector<int32_t> tokens, targets;
  std::vector<int32_t> lengths;  // (B) each row's own length, or empty: every row T long
  RowLengths rows() const { return {lengths.empty() ? nullptr : lengths.data(), nullptr}; }
};

// Random tokens and targets; about a quarter of the targets are -1 (not scored), and so is the
// whole first position of every example.
inline Batch random_batch(int B, int T, int V, uint64_t seed) {
  std::mt19937_64 gen(seed);
  Batch b{B, T, {}, {}, {}};
  for (int i = 0; i < B * T; ++i) {
    b.tokens.push_back(static_cast<int32_t>(gen() % V));
    const bool scored = (i % T) != 0 && gen() % 4 != 0;
    b.targets.push_back(scored ? static_cast<int32_t>(gen() % V) : model::kNotScored);
  }
  return b;
}

// Overwrites every parameter with N(0, sd) values (norm weights 1 + N(0, sd)): larger than the
// init, so that every path (softmax saturation, GeLU curvature) is exercised by the checks.
template <typename S>
void randomize(model::BasicModel<S>& m, uint64_t seed, double sd = 0.5) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd(0.0, sd);
  for (const auto& p : m.layout().tensors()) {
    const bool norm_weight = p.name.find("ln") != std::string::npos && p.name.find(".weight") != std::string::npos;
    for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] = static_cast<S>((norm_weight ? 1.0 : 0.0) + nd(gen));
  }
}

inline double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// A smooth random curve on the keypoints of `sc`: base(x) + Σ_m a_m·sin(ω_m·x + c_m), so that
// the slopes change smoothly from one segment to the next (model.md's advice for comparisons).
template <typename F>
std::vector<double> smooth_values(const model::SplineConfig& sc, uint64_t seed, F base, double amplitude) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> w(0.5, 2.0), c(0.0, 6.28), a(-amplitude, amplitude);
  double am[3], om[3], cm[3];
  for (int m = 0; m < 3; ++m) am[m] = a(gen), om[m] = w(gen), cm[m] = c(gen);
  std::vector<double> v;
  for (int k = 0; k < sc.keypoints; ++k) {
    const double x = -sc.range + k * sc.step();
    double y = base(x);
    for (int m = 0; m < 3; ++m) y += am[m] * std::sin(om[m] * x + cm[m]);
    v.push_back(y);
  }
  return v;
}

// Sets every spline of `m` to smooth random values: the MLP's around gelu, the attention's
// positive (≥ 0.3: the |·|-normalised attentions are ill-conditioned where Σ|φ| nears 0) or, with
// mixed_sign, crossing zero.
template <typename S>
void randomize_splines(model::BasicModel<S>& m, uint64_t seed, bool mixed_sign = false) {
  for (const auto& p : m.layout().tensors()) {
    if (p.spline == model::SplineSite::None) continue;
    std::vector<double> v;
    if (p.spline == model::SplineSite::Mlp)
      v = smooth_values(m.config().mlp_spline, seed + p.offset, gelu_exact, 0.3);
    else if (mixed_sign)
      v = smooth_values(m.config().attn_spline, seed + p.offset, [](double x) { return 0.3 + 0.8 * std::sin(x); }, 0.1);
    else
      v = smooth_values(m.config().attn_spline, seed + p.offset, [](double x) { return 1.2 + 0.5 * std::tanh(x); },
                        0.15);
    for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] = static_cast<S>(v[i]);
  }
}

// A batch of rows of different lengths (right-padded to T): row b is lengths[b] long, its
// padding positions hold random tokens and targets -1 (not scored).
inline Batch mixed_length_batch(const std::vector<int32_t>& lengths, int T, int V, uint64_t seed) {
  Batch b = random_batch(static_cast<int>(lengths.size()), T, V, seed);
  b.lengths = lengths;
  for (int r = 0; r < b.B; ++r)
    for (int t = lengths[static_cast<size_t>(r)]; t < T; ++t) b.targets[static_cast<size_t>(r) * T + t] = model::kNotScored;
  return b;
}

// Losses of `steps` AdamW steps (init seed 7, warm-up 3, lr 3e-3) on the batches make_batch(s),
// and the final parameters, with `threads` OpenMP threads.
template <typename MakeBatch>
std::pair<std::vector<float>, std::vector<float>> train_with_threads(const model::ModelConfig& cfg, int threads,
                                                                     int steps, MakeBatch make_batch) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  model::Model m(cfg);
  m.init(7);
  model::AdamW opt(m.layout());
  model::TrainSettings st;
  st.steps = steps;
  st.warmup = 3;
  st.lr = 3e-3;
  std::vector<float> losses;
  for (int s = 0; s < steps; ++s) {
    const Batch b = make_batch(s);
    losses.push_back(static_cast<float>(
        model::train_step(m, opt, b.tokens.data(), b.targets.data(), b.B, b.T, s, st, b.rows()).loss));
  }
  omp_set_num_threads(saved);
  return {losses, std::vector<float>(m.params(), m.params() + m.num_params())};
}

// ---- a plain reference forward pass (double, loops only), straight from model.md ----
// (and chomsky.md §7.3 for `causal: false`: each query reads every key of its own example,
// j < the row's length, and ALiBi's term is symmetric; and for `relative` positions)
struct Reference {
  std::vector<double> logits;  // (B,T,V)
  double loss = 0;
};

template <typename S>
Reference reference_forward(const model::BasicModel<S>& m, const Batch& batch) {
  using namespace model;
  const ModelConfig& c = m.config();
  const int B = batch.B, T = batch.T, V = c.vocab, d = c.d_model, H = c.heads, hs = d / H, F = c.mlp_hidden();
  auto P = [&](const std::string& name) {
    auto s = m.param(name);
    return std::vector<double>(s.begin(), s.end());
  };
  auto norm = [&](const std::vector<double>& x, const std::string& prefix) {  // one row
    const auto w = P(prefix + ".weight");
    std::vector<double> y(d);
    if (c.norm == Norm::Layer) {
      const auto b = P(prefix + ".bias");
      double mean = 0, var = 0;
      for (double v : x) mean += v / d;
      for (double v : x) var += (v - mean) * (v - mean) / d;
      for (int i = 0; i < d; ++i) y[i] = (x[i] - mean) / std::sqrt(var + 1e-5) * w[i] + b[i];
    } else {
      double ms = 0;
      for (double v : x) ms += v * v / d;
      for (int i = 0; i < d; ++i) y[i] = w[i] * x[i] / std::sqrt(ms + 1e-5);
    }
    return y;
  };
  auto linear = [&](const std::vector<double>& x, const std::string& prefix, int out) {
    const auto W = P(prefix + ".weight"), bias = P(prefix + ".bias");
    const int in = static_cast<int>(x.size());
    std::vector<double> y(out);
    for (int o = 0; o < out; ++o) {
      double s = bias[o];
      for (int i = 0; i < in; ++i) s += W[static_cast<size_t>(o) * in + i] * x[i];
      y[o] = s;
    }
    return y;
  };
  Reference ref;
  ref.logits.assign(static_cast<size_t>(B) * T * V, 0.0);
  double total = 0;
  int count = 0;
  for (int b = 0; b < B; ++b) {
    std::vector<std::vector<double>> h(T, std::vector<double>(d));
    const auto tok = P("tok_emb");
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < d; ++i) {
        double v = tok[static_cast<size_t>(batch.tokens[b * T + t]) * d + i];
        if (c.position == Position::Learned) v += P("pos_emb")[static_cast<size_t>(t) * d + i];
        if (c.position == Position::Sinusoidal) {
          const double w = std::pow(10000.0, -2.0 * (i / 2) / d);
          v += i % 2 == 0 ? std::sin(t * w) : std::cos(t * w);
        }
        h[t][i] = v;
      }
    std::vector<std::vector<std::vector<double>>> raw_k, raw_v;  // LIMe: [layer][t] before mixing
    for (int l = 0; l < c.layers; ++l) {
      const std::string pre = "blocks." + std::to_string(l) + ".";
      std::vector<std::vector<double>> q(T), k(T), v(T);
      for (int t = 0; t < T; ++t) {
        const auto a = norm(h[t], pre + "ln1");
        q[t] = linear(a, pre + "attn.q", d);
        k[t] = linear(a, pre + "attn.k", d);
        v[t] = linear(a, pre + "attn.v", d);
      }
      if (c.lime == Lime::Static) {  // k_{l,i} = Σ_{m≤l} Σ_j W_l[i, m·H + j] k̂_{m,j}, values likewise
        raw_k.push_back(k);
        raw_v.push_back(v);
        if (l >= 1) {
          const auto W = P(pre + "attn.router");
          const int cols = (l + 1) * H;
          for (int t = 0; t < T; ++t)
            for (int i = 0; i < H; ++i)
              for (int e = 0; e < hs; ++e) {
                double sk = 0, sv = 0;
                for (int m = 0; m <= l; ++m)
                  for (int j = 0; j < H; ++j) {
                    sk += W[static_cast<size_t>(i) * cols + m * H + j] * raw_k[m][t][j * hs + e];
                    sv += W[static_cast<size_t>(i) * cols + m * H + j] * raw_v[m][t][j * hs + e];
                  }
                k[t][i * hs + e] = sk;
                v[t][i * hs + e] = sv;
              }
        }
      }
      for (int t = 0; t < T; ++t) {
        if (c.position == Position::Rope)
          for (auto* x : {&q[t], &k[t]})
            for (int hh = 0; hh < H; ++hh)
              for (int i = 0; 2 * i < hs; ++i) {
                const double ang = t * std::pow(10000.0, -2.0 * i / hs);
                double& x0 = (*x)[hh * hs + 2 * i];
                double& x1 = (*x)[hh * hs + 2 * i + 1];
                const double a0 = x0, a1 = x1;
                x0 = a0 * std::cos(ang) - a1 * std::sin(ang);
                x1 = a0 * std::sin(ang) + a1 * std::cos(ang);
              }
      }
      // relative (chomsky.md §7.3): p_r = W_R·R_r, R_r = [sin(r ω_k) | cos(r ω_k)], ω_k = 10000^(−2k/d)
      std::vector<double> rel_u, rel_v, rel_w;
      if (c.position == Position::Relative)
        rel_u = P(pre + "attn.rel.u"), rel_v = P(pre + "attn.rel.v"), rel_w = P(pre + "attn.rel.proj.weight");
      auto rel_p = [&](int r, int f) {  // feature f of W_R·R_r
        double s = 0;
        for (int g = 0; g < d; ++g) {
          const double w = std::pow(10000.0, -2.0 * (g % (d / 2)) / d);
          s += rel_w[static_cast<size_t>(f) * d + g] * (g < d / 2 ? std::sin(r * w) : std::cos(r * w));
        }
        return s;
      };
      std::vector<std::vector<double>> y(T, std::vector<double>(d, 0.0));
      const int length = batch.lengths.empty() ? T : batch.lengths[static_cast<size_t>(b)];
      for (int hh = 0; hh < H; ++hh) {
        const double slope = std::pow(2.0, -8.0 * (hh + 1) / H);
        for (int i = 0; i < T; ++i) {
          const int end = c.causal ? i + 1 : length;  // keys j < end
          std::vector<double> s(end);
          double mx = -1e300;
          for (int j = 0; j < end; ++j) {
            double dot = 0;
            for (int e = 0; e < hs; ++e) dot += q[i][hh * hs + e] * k[j][hh * hs + e];
            if (c.position == Position::Relative)
              for (int e = 0; e < hs; ++e)
                dot += rel_u[hh * hs + e] * k[j][hh * hs + e] +
                       (q[i][hh * hs + e] + rel_v[hh * hs + e]) * rel_p(i - j, hh * hs + e);
            s[j] = dot / std::sqrt(static_cast<double>(hs));
            if (c.position == Position::Alibi)
              s[j] += c.causal ? -slope * (i - j) : slope * (-std::abs(i - j) + (j < i ? 0.5 : 0.0));
            mx = std::max(mx, s[j]);
          }
          double z = 0;
          for (int j = 0; j < end; ++j) z += std::exp(s[j] - mx);
          for (int j = 0; j < end; ++j)
            for (int e = 0; e < hs; ++e) y[i][hh * hs + e] += std::exp(s[j] - mx) / z * v[j][hh * hs + e];
        }
      }
      for (int t = 0; t < T; ++t) {
        const auto o = linear(y[t], pre + "attn.o", d);
        for (int i = 0; i < d; ++i) h[t][i] += o[i];
        auto f = linear(norm(h[t], pre + "ln2"), pre + "mlp.fc", F);
        for (double& x : f)
          x = c.activation == Activation::Gelu ? 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))) : std::max(x, 0.0);
        const auto p = linear(f, pre + "mlp.proj", d);
        for (int i = 0; i < d; ++i) h[t][i] += p[i];
      }
    }
    for (int t = 0; t < T; ++t) {
      const auto z = linear(norm(h[t], "ln_f"), "head", V);
      for (int i = 0; i < V; ++i) ref.logits[(static_cast<size_t>(b) * T + t) * V + i] = z[i];
      const int y = batch.targets[b * T + t];
      if (y < 0) continue;
      double mx = -1e300, s = 0;
      for (double x : z) mx = std::max(mx, x);
      for (double x : z) s += std::exp(x - mx);
      total += mx + std::log(s) - z[y];
      ++count;
    }
  }
  ref.loss = count ? total / count : 0.0;
  return ref;
}

// A layer's tensors by name, each flat (the linear-recurrent mixer tests): at(name) is the tensor,
// or an empty vector for one the layer does not have.
struct NamedTensors {
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
  std::vector<double>& at(const std::string& n) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == n) return values[i];
    static std::vector<double> none;
    return none;
  }
};

}  // namespace srbench::test
