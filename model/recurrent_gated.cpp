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

template <typename S, Gated K>
class GatedCell final : public BufferedCell<S, GatedCell<S, K>> {
 public:
  static constexpr int kGates = K == Gated::Lstm ? 4 : K == Gated::Gru ? 3 : 1;

  GatedCell(const ModelConfig& cfg, const ParamLayout& layout, int l)
      : C_(cfg.d_model), relu_(cfg.nonlinearity == Nonlinearity::Relu), o_(layout, l) {}

  const S* output() const override { return out_.data(); }
  void forward(const S* inp, const S* P, int B, int T, const int32_t*) override;
  void backward(S* dinp, S* G, S* dout, const S* inp, const S* P) override;

  // Every buffer for (B, T): f(vector, elements). rnn keeps its pre-activations in out_.
  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f) {
    const int64_t TB = static_cast<int64_t>(T) * B, C = self.C_;
    f(self.out_, C * TB);
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
  int B_ = 0, T_ = 0;

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
void GatedCell<S, K>::forward(const S* inp, const S* P, int B, int T, const int32_t*) {
  B_ = B;
  T_ = T;
  const int64_t TB = static_cast<int64_t>(T) * B;
  const int C = C_, GC = kGates * C_;
  // pre = W_ih x for every step: (GC, C) · [C][T·B]
  gemm_cols<S>(GC, static_cast<int>(TB), C, {P + o_.wih, C, 1}, {inp, TB, 1}, pre(), TB, false);
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
    const S* hprev = h - B_;  // read only for t > 0
    if constexpr (K == Gated::Rnn) {
      const S bias = bih[u] + bhh[u];
      if (relu_)
        for (int j = 0; j < nb; ++j) h[j] = std::max(h[j] + bias, S(0));
      else
        for (int j = 0; j < nb; ++j) h[j] = tanh_(h[j] + bias);
    } else if constexpr (K == Gated::Lstm) {
      S *gi = gates_.data() + u * TB + col, *gf = gi + C * TB, *gg = gf + C * TB, *go = gg + C * TB;
      S *c = c_.data() + u * TB + col, *tc = tc_.data() + u * TB + col;
      const S bi = bih[u] + bhh[u], bf = bih[C + u] + bhh[C + u], bg = bih[2 * C + u] + bhh[2 * C + u],
              bo = bih[3 * C + u] + bhh[3 * C + u];
      for (int j = 0; j < nb; ++j) {
        const S i = sigmoid_(gi[j] + bi), f = sigmoid_(gf[j] + bf), g = tanh_(gg[j] + bg), o = sigmoid_(go[j] + bo);
        const S cn = (t > 0 ? f * c[j - B_] : S(0)) + i * g, tcn = tanh_(cn);
        gi[j] = i, gf[j] = f, gg[j] = g, go[j] = o;
        c[j] = cn, tc[j] = tcn;
        h[j] = o * tcn;
      }
    } else {  // gru
      S *xr = gates_.data() + u * TB + col, *xz = xr + C * TB, *xn = xz + C * TB;
      S *hr = hg_.data() + u * TB + col, *hz = hr + C * TB, *hn = hz + C * TB;
      const S bir = bih[u], biz = bih[C + u], bin = bih[2 * C + u];
      const S bhr = bhh[u], bhz = bhh[C + u], bhn = bhh[2 * C + u];
      for (int j = 0; j < nb; ++j) {
        const S r = sigmoid_((xr[j] + bir) + (hr[j] + bhr)), z = sigmoid_((xz[j] + biz) + (hz[j] + bhz));
        const S hnj = hn[j] + bhn, n = tanh_((xn[j] + bin) + r * hnj);
        xr[j] = r, xz[j] = z, xn[j] = n, hn[j] = hnj;
        h[j] = (S(1) - z) * n + (t > 0 ? z * hprev[j] : S(0));
      }
    }
  }
}

// ---- backward --------------------------------------------------------------------------------
template <typename S, Gated K>
void GatedCell<S, K>::backward(S* dinp, S* G, S* dout, const S* inp, const S* P) {
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
  // The whole sequence at once: dW_ih += dg·xᵀ, dW_hh += dgh_t·h_{t−1}ᵀ (t >= 1), the biases,
  // dinp = W_ihᵀ·dg.
  gemm_cols<S>(GC, C, static_cast<int>(TB), {dg_.data(), TB, 1}, {inp, 1, TB}, G + o_.wih, C, true);
  gemm_cols<S>(GC, C, static_cast<int>(TB - B), {dgh + B, TB, 1}, {out_.data(), 1, TB}, G + o_.whh, C, true);
  add_row_sums(G + o_.bih, dg_.data(), GC, static_cast<int>(TB), TB);
  add_row_sums(G + o_.bhh, dgh, GC, static_cast<int>(TB), TB);
  gemm_cols<S>(C, static_cast<int>(TB), GC, {P + o_.wih, 1, C}, {dg_.data(), TB, 1}, dinp, TB, false);
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
      if (relu_)  // relu'(0) = 0
        for (int j = 0; j < nb; ++j) dg[j] = h[j] > S(0) ? dy[j] + dh[j] : S(0);
      else
        for (int j = 0; j < nb; ++j) dg[j] = (dy[j] + dh[j]) * (S(1) - h[j] * h[j]);
    } else if constexpr (K == Gated::Lstm) {
      const S *gi = gates_.data() + u * TB + col, *gf = gi + C * TB, *gg = gf + C * TB, *go = gg + C * TB;
      const S *c = c_.data() + u * TB + col, *tc = tc_.data() + u * TB + col;
      S* dc = dc_.data() + u * B_ + b0;
      S *di = dg, *df = di + C * TB, *dgg = df + C * TB, *dgo = dgg + C * TB;
      for (int j = 0; j < nb; ++j) {
        const S i = gi[j], f = gf[j], g = gg[j], o = go[j];
        const S dhj = dy[j] + dh[j];                                  // h = o ⊙ tanh(c)
        const S dcj = dc[j] + dhj * o * (S(1) - tc[j] * tc[j]);       // c = f ⊙ c_{t−1} + i ⊙ g
        const S cprev = t > 0 ? c[j - B_] : S(0);
        di[j] = dcj * g * i * (S(1) - i);
        df[j] = dcj * cprev * f * (S(1) - f);
        dgg[j] = dcj * i * (S(1) - g * g);
        dgo[j] = dhj * tc[j] * o * (S(1) - o);
        dc[j] = dcj * f;
      }
    } else {  // gru
      const S *gr = gates_.data() + u * TB + col, *gz = gr + C * TB, *gn = gz + C * TB;
      const S* hn = hg_.data() + (2 * C + u) * TB + col;
      const S* hprev = h - B_;
      S *dr = dg, *dz = dr + C * TB, *dn = dz + C * TB;
      S *dhr = dgh_.data() + u * TB + col, *dhz = dhr + C * TB, *dhn = dhz + C * TB;
      for (int j = 0; j < nb; ++j) {
        const S r = gr[j], z = gz[j], n = gn[j];
        const S dhj = dy[j] + dh[j];                       // h = (1 − z) ⊙ n + z ⊙ h_{t−1}
        const S dnp = dhj * (S(1) - z) * (S(1) - n * n);   // n = tanh(x_n + r ⊙ hn)
        const S drp = dnp * hn[j] * r * (S(1) - r);
        const S dzp = dhj * ((t > 0 ? hprev[j] : S(0)) - n) * z * (S(1) - z);
        dr[j] = drp, dz[j] = dzp, dn[j] = dnp;
        dhr[j] = drp, dhz[j] = dzp, dhn[j] = dnp * r;
        dh[j] = dhj * z;
      }
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
    case Arch::Transformer: break;
  }
  throw ModelError("make_cell: arch " + std::string(to_string(cfg.arch)) + " is not recurrent");
}

template std::unique_ptr<RecurrentCell<float>> make_cell<float>(const ModelConfig&, const ParamLayout&, int);
template std::unique_ptr<RecurrentCell<double>> make_cell<double>(const ModelConfig&, const ParamLayout&, int);

}  // namespace srbench::model
