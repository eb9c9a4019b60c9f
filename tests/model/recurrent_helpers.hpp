// Shared helpers for the recurrent models' tests (recurrent.md): small configurations of every
// arch, parameters perturbed to O(1), right-padded batches with per-row input lengths, the loss's
// central difference, an independent plain-loop reference forward pass written from
// recurrent.md's equations (double, one example and one step at a time), and the float-vs-double,
// padding and threads check the recurrent and linear-recurrent models share.
#pragma once

#include <omp.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace srbench::test {

inline const std::vector<model::Arch> kRecurrentArchs = {model::Arch::Rnn, model::Arch::Lstm, model::Arch::Gru,
                                                         model::Arch::StackRnn, model::Arch::TapeRnn};

// A small config of `arch`: V 5, d 4, 2 layers; stack of 2 cells of 2 (2·2 < T in the tests);
// tape of 3 cells of 2, write MLP 4.
inline model::ModelConfig recurrent_config(model::Arch arch, int layers = 2, int d = 4) {
  model::ModelConfig c;
  c.vocab = 5;
  c.arch = arch;
  c.layers = layers;
  c.d_model = d;
  c.max_len = 64;
  c.stack_size = 2;
  c.stack_cell_size = 2;
  c.tape_size = 3;
  c.tape_cell_size = 2;
  c.tape_mlp = 4;
  return c;
}

// Every matrix N(0, 1/fan_in), every bias N(0, 0.3²), tok_emb N(0, 1): pre-activations O(1).
template <typename S>
void perturb(model::BasicModel<S>& m, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  for (const auto& p : m.layout().tensors()) {
    const double sd = p.name == "tok_emb" ? 1.0 : p.shape.size() == 2 ? 1.0 / std::sqrt(double(p.shape[1])) : 0.3;
    for (size_t i = 0; i < p.size; ++i) m.params()[p.offset + i] = static_cast<S>(sd * nd(gen));
  }
}

struct RowBatch {
  int B = 0, T = 0;
  std::vector<int32_t> tokens, targets, lengths, input_lengths;
  RowLengths rows() const {
    return {lengths.empty() ? nullptr : lengths.data(), input_lengths.empty() ? nullptr : input_lengths.data()};
  }
};

// Random tokens; row b is lengths[b] long (right padding after it: targets −1, random tokens),
// one more unscored position inside row 0; input_lengths as given (may be empty).
inline RowBatch padded_batch(int B, int T, int V, uint64_t seed, std::vector<int32_t> lengths,
                             std::vector<int32_t> input_lengths = {}) {
  std::mt19937_64 gen(seed);
  RowBatch b{B, T, {}, {}, std::move(lengths), std::move(input_lengths)};
  for (int i = 0; i < B * T; ++i) {
    b.tokens.push_back(static_cast<int32_t>(gen() % V));
    const bool real = i % T < b.lengths[i / T];
    b.targets.push_back(real ? static_cast<int32_t>(gen() % V) : model::kNotScored);
  }
  b.targets[1] = model::kNotScored;
  return b;
}

template <typename S>
double loss_at(model::BasicModel<S>& m, const RowBatch& b) {
  return m.forward(b.tokens.data(), b.targets.data(), b.B, b.T, b.rows());
}

// ---- the plain reference: recurrent.md, one example and one step at a time (double) ----
namespace ref {

using Vec = std::vector<double>;

template <typename S>
Vec tensor(const model::BasicModel<S>& m, const std::string& name) {
  const auto s = m.param(name);
  return Vec(s.begin(), s.end());
}
// y = W x + b, W (rows × x.size()) row-major
inline Vec affine(const Vec& W, const Vec& b, const Vec& x) {
  const size_t n = x.size(), rows = W.size() / n;
  Vec y(rows);
  for (size_t r = 0; r < rows; ++r) {
    double s = b.empty() ? 0.0 : b[r];
    for (size_t i = 0; i < n; ++i) s += W[r * n + i] * x[i];
    y[r] = s;
  }
  return y;
}
inline double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }
inline Vec softmax(Vec v) {
  const double mx = *std::max_element(v.begin(), v.end());
  double z = 0;
  for (double& x : v) z += (x = std::exp(x - mx));
  for (double& x : v) x /= z;
  return v;
}
inline Vec add(Vec a, const Vec& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// One layer over the sequence xs (T vectors of d): its outputs. L: the example's input length.
template <typename S>
std::vector<Vec> layer(const model::BasicModel<S>& m, int l, const std::vector<Vec>& xs, int L) {
  using model::Arch;
  const model::ModelConfig& c = m.config();
  const int d = c.d_model;
  const std::string p = "rnn." + std::to_string(l) + ".";
  const Vec Wih = tensor(m, p + "weight_ih"), Whh = tensor(m, p + "weight_hh"), bih = tensor(m, p + "bias_ih"),
            bhh = tensor(m, p + "bias_hh");
  Vec h(d, 0.0), cell(d, 0.0);
  const int n = c.arch == Arch::StackRnn ? c.stack_size : c.tape_size;
  const int w = c.arch == Arch::StackRnn ? c.stack_cell_size : c.tape_cell_size;
  std::vector<Vec> mem(n, Vec(w, 0.0));  // S[i] or M[i]
  std::vector<Vec> out;
  for (const Vec& x : xs) {
    if (c.arch == Arch::Rnn) {
      const Vec a = add(affine(Wih, bih, x), affine(Whh, bhh, h));
      for (int i = 0; i < d; ++i) h[i] = c.nonlinearity == model::Nonlinearity::Relu ? std::max(a[i], 0.0) : std::tanh(a[i]);
    } else if (c.arch == Arch::Lstm) {
      const Vec a = add(affine(Wih, bih, x), affine(Whh, bhh, h));
      for (int i = 0; i < d; ++i) {
        const double ig = sigmoid(a[i]), fg = sigmoid(a[d + i]), gg = std::tanh(a[2 * d + i]), og = sigmoid(a[3 * d + i]);
        cell[i] = fg * cell[i] + ig * gg;
        h[i] = og * std::tanh(cell[i]);
      }
    } else if (c.arch == Arch::Gru) {
      const Vec ax = affine(Wih, bih, x), ah = affine(Whh, bhh, h);
      for (int i = 0; i < d; ++i) {
        const double r = sigmoid(ax[i] + ah[i]), z = sigmoid(ax[d + i] + ah[d + i]);
        const double nn = std::tanh(ax[2 * d + i] + r * ah[2 * d + i]);
        h[i] = (1 - z) * nn + z * h[i];
      }
    } else {  // stack_rnn, tape_rnn: u = [x ; mem[0]], ReLU controller
      Vec u = x;
      u.insert(u.end(), mem[0].begin(), mem[0].end());
      const Vec a = add(affine(Wih, bih, u), affine(Whh, bhh, h));
      for (int i = 0; i < d; ++i) h[i] = std::max(a[i], 0.0);
      if (c.arch == Arch::StackRnn) {
        const Vec pv = affine(tensor(m, p + "stack.push.weight"), tensor(m, p + "stack.push.bias"), h);
        const Vec act = softmax(affine(tensor(m, p + "stack.action.weight"), tensor(m, p + "stack.action.bias"), h));
        std::vector<Vec> next(n, Vec(w, 0.0));
        for (int i = 0; i < n; ++i)
          for (int k = 0; k < w; ++k) {
            const double pushed = i == 0 ? pv[k] : mem[i - 1][k];
            const double popped = i + 1 < n ? mem[i + 1][k] : 0.0;
            next[i][k] = act[0] * pushed + act[1] * popped + act[2] * mem[i][k];
          }
        mem = next;
      } else {
        Vec z1 = affine(tensor(m, p + "tape.write1.weight"), tensor(m, p + "tape.write1.bias"), h);
        for (double& v : z1) v = std::max(v, 0.0);
        Vec z2 = affine(tensor(m, p + "tape.write2.weight"), tensor(m, p + "tape.write2.bias"), z1);
        for (double& v : z2) v = std::max(v, 0.0);
        const Vec wv = affine(tensor(m, p + "tape.write3.weight"), tensor(m, p + "tape.write3.bias"), z2);
        const Vec pi = softmax(affine(tensor(m, p + "tape.action.weight"), tensor(m, p + "tape.action.bias"), h));
        std::vector<Vec> Mp = mem;
        Mp[0] = wv;
        auto at = [&](int r) -> const Vec& { return Mp[((r % n) + n) % n]; };
        for (int i = 0; i < n; ++i)
          for (int k = 0; k < w; ++k)
            mem[i][k] = pi[0] * at(i)[k] + pi[1] * at(i + 1)[k] + pi[2] * at(i - 1)[k] + pi[3] * at(i + L)[k] +
                        pi[4] * at(i - L)[k];
      }
    }
    out.push_back(h);
  }
  return out;
}

struct Result {
  std::vector<double> logits;  // (B,T,V)
  double loss = 0;
};

template <typename S>
Result forward(const model::BasicModel<S>& m, const RowBatch& b) {
  const model::ModelConfig& c = m.config();
  const int d = c.d_model, V = c.vocab;
  const Vec emb = tensor(m, "tok_emb"), Wh = tensor(m, "head.weight"), bh = tensor(m, "head.bias");
  Result r;
  double total = 0;
  int count = 0;
  for (int e = 0; e < b.B; ++e) {
    std::vector<Vec> xs;
    for (int t = 0; t < b.T; ++t) {
      const int tok = b.tokens[e * b.T + t];
      xs.emplace_back(emb.begin() + tok * d, emb.begin() + (tok + 1) * d);
    }
    const int L = b.input_lengths.empty() ? b.T : b.input_lengths[e];
    for (int l = 0; l < c.layers; ++l) xs = layer(m, l, xs, L);
    for (int t = 0; t < b.T; ++t) {
      const Vec z = affine(Wh, bh, xs[t]);
      r.logits.insert(r.logits.end(), z.begin(), z.end());
      const int y = b.targets[e * b.T + t];
      if (y < 0) continue;
      const double mx = *std::max_element(z.begin(), z.end());
      double s = 0;
      for (double v : z) s += std::exp(v - mx);
      total += mx + std::log(s) - z[y];
      ++count;
    }
  }
  (void)V;
  r.loss = count ? total / count : 0.0;
  return r;
}

}  // namespace ref

// The float model `mf` (its parameters the double model's `md`, rounded) on batch `b`: its loss
// within 1e-5 of the double one's; its loss and gradients bit for bit the same when the padded
// positions hold other tokens; and the same bits at 1 and 2 threads on a batch of 8 × T_big large
// enough for the parallel paths.
inline void check_float_padding_threads(model::BasicModel<double>& md, model::BasicModel<float>& mf,
                                        const RowBatch& b, int T_big = 40) {
  const int V = md.config().vocab;
  for (size_t i = 0; i < md.num_params(); ++i) mf.params()[i] = static_cast<float>(md.params()[i]);
  const double ld = loss_at(md, b), lf = loss_at(mf, b);
  CHECK(lf == Approx(ld).epsilon(1e-5));
  auto grads_of = [&](const RowBatch& x) {
    mf.zero_grads();
    const float l = mf.forward_backward(x.tokens.data(), x.targets.data(), x.B, x.T, true, x.rows());
    std::vector<float> g(mf.grads(), mf.grads() + mf.num_params());
    g.push_back(l);
    return g;
  };
  const std::vector<float> g1 = grads_of(b);
  RowBatch other = b;
  for (int i = 0; i < b.B * b.T; ++i)
    if (i % b.T >= b.lengths[static_cast<size_t>(i / b.T)])
      other.tokens[static_cast<size_t>(i)] = (b.tokens[static_cast<size_t>(i)] + 1) % V;
  CHECK(std::memcmp(g1.data(), grads_of(other).data(), g1.size() * sizeof(float)) == 0);
  const RowBatch big = padded_batch(8, T_big, V, 3, {T_big, T_big - 1, 20, T_big, 11, T_big, 25, 7});
  omp_set_num_threads(1);
  const std::vector<float> one = grads_of(big);
  omp_set_num_threads(2);
  const std::vector<float> two = grads_of(big);
  omp_set_num_threads(1);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}

}  // namespace srbench::test
