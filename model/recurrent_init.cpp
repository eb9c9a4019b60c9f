// The recurrent stack's parameter layout and init (recurrent.md, "Checkpoint" and "Init").
//
// Layout, in buffer order (d = d_model, V vocabulary, G gates: rnn 1, lstm 4, gru 3, stack_rnn
// and tape_rnn 1; c = the memory's cell size, k = tape_mlp):
//   tok_emb [V,d]
//   per layer l: rnn.{l}.weight_ih [G·d,d] (stack_rnn, tape_rnn: [d, d+c], columns x | read)
//                rnn.{l}.weight_hh [G·d,d]  rnn.{l}.bias_ih [G·d]  rnn.{l}.bias_hh [G·d]
//     stack_rnn: rnn.{l}.stack.push.weight [c,d]  rnn.{l}.stack.action.weight [3,d]
//                rnn.{l}.stack.push.bias [c]      rnn.{l}.stack.action.bias [3]
//     tape_rnn:  rnn.{l}.tape.write1.weight [k,d] rnn.{l}.tape.action.weight [5,d]
//                rnn.{l}.tape.write1.bias [k]     rnn.{l}.tape.action.bias [5]
//                rnn.{l}.tape.write2.weight [k,k] rnn.{l}.tape.write2.bias [k]
//                rnn.{l}.tape.write3.weight [c,k] rnn.{l}.tape.write3.bias [c]
//   head.weight [V,d]  head.bias [V]
// (The push and action weights are adjacent, one (c+3, d) matrix, as are their biases; likewise
// write1 and the tape's action.) Weight decay on every weight and tok_emb, no bias; all in the
// main group.
#include <cmath>
#include <string>

#include "model/params.hpp"
#include "model/init_random.hpp"
#include "model/recurrent.hpp"

namespace srbench::model {

void ParamLayout::add_recurrent(const ModelConfig& cfg) {
  const int64_t V = cfg.vocab, d = cfg.d_model;
  const int64_t G = cfg.arch == Arch::Lstm ? 4 : cfg.arch == Arch::Gru ? 3 : 1;
  const int64_t c = cfg.arch == Arch::StackRnn ? cfg.stack_cell_size : cfg.arch == Arch::TapeRnn ? cfg.tape_cell_size : 0;
  add("tok_emb", {V, d}, true);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string p = "rnn." + std::to_string(l) + ".";
    add(p + "weight_ih", {G * d, d + c}, true);
    add(p + "weight_hh", {G * d, d}, true);
    add(p + "bias_ih", {G * d}, false);
    add(p + "bias_hh", {G * d}, false);
    if (cfg.arch == Arch::StackRnn) {
      add(p + "stack.push.weight", {c, d}, true);
      add(p + "stack.action.weight", {3, d}, true);
      add(p + "stack.push.bias", {c}, false);
      add(p + "stack.action.bias", {3}, false);
    } else if (cfg.arch == Arch::TapeRnn) {
      const int64_t k = cfg.tape_mlp;
      add(p + "tape.write1.weight", {k, d}, true);
      add(p + "tape.action.weight", {5, d}, true);
      add(p + "tape.write1.bias", {k}, false);
      add(p + "tape.action.bias", {5}, false);
      add(p + "tape.write2.weight", {k, k}, true);
      add(p + "tape.write2.bias", {k}, false);
      add(p + "tape.write3.weight", {c, k}, true);
      add(p + "tape.write3.bias", {c}, false);
    }
  }
  add("head.weight", {V, d}, true);
  add("head.bias", {V}, false);
  spline_block_.offset = total_;
}

// recurrent.md's init, one generator over the tensors in layout order:
// - tok_emb, head.weight N(0, 0.02), head.bias 0 (every arch);
// - rnn, lstm, gru (PyTorch's default): every weight_ih, weight_hh, bias_ih, bias_hh U(−k, k),
//   k = 1/√d;
// - stack_rnn, tape_rnn (Haiku's Linear default): every other weight z/√fan_in, fan_in its
//   columns, z ~ N(0, 1) redrawn while |z| > 2; every other bias 0.
template <typename S>
void RecurrentStack<S>::init(S* params, uint64_t seed) const {
  InitRandom rng(seed);
  const bool torch_init = cfg_.arch == Arch::Rnn || cfg_.arch == Arch::Lstm || cfg_.arch == Arch::Gru;
  const double k = 1.0 / std::sqrt(static_cast<double>(cfg_.d_model));
  for (const auto& p : layout_.tensors()) {
    S* x = params + p.offset;
    const bool ends = p.name == "tok_emb" || p.name.rfind("head.", 0) == 0;
    if (ends) {
      for (size_t i = 0; i < p.size; ++i) x[i] = p.decay ? static_cast<S>(0.02 * rng.normal()) : S(0);
    } else if (torch_init) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(k * (2.0 * rng.uniform() - 1.0));
    } else if (!p.decay) {
      for (size_t i = 0; i < p.size; ++i) x[i] = S(0);
    } else {
      const double scale = 1.0 / std::sqrt(static_cast<double>(p.shape[1]));
      for (size_t i = 0; i < p.size; ++i) {
        double z = rng.normal();
        while (std::abs(z) > 2.0) z = rng.normal();
        x[i] = static_cast<S>(scale * z);
      }
    }
  }
}

template void RecurrentStack<float>::init(float*, uint64_t) const;
template void RecurrentStack<double>::init(double*, uint64_t) const;

}  // namespace srbench::model
