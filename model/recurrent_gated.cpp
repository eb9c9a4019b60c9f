// The gated cells of recurrent.md (torch.nn.RNN, LSTM, GRU), one class for the three: the input
// projection of all steps as one product, a recurrent product per step on a range of examples,
// one fused elementwise pass per step, and the weight and input gradients of the whole sequence
// as one product each.
//
// Shapes (recurrent.hpp): C = d_model, G gates (rnn 1, lstm 4, gru 3), GC = G·C; W_ih, W_hh are
// (GC, C) with gate blocks of C rows; per-layer tensors [R][T·B], column t·B + b.
//   rnn:  h' = φ(W_ih x + b_ih + W_hh h + b_hh)
//   lstm: i|f|g|o = σ|σ|tanh|σ(W_ih x + b_ih + W_hh h + b_hh);  c' = f⊙c + i⊙g;  h' = o⊙tanh(c')
//   gru:  r|z = σ(W_i x + b_i + W_h h + b_h);  n = tanh(W_in x + b_in + r⊙(W_hn h + b_hn));
//         h' = (1−z)⊙n + z⊙h
#include <string>

#include "model/buffers.hpp"
#include "model/recurrent.hpp"
#include "model/recurrent_kernels.hpp"

namespace srbench::model {

namespace {

using namespace recurrent;

enum class Gated { Rnn, Lstm, Gru };

// ---- the fused elementwise passes of one step, n examples of one unit ------------------------
// Free functions with restrict pointers, so that the compiler vectorises them (the gates of a
// unit are rows T·B apart in one buffer, which it could not prove disjoint). prev: the state of
// step t−1, a row of zeros at t = 0 (no branch in the loop).
#define SRB_NOALIAS __restrict__

// lstm: g* hold the pre-activations (+ the biases b*) and get the gates.
template <typename S>
__attribute__((noinline)) void lstm_forward_row(int n, S* SRB_NOALIAS gi, S* SRB_NOALIAS gf, S* SRB_NOALIAS gg,
                                                S* SRB_NOALIAS go, S bi, S bf, S bg, S bo, const S* SRB_NOALIAS cprev,
                                                S* SRB_NOALIAS c, S* SRB_NOALIAS tc, S* SRB_NOALIAS h) {
  for (int j = 0; j < n; ++j) {
    const S i = sigmoid_(gi[j] + bi), f = sigmoid_(gf[j] + bf), g = tanh_(gg[j] + bg), o = sigmoid_(go[j] + bo);
    const S cn = f * cprev[j] + i * g, tcn = tanh_(cn);
    gi[j] = i, gf[j] = f, gg[j] = g, go[j] = o;
    c[j] = cn, tc[j] = tcn;
    h[j] = o * tcn;
  }
}

// lstm backward: from ∂loss/∂h = dy + dh and ∂loss/∂c (dc, through the recurrence), the
// pre-activations' gradients d*, and ∂loss/∂c_{t−1} into dc.
template <typename S>
__attribute__((noinline)) void lstm_backward_row(int n, const S* SRB_NOALIAS gi, const S* SRB_NOALIAS gf,
                                                 const S* SRB_NOALIAS gg, const S* SRB_NOALIAS go,
                                                 const S* SRB_NOALIAS cprev, const S* SRB_NOALIAS tc,
                                                 const S* SRB_NOALIAS dy, const S* SRB_NOALIAS dh, S* SRB_NOALIAS dc,
                                                 S* SRB_NOALIAS di, S* SRB_NOALIAS df, S* SRB_NOALIAS dg,
                                                 S* SRB_NOALIAS dout) {
  for (int j = 0; j < n; ++j) {
    const S i = gi[j], f = gf[j], g = gg[j], o = go[j];
    const S dhj = dy[j] + dh[j];                             // h = o ⊙ tanh(c)
    const S dcj = dc[j] + dhj * o * (S(1) - tc[j] * tc[j]);  // c = f ⊙ c_{t−1} + i ⊙ g
    di[j] = dcj * g * i * (S(1) - i);
    df[j] = dcj * cprev[j] * f * (S(1) - f);
    dg[j] = dcj * i * (S(1) - g * g);
    dout[j] = dhj * tc[j] * o * (S(1) - o);
    dc[j] = dcj * f;
  }
}

// gru: x* the input side's pre-activations (get r, z, n), h* the hidden side's W_hh h (hn gets
// W_hn h + b_hn), out the new h.
template <typename S>
__attribute__((noinline)) void gru_forward_row(int n, S* SRB_NOALIAS xr, S* SRB_NOALIAS xz, S* SRB_NOALIAS xn,
                                               const S* SRB_NOALIAS hr, const S* SRB_NOALIAS hz, S* SRB_NOALIAS hn,
                                               S bir, S biz, S bin, S bhr, S bhz, S bhn, const S* SRB_NOALIAS hprev,
                                               S* SRB_NOALIAS out) {
  for (int j = 0; j < n; ++j) {
    const S r = sigmoid_((xr[j] + bir) + (hr[j] + bhr)), z = sigmoid_((xz[j] + biz) + (hz[j] + bhz));
    const S hnj = hn[j] + bhn, nn = tanh_((xn[j] + bin) + r * hnj);
    xr[j] = r, xz[j] = z, xn[j] = nn, hn[j] = hnj;
    out[j] = (S(1) - z) * nn + z * hprev[j];
  }
}

// gru backward: the input side's gradients d*, the hidden side's dh*, and z ⊙ ∂loss/∂h into dh
// (its direct path to h_{t−1}).
template <typename S>
__attribute__((noinline)) void gru_backward_row(int n, const S* SRB_NOALIAS gr, const S* SRB_NOALIAS gz,
                                                const S* SRB_NOALIAS gn, const S* SRB_NOALIAS hn,
                                                const S* SRB_NOALIAS hprev, const S* SRB_NOALIAS dy, S* SRB_NOALIAS dh,
                                                S* SRB_NOALIAS dr, S* SRB_NOALIAS dz, S* SRB_NOALIAS dn,
                                                S* SRB_NOALIAS dhr, S* SRB_NOALIAS dhz, S* SRB_NOALIAS dhn) {
  for (int j = 0; j < n; ++j) {
    const S r = gr[j], z = gz[j], nn = gn[j];
    const S dhj = dy[j] + dh[j];                        // h = (1 − z) ⊙ n + z ⊙ h_{t−1}
    const S dnp = dhj * (S(1) - z) * (S(1) - nn * nn);  // n = tanh(x_n + r ⊙ hn)
    const S drp = dnp * hn[j] * r * (S(1) - r);
    const S dzp = dhj * (hprev[j] - nn) * z * (S(1) - z);
    dr[j] = drp, dz[j] = dzp, dn[j] = dnp;
    dhr[j] = drp, dhz[j] = dzp, dhn[j] = dnp * r;
    dh[j] = dhj * z;
  }
}

// rnn: h = φ(h + bias) in place; backward dg = ∂loss/∂ the pre-activation.
template <typename S>
__attribute__((noinline)) void rnn_forward_row(int n, S* SRB_NOALIAS h, S bias, bool relu) {
  if (relu)
    for (int j = 0; j < n; ++j) h[j] = std::max(h[j] + bias, S(0));
  else
    for (int j = 0; j < n; ++j) h[j] = tanh_(h[j] + bias);
}
template <typename S>
__attribute__((noinline)) void rnn_backward_row(int n, const S* SRB_NOALIAS h, const S* SRB_NOALIAS dy,
                                                const S* SRB_NOALIAS dh, S* SRB_NOALIAS dg, bool relu) {
  if (relu)  // relu'(0) = 0
    for (int j = 0; j < n; ++j) dg[j] = h[j] > S(0) ? dy[j] + dh[j] : S(0);
  else
    for (int j = 0; j < n; ++j) dg[j] = (dy[j] + dh[j]) * (S(1) - h[j] * h[j]);
}
#undef SRB_NOALIAS

template <typename S, Gated K>
class GatedCell final : public BufferedCell<S, GatedCell<S, K>> {
 public:
  static constexpr int kGates = K == Gated::Lstm ? 4 : K == Gated::Gru ? 3 : 1;

  GatedCell(const ModelConfig& cfg, const ParamLayout& layout, int l)
      : C_(cfg.d_model), relu_(cfg.nonlinearity == Nonlinearity::Relu), o_(layout, l),
        in_(kGates * cfg.d_model, cfg.d_model, cfg.vocab, l == 0) {}

  const S* output() const override { return out_.data(); }
  void forward(const CellInput<S>& in, const S* P, int B, int T, const int32_t*) override;
  void backward(S* dinp, S* demb, S* G, const S* dout, const CellInput<S>& in, const S* P) override;

  // Every buffer for (B, T): f(vector, elements). rnn keeps its pre-activations in out_.
  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f) {
    const int64_t TB = static_cast<int64_t>(T) * B, C = self.C_;
    InputSide<S>::buffers(self.in_, B, T, need_grads, f);
    f(self.out_, C * TB);
    f(self.zeros_, B);
    if (K != Gated::Rnn) f(self.gates_, kGates * C * TB);
    if (K == Gated::Lstm) f(self.c_, C * TB), f(self.tc_, C * TB);
    if (K == Gated::Gru) f(self.hg_, kGates * C * TB);
    if (!need_grads) return;
    f(self.dg_, kGates * C * TB);
    if (K == Gated::Gru) f(self.dgh_, kGates * C * TB);
    f(self.dh_, C * B);
    if (K == Gated::Lstm) f(self.dc_, C * B);
  }

 private:
  // The pre-activations' buffer: out_ (rnn: activated in place into h), gates_ otherwise.
  S* pre() { return K == Gated::Rnn ? out_.data() : gates_.data(); }
  void step_forward(int t, int b0, int b1, const S* P);
  void step_backward(int t, int b0, int b1, const S* dout);

  int C_;
  bool relu_;  // rnn: φ = relu (else tanh)
  CellOffsets o_;
  InputSide<S> in_;  // W_ih·x
  int B_ = 0, T_ = 0;

  std::vector<S> zeros_;  // [B] the state before step 0
  std::vector<S> out_;    // [C][T·B] h_t
  std::vector<S> gates_;  // [GC][T·B] lstm: i|f|g|o; gru: r|z|n (activated)
  std::vector<S> c_, tc_; // [C][T·B] lstm: c_t, tanh(c_t)
  std::vector<S> hg_;     // [GC][T·B] gru: W_hh h_{t−1} + b_hh (its n block is what r multiplies)
  std::vector<S> dg_;     // [GC][T·B] ∂loss/∂ the pre-activations of the input side
  std::vector<S> dgh_;    // [GC][T·B] gru: ∂loss/∂(W_hh h + b_hh) (rnn, lstm: dg_)
  std::vector<S> dh_, dc_;  // [C][B] ∂loss/∂h_{t−1}, ∂loss/∂c_{t−1} through the recurrence
};

// ---- forward ---------------------------------------------------------------------------------
template <typename S, Gated K>
void GatedCell<S, K>::forward(const CellInput<S>& in, const S* P, int B, int T, const int32_t*) {
  B_ = B;
  T_ = T;
  const int64_t TB = static_cast<int64_t>(T) * B;
  const int C = C_, GC = kGates * C_;
  in_.forward(pre(), P + o_.wih, C, in, TB);  // pre = W_ih x for every step
  const S* whh = P + o_.whh;
  for_example_ranges(B, static_cast<int64_t>(GC) * C * TB >= kMinParallelWork, [&](int b0, int b1) {
    const int nb = b1 - b0;
    for (int t = 0; t < T; ++t) {
      const int64_t col = static_cast<int64_t>(t) * B + b0;
      if (t > 0) {  // W_hh h_{t−1} (h_{−1} = 0): onto pre (rnn, lstm), into hg (gru)
        const Operand<S> h{out_.data() + col - B, TB, 1};
        if (K == Gated::Gru) gemm<S>(GC, nb, C, {whh, C, 1}, h, hg_.data() + col, TB, false);
        else gemm<S>(GC, nb, C, {whh, C, 1}, h, pre() + col, TB, true);
      } else if (K == Gated::Gru) {
        for (int r = 0; r < GC; ++r) std::fill_n(hg_.data() + r * TB + col, nb, S(0));
      }
      step_forward(t, b0, b1, P);
    }
  });
}

// The elementwise pass of step t on examples [b0, b1): the activations from the pre-activations.
template <typename S, Gated K>
void GatedCell<S, K>::step_forward(int t, int b0, int b1, const S* P) {
  const int64_t TB = static_cast<int64_t>(T_) * B_, col = static_cast<int64_t>(t) * B_ + b0;
  const int C = C_, nb = b1 - b0;
  const S *bih = P + o_.bih, *bhh = P + o_.bhh;
  for (int u = 0; u < C; ++u) {
    S* h = out_.data() + u * TB + col;
    const S* hprev = t > 0 ? h - B_ : zeros_.data();
    if constexpr (K == Gated::Rnn) {
      rnn_forward_row(nb, h, bih[u] + bhh[u], relu_);
    } else if constexpr (K == Gated::Lstm) {
      S* gi = gates_.data() + u * TB + col;
      S* c = c_.data() + u * TB + col;
      lstm_forward_row(nb, gi, gi + C * TB, gi + 2 * C * TB, gi + 3 * C * TB, bih[u] + bhh[u], bih[C + u] + bhh[C + u],
                       bih[2 * C + u] + bhh[2 * C + u], bih[3 * C + u] + bhh[3 * C + u],
                       t > 0 ? c - B_ : zeros_.data(), c, tc_.data() + u * TB + col, h);
    } else {  // gru
      S *xr = gates_.data() + u * TB + col, *hr = hg_.data() + u * TB + col;
      gru_forward_row(nb, xr, xr + C * TB, xr + 2 * C * TB, hr, hr + C * TB, hr + 2 * C * TB, bih[u], bih[C + u],
                      bih[2 * C + u], bhh[u], bhh[C + u], bhh[2 * C + u], hprev, h);
    }
  }
}

// ---- backward --------------------------------------------------------------------------------
template <typename S, Gated K>
void GatedCell<S, K>::backward(S* dinp, S* demb, S* G, const S* dout, const CellInput<S>& in, const S* P) {
  const int B = B_, T = T_, C = C_, GC = kGates * C_;
  const int64_t TB = static_cast<int64_t>(T) * B;
  S* dgh = K == Gated::Gru ? dgh_.data() : dg_.data();
  const S* whh = P + o_.whh;
  for_example_ranges(B, static_cast<int64_t>(GC) * C * TB >= kMinParallelWork, [&](int b0, int b1) {
    const int nb = b1 - b0;
    for (int u = 0; u < C; ++u) {
      std::fill_n(dh_.data() + u * B + b0, nb, S(0));
      if (K == Gated::Lstm) std::fill_n(dc_.data() + u * B + b0, nb, S(0));
    }
    for (int t = T - 1; t >= 0; --t) {
      step_backward(t, b0, b1, dout);
      // ∂loss/∂h_{t−1} (+)= W_hhᵀ ∂loss/∂(W_hh h_{t−1}) (gru: onto z ⊙ ∂loss/∂h_t)
      if (t > 0)
        gemm<S>(C, nb, GC, {whh, 1, C}, {dgh + static_cast<int64_t>(t) * B + b0, TB, 1}, dh_.data() + b0, B,
                K == Gated::Gru);
    }
  });
  // The whole sequence at once: dW_hh += dgh_t·h_{t−1}ᵀ (t >= 1), the biases, the input side
  // (dW_ih += dg·xᵀ and ∂loss/∂x).
  gemm_cols<S>(GC, C, static_cast<int>(TB - B), {dgh + B, TB, 1}, {out_.data(), 1, TB}, G + o_.whh, C, true);
  add_row_sums(G + o_.bih, dg_.data(), GC, static_cast<int>(TB), TB);
  add_row_sums(G + o_.bhh, dgh, GC, static_cast<int>(TB), TB);
  in_.backward(dinp, demb, G + o_.wih, C, dg_.data(), P + o_.wih, in, TB);
}

// Step t on examples [b0, b1): from ∂loss/∂h_t = dout + dh (and lstm's dc), the gradients of the
// pre-activations at t, and what passes to t−1 elementwise (lstm: dc; gru: z ⊙ ∂loss/∂h_t).
template <typename S, Gated K>
void GatedCell<S, K>::step_backward(int t, int b0, int b1, const S* dout) {
  const int64_t TB = static_cast<int64_t>(T_) * B_, col = static_cast<int64_t>(t) * B_ + b0;
  const int C = C_, nb = b1 - b0;
  for (int u = 0; u < C; ++u) {
    const S* dy = dout + u * TB + col;
    S* dh = dh_.data() + u * B_ + b0;
    const S* h = out_.data() + u * TB + col;
    S* dg = dg_.data() + u * TB + col;
    if constexpr (K == Gated::Rnn) {
      rnn_backward_row(nb, h, dy, dh, dg, relu_);
    } else if constexpr (K == Gated::Lstm) {
      const S* gi = gates_.data() + u * TB + col;
      const S* c = c_.data() + u * TB + col;
      lstm_backward_row(nb, gi, gi + C * TB, gi + 2 * C * TB, gi + 3 * C * TB, t > 0 ? c - B_ : zeros_.data(),
                        tc_.data() + u * TB + col, dy, dh, dc_.data() + u * B_ + b0, dg, dg + C * TB, dg + 2 * C * TB,
                        dg + 3 * C * TB);
    } else {  // gru
      const S* gr = gates_.data() + u * TB + col;
      S* dhr = dgh_.data() + u * TB + col;
      gru_backward_row(nb, gr, gr + C * TB, gr + 2 * C * TB, hg_.data() + (2 * C + u) * TB + col,
                       t > 0 ? h - B_ : zeros_.data(), dy, dh, dg, dg + C * TB, dg + 2 * C * TB, dhr, dhr + C * TB,
                       dhr + 2 * C * TB);
    }
  }
}

}  // namespace

// ---- the cells of every arch -----------------------------------------------------------------
template <typename S>
std::unique_ptr<RecurrentCell<S>> make_memory_cell(const ModelConfig& cfg, const ParamLayout& layout, int l);

template <typename S>
std::unique_ptr<RecurrentCell<S>> make_cell(const ModelConfig& cfg, const ParamLayout& layout, int l) {
  switch (cfg.arch) {
    case Arch::Rnn: return std::make_unique<GatedCell<S, Gated::Rnn>>(cfg, layout, l);
    case Arch::Lstm: return std::make_unique<GatedCell<S, Gated::Lstm>>(cfg, layout, l);
    case Arch::Gru: return std::make_unique<GatedCell<S, Gated::Gru>>(cfg, layout, l);
    case Arch::StackRnn:
    case Arch::TapeRnn: return make_memory_cell<S>(cfg, layout, l);
    case Arch::Transformer:
    case Arch::Mamba:
    case Arch::DeltaNet:
    case Arch::Gla: break;
  }
  throw ModelError("make_cell: arch " + std::string(to_string(cfg.arch)) + " is not recurrent");
}

template std::unique_ptr<RecurrentCell<float>> make_cell<float>(const ModelConfig&, const ParamLayout&, int);
template std::unique_ptr<RecurrentCell<double>> make_cell<double>(const ModelConfig&, const ParamLayout&, int);

}  // namespace srbench::model
