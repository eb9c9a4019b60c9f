// Shared helpers for the model tests: tiny configurations, random batches with padding, and
// an independent plain-loop reference forward pass written from model.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/model.hpp"

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

struct Batch {
  int B = 0, T = 0;
  std::vector<int32_t> tokens, targets;
};

// Random tokens and targets; about a quarter of the targets are -1 (not scored), and so is the
// whole first position of every example.
inline Batch random_batch(int B, int T, int V, uint64_t seed) {
  std::mt19937_64 gen(seed);
  Batch b{B, T, {}, {}};
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

// The central difference of the loss in parameter i (flat index) with probe h: the parameter is
// restored afterwards. plus, minus: the losses at x ± h (for one-sided differences).
struct Probe {
  double fd = 0, plus = 0, minus = 0;
};
template <typename S>
Probe probe(model::BasicModel<S>& m, const Batch& batch, size_t i, double h) {
  S& x = m.params()[i];
  const S x0 = x;
  Probe p;
  x = x0 + h;
  p.plus = m.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
  x = x0 - h;
  p.minus = m.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
  x = x0;
  p.fd = (p.plus - p.minus) / (2 * h);
  return p;
}

// ---- a plain reference forward pass (double, loops only), straight from model.md ----
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
      std::vector<std::vector<double>> y(T, std::vector<double>(d, 0.0));
      for (int hh = 0; hh < H; ++hh) {
        const double slope = std::pow(2.0, -8.0 * (hh + 1) / H);
        for (int i = 0; i < T; ++i) {
          std::vector<double> s(i + 1);
          double mx = -1e300;
          for (int j = 0; j <= i; ++j) {
            double dot = 0;
            for (int e = 0; e < hs; ++e) dot += q[i][hh * hs + e] * k[j][hh * hs + e];
            s[j] = dot / std::sqrt(static_cast<double>(hs));
            if (c.position == Position::Alibi) s[j] -= slope * (i - j);
            mx = std::max(mx, s[j]);
          }
          double z = 0;
          for (int j = 0; j <= i; ++j) z += std::exp(s[j] - mx);
          for (int j = 0; j <= i; ++j)
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

}  // namespace srbench::test
