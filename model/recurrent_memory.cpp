// The memory-augmented cells of recurrent.md: Stack-RNN and Tape-RNN (NNCH's StackRNNCore and
// TapeInputLengthJumpCore), each a ReLU controller (Haiku's VanillaRNN) reading one cell of its
// own memory, and the memory's update.
//
// One step, input x (C), memory cell width c (shapes as recurrent.hpp):
//   u = [x ; read_{t−1}]                        read: the stack's top S[0], the tape's row M[0]
//   h = relu(W_ih u + b_ih + W_hh h_{t−1} + b_hh)
//   memory_t = update(memory_{t−1}, h)           Stack / Tape below; read_t = its cell 0
// The controller's input side W_ih[:, :C]·x is one product for all steps; per step one product
// [W_hh | W_ih[:, C:]]·[h_{t−1} ; read_{t−1}] (the state rows of hs_, stored one above the other).
#include <string>

#include "model/buffers.hpp"
#include "model/recurrent.hpp"
#include "model/recurrent_kernels.hpp"

namespace srbench::model {

namespace {

using namespace recurrent;

// What a stack and a tape share: per example n cells of c values, their contents after every
// step, T × [n·c][B] (element (cell i, value cc, example b) of step t at t·n·c·B + (i·c + cc)·B +
// b), and in backward ∂loss/∂ the contents, [n·c][B], alternating between two buffers.
template <typename S>
class Memory {
 public:
  Memory(int C, int n, int c) : C_(C), n_(n), c_(c) {}
  int width() const { return c_; }  // what the controller reads: cell 0

  void begin(int B, int T) { B_ = B, T_ = T; }
  void zero_gradient(int b0, int b1) {
    for (int64_t r = 0; r < 2 * static_cast<int64_t>(n_) * c_; ++r) std::fill_n(dm_.data() + r * B_ + b0, b1 - b0, S(0));
  }
  // ∂loss/∂read_{t−1} (c × nb, row stride B) onto ∂loss/∂ cell 0 of step t−1.
  void add_read_gradient(int t, int b0, int b1, const S* dread) {
    S* d = dprev(t) + b0;
    for (int cc = 0; cc < c_; ++cc)
      for (int j = 0; j < b1 - b0; ++j) d[static_cast<int64_t>(cc) * B_ + j] += dread[static_cast<int64_t>(cc) * B_ + j];
  }

  // (the rest is public to Stack and Tape, whose buffers() list these of any Self)
  template <typename Self, typename F>
  static void memory_buffers(Self& self, int B, int T, bool need_grads, F&& f) {
    const int64_t nc = static_cast<int64_t>(self.n_) * self.c_;
    f(self.m_, T * nc * B);
    if (need_grads) f(self.dm_, 2 * nc * B);
  }
  int64_t step() const { return static_cast<int64_t>(n_) * c_ * B_; }
  S* contents(int t) { return m_.data() + t * step(); }
  // ∂loss/∂ the contents of step t at iteration t of backward, and the buffer that receives
  // those of step t−1
  S* dcur(int t) { return dm_.data() + ((T_ - 1 - t) % 2) * step(); }
  S* dprev(int t) { return dm_.data() + ((T_ - t) % 2) * step(); }
  // row offset of (cell i, value cc) in a [n·c][B] block
  int64_t row(int i, int cc) const { return (static_cast<int64_t>(i) * c_ + cc) * B_; }

  int C_, n_, c_;
  int B_ = 0, T_ = 0;
  std::vector<S> m_;   // T × [n·c][B] the contents after each step
  std::vector<S> dm_;  // 2 × [n·c][B] ∂loss/∂ the contents, alternating between steps
};

// ---- Stack (Joulin & Mikolov as NNCH implements it) -------------------------------------------
// n = stack_size, c = stack_cell_size. p = W_p h + b_p; (a_push, a_pop, a_noop) = softmax(W_a h
// + b_a); S'[0] = a_push·p + a_pop·S[1] + a_noop·S[0]; S'[i] = a_push·S[i−1] + a_pop·S[i+1] +
// a_noop·S[i], S[n] = 0. W_p and W_a are adjacent in the layout: one (c + 3, C) matrix.
template <typename S>
class Stack : public Memory<S> {
 public:
  using Memory<S>::C_, Memory<S>::n_, Memory<S>::c_, Memory<S>::B_, Memory<S>::T_;
  Stack(const ModelConfig& cfg, const ParamLayout& layout, const std::string& p)
      : Memory<S>(cfg.d_model, cfg.stack_size, cfg.stack_cell_size),
        pw_(layout.at(p + "stack.push.weight").offset),
        pb_(layout.at(p + "stack.push.bias").offset) {}

  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f) {
    const int64_t TB = static_cast<int64_t>(T) * B, c = self.c_;
    f(self.pa_, (c + 3) * TB);
    Memory<S>::memory_buffers(self, B, T, need_grads, f);
    if (need_grads) f(self.dpa_, (c + 3) * TB);
  }

  void begin(int B, int T, const int32_t*) { Memory<S>::begin(B, T); }
  void step_forward(int t, int b0, int b1, const S* P, S* hs);
  void step_backward(int t, int b0, int b1, const S* P, S* dh);
  void weight_gradients(S* G, const S* hs);

 private:
  size_t pw_, pb_;
  std::vector<S> pa_;   // [c + 3][T·B] push values p, then the actions a_push, a_pop, a_noop
  std::vector<S> dpa_;  // [c + 3][T·B] ∂loss/∂p, ∂loss/∂ the action logits
};

template <typename S>
void Stack<S>::step_forward(int t, int b0, int b1, const S* P, S* hs) {
  const int64_t TB = static_cast<int64_t>(T_) * B_, col = static_cast<int64_t>(t) * B_ + b0;
  const int nb = b1 - b0, c = c_, n = n_;
  S* pa = pa_.data() + col;
  gemm<S>(c + 3, nb, C_, {P + pw_, C_, 1}, {hs + col, TB, 1}, pa, TB, false);
  const S* bias = P + pb_;
  for (int r = 0; r < c + 3; ++r)
    for (int j = 0; j < nb; ++j) pa[r * TB + j] += bias[r];
  for (int j = 0; j < nb; ++j) softmax_strided(pa + c * TB + j, 3, TB);
  const S *push = pa + c * TB, *pop = push + TB, *noop = pop + TB;
  S* now = this->contents(t) + b0;
  const S* before = t > 0 ? this->contents(t - 1) + b0 : nullptr;  // S_{−1} = 0
  for (int i = 0; i < n; ++i)
    for (int cc = 0; cc < c; ++cc) {
      S* out = now + (static_cast<int64_t>(i) * c + cc) * B_;
      const S* in_push = i == 0 ? pa + cc * TB : before ? before + (static_cast<int64_t>(i - 1) * c + cc) * B_ : nullptr;
      const S* in_pop = before && i + 1 < n ? before + (static_cast<int64_t>(i + 1) * c + cc) * B_ : nullptr;
      const S* in_noop = before ? before + (static_cast<int64_t>(i) * c + cc) * B_ : nullptr;
      for (int j = 0; j < nb; ++j)
        out[j] = (in_push ? push[j] * in_push[j] : S(0)) + (in_pop ? pop[j] * in_pop[j] : S(0)) +
                 (in_noop ? noop[j] * in_noop[j] : S(0));
    }
  for (int cc = 0; cc < c; ++cc)  // read_t = S_t[0]
    std::copy_n(now + static_cast<int64_t>(cc) * B_, nb, hs + (C_ + cc) * TB + col);
}

// Of S_t = update(S_{t−1}, p_t, a_t), given dcur = ∂loss/∂S_t: ∂loss/∂p_t and the action
// logits into dpa_, ∂loss/∂S_{t−1} into dprev (overwritten), and dh (C × nb, row stride B) +=
// [W_p; W_a]ᵀ·dpa_t.
template <typename S>
void Stack<S>::step_backward(int t, int b0, int b1, const S* P, S* dh) {
  const int64_t TB = static_cast<int64_t>(T_) * B_, col = static_cast<int64_t>(t) * B_ + b0;
  const int nb = b1 - b0, c = c_, n = n_;
  const S* pa = pa_.data() + col;
  const S *push = pa + c * TB, *pop = push + TB, *noop = pop + TB;
  S* dpa = dpa_.data() + col;
  S *dpush = dpa + c * TB, *dpop = dpush + TB, *dnoop = dpop + TB;
  const S* dnow = this->dcur(t) + b0;
  S* dbefore = this->dprev(t) + b0;
  const S* before = t > 0 ? this->contents(t - 1) + b0 : nullptr;
  for (int j = 0; j < nb; ++j) dpush[j] = dpop[j] = dnoop[j] = S(0);
  for (int i = 0; i < n; ++i)
    for (int cc = 0; cc < c; ++cc) {
      const S* g = dnow + (static_cast<int64_t>(i) * c + cc) * B_;
      const S* in_push = i == 0 ? pa + cc * TB : before ? before + (static_cast<int64_t>(i - 1) * c + cc) * B_ : nullptr;
      const S* in_pop = before && i + 1 < n ? before + (static_cast<int64_t>(i + 1) * c + cc) * B_ : nullptr;
      const S* in_noop = before ? before + (static_cast<int64_t>(i) * c + cc) * B_ : nullptr;
      for (int j = 0; j < nb; ++j) {
        if (in_push) dpush[j] += g[j] * in_push[j];
        if (in_pop) dpop[j] += g[j] * in_pop[j];
        if (in_noop) dnoop[j] += g[j] * in_noop[j];
      }
      // S_{t−1}[i] reaches S_t[i+1] by a push, S_t[i−1] by a pop, S_t[i] by a no-op
      S* d = dbefore + (static_cast<int64_t>(i) * c + cc) * B_;
      const S* up = i > 0 ? g - static_cast<int64_t>(c) * B_ : nullptr;        // ∂/∂S_t[i−1]
      const S* down = i + 1 < n ? g + static_cast<int64_t>(c) * B_ : nullptr;  // ∂/∂S_t[i+1]
      for (int j = 0; j < nb; ++j)
        d[j] = (down ? push[j] * down[j] : S(0)) + (up ? pop[j] * up[j] : S(0)) + noop[j] * g[j];
    }
  for (int cc = 0; cc < c; ++cc)  // S_t[0] = a_push·p + …
    for (int j = 0; j < nb; ++j) dpa[cc * TB + j] = push[j] * dnow[static_cast<int64_t>(cc) * B_ + j];
  for (int j = 0; j < nb; ++j) {  // softmax: ∂/∂logit_k = a_k (∂/∂a_k − Σ_m a_m ∂/∂a_m)
    const S dot = push[j] * dpush[j] + pop[j] * dpop[j] + noop[j] * dnoop[j];
    dpush[j] = push[j] * (dpush[j] - dot);
    dpop[j] = pop[j] * (dpop[j] - dot);
    dnoop[j] = noop[j] * (dnoop[j] - dot);
  }
  gemm<S>(C_, nb, c + 3, {P + pw_, 1, C_}, {dpa, TB, 1}, dh, B_, true);
}

template <typename S>
void Stack<S>::weight_gradients(S* G, const S* hs) {
  const int64_t TB = static_cast<int64_t>(T_) * B_;
  gemm_cols<S>(c_ + 3, C_, static_cast<int>(TB), {dpa_.data(), TB, 1}, {hs, 1, TB}, G + pw_, C_, true);
  add_row_sums(G + pb_, dpa_.data(), c_ + 3, static_cast<int>(TB), TB);
}

// The Tape's moves, vectorised over a run of examples (contiguous in the [rows][B] layouts):
// out[j] = ((((0 + p_0[j]·x_0[j]) + p_1[j]·x_1[j]) + … ) + p_4[j]·x_4[j]), p_a = p + a·stride, and
// acc_a[j] += g[j]·x_a[j]. Each element's arithmetic is that of a loop over one example.
template <typename S>
inline void mix5(S* __restrict out, const S* __restrict p, int64_t stride, const S* __restrict x0,
                 const S* __restrict x1, const S* __restrict x2, const S* __restrict x3, const S* __restrict x4,
                 int len) {
  const S *p0 = p, *p1 = p + stride, *p2 = p1 + stride, *p3 = p2 + stride, *p4 = p3 + stride;
  for (int j = 0; j < len; ++j) {
    S v = 0;
    v += p0[j] * x0[j];
    v += p1[j] * x1[j];
    v += p2[j] * x2[j];
    v += p3[j] * x3[j];
    v += p4[j] * x4[j];
    out[j] = v;
  }
}
template <typename S>
inline void accumulate5(S* __restrict acc, int64_t stride, const S* __restrict g, const S* __restrict x0,
                        const S* __restrict x1, const S* __restrict x2, const S* __restrict x3,
                        const S* __restrict x4, int len) {
  S *a0 = acc, *a1 = acc + stride, *a2 = a1 + stride, *a3 = a2 + stride, *a4 = a3 + stride;
  for (int j = 0; j < len; ++j) {
    const S gj = g[j];
    a0[j] += gj * x0[j];
    a1[j] += gj * x1[j];
    a2[j] += gj * x2[j];
    a3[j] += gj * x3[j];
    a4[j] += gj * x4[j];
  }
}

// ---- Tape (NNCH's TapeInputLengthJumpCore) ---------------------------------------------------
// n = tape_size, c = tape_cell_size, k = tape_mlp, L the example's input length (mod n).
// w = W3 relu(W2 relu(W1 h + b1) + b2) + b3; π = softmax(W_a h + b_a) (stay, left, right, jump
// left, jump right); M' = M with row 0 := w; M_t[m] = π0 M'[m] + π1 M'[m+1] + π2 M'[m−1] +
// π3 M'[m+L] + π4 M'[m−L] (indices mod n). W1 and W_a are adjacent: one (k + 5, C) matrix.
template <typename S>
class Tape : public Memory<S> {
 public:
  using Memory<S>::C_, Memory<S>::n_, Memory<S>::c_, Memory<S>::B_, Memory<S>::T_;
  Tape(const ModelConfig& cfg, const ParamLayout& layout, const std::string& p)
      : Memory<S>(cfg.d_model, cfg.tape_size, cfg.tape_cell_size), k_(cfg.tape_mlp) {
    w1_ = layout.at(p + "tape.write1.weight").offset;
    b1_ = layout.at(p + "tape.write1.bias").offset;
    w2_ = layout.at(p + "tape.write2.weight").offset;
    b2_ = layout.at(p + "tape.write2.bias").offset;
    w3_ = layout.at(p + "tape.write3.weight").offset;
    b3_ = layout.at(p + "tape.write3.bias").offset;
  }

  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f) {
    const int64_t TB = static_cast<int64_t>(T) * B, c = self.c_, k = self.k_;
    f(self.z1a_, (k + 5) * TB);
    f(self.z2_, k * TB);
    f(self.w_, c * TB);
    f(self.jump_, B);
    Memory<S>::memory_buffers(self, B, T, need_grads, f);
    if (!need_grads) return;
    f(self.dz1a_, (k + 5) * TB);
    f(self.dz2_, k * TB);
    f(self.dw_, c * TB);
  }

  void begin(int B, int T, const int32_t* input_lengths) {
    Memory<S>::begin(B, T);
    for (int b = 0; b < B; ++b) jump_[b] = static_cast<S>((input_lengths ? input_lengths[b] : T) % n_);
  }
  void step_forward(int t, int b0, int b1, const S* P, S* hs);
  void step_backward(int t, int b0, int b1, const S* P, S* dh);
  void weight_gradients(S* G, const S* hs);

 private:
  // f(j0, len, L) for each run of consecutive examples b0 + j0 … b0 + j0 + len − 1 that share the
  // jump L (every example of a batch of one length: one run), so that a move is a vector over them.
  template <typename F>
  void for_jump_runs(int b0, int nb, F&& f) const {
    for (int j0 = 0; j0 < nb;) {
      const S L = jump_[b0 + j0];
      int j1 = j0 + 1;
      while (j1 < nb && jump_[b0 + j1] == L) ++j1;
      f(j0, j1 - j0, static_cast<int>(L));
      j0 = j1;
    }
  }
  // x[a] = value cc of M'[r_a] for the examples from j0 on (row 0 is the write w, [c][T·B] from
  // the step's column; the others M_{t−1}'s rows, before, or null where M_{−1} = 0); true when
  // none is null.
  bool move_sources(const S* x[5], const int r[5], int cc, int j0, const S* w, const S* before) const {
    const int64_t TB = static_cast<int64_t>(T_) * B_;
    for (int a = 0; a < 5; ++a)
      x[a] = r[a] == 0 ? w + cc * TB + j0 : before ? before + (static_cast<int64_t>(r[a]) * c_ + cc) * B_ + j0 : nullptr;
    return x[0] && x[1] && x[2] && x[3] && x[4];
  }
  // The row that M_t[m] takes with weight π_a, a = 0 … 4 (example b's jump L).
  int source(int a, int m, int L) const {
    const int shift[5] = {0, 1, -1, L, -L};
    return ((m + shift[a]) % n_ + n_) % n_;
  }

  int k_;
  size_t w1_, b1_, w2_, b2_, w3_, b3_;
  std::vector<S> z1a_;  // [k + 5][T·B] relu(W1 h + b1), then π
  std::vector<S> z2_;   // [k][T·B] relu(W2 z1 + b2)
  std::vector<S> w_;    // [c][T·B] the write value
  std::vector<S> jump_; // [B] L mod n, per example
  std::vector<S> dz1a_, dz2_, dw_;  // ∂loss/∂ the pre-activations of z1 and π, of z2; ∂loss/∂w
};

template <typename S>
void Tape<S>::step_forward(int t, int b0, int b1, const S* P, S* hs) {
  const int64_t TB = static_cast<int64_t>(T_) * B_, col = static_cast<int64_t>(t) * B_ + b0;
  const int nb = b1 - b0, c = c_, k = k_, n = n_;
  S *z1a = z1a_.data() + col, *z2 = z2_.data() + col, *w = w_.data() + col;
  gemm<S>(k + 5, nb, C_, {P + w1_, C_, 1}, {hs + col, TB, 1}, z1a, TB, false);
  for (int r = 0; r < k + 5; ++r)
    for (int j = 0; j < nb; ++j) {
      const S v = z1a[r * TB + j] + P[b1_ + r];
      z1a[r * TB + j] = r < k ? std::max(v, S(0)) : v;
    }
  for (int j = 0; j < nb; ++j) softmax_strided(z1a + k * TB + j, 5, TB);
  gemm<S>(k, nb, k, {P + w2_, k, 1}, {z1a, TB, 1}, z2, TB, false);
  for (int r = 0; r < k; ++r)
    for (int j = 0; j < nb; ++j) z2[r * TB + j] = std::max(z2[r * TB + j] + P[b2_ + r], S(0));
  gemm<S>(c, nb, k, {P + w3_, k, 1}, {z2, TB, 1}, w, TB, false);
  for (int r = 0; r < c; ++r)
    for (int j = 0; j < nb; ++j) w[r * TB + j] += P[b3_ + r];
  const S* pi = z1a + k * TB;
  S* now = this->contents(t) + b0;
  const S* before = t > 0 ? this->contents(t - 1) + b0 : nullptr;  // M_{−1} = 0
  for_jump_runs(b0, nb, [&](int j0, int len, int L) {
    const S* p = pi + j0;
    for (int m = 0; m < n; ++m) {
      int r[5];
      for (int a = 0; a < 5; ++a) r[a] = source(a, m, L);
      for (int cc = 0; cc < c; ++cc) {
        const S* x[5];
        S* out = now + (static_cast<int64_t>(m) * c + cc) * B_ + j0;
        if (move_sources(x, r, cc, j0, w, before)) {
          mix5(out, p, TB, x[0], x[1], x[2], x[3], x[4], len);
        } else {
          for (int j = 0; j < len; ++j) {
            S v = 0;
            for (int a = 0; a < 5; ++a) v += p[a * TB + j] * (x[a] ? x[a][j] : S(0));
            out[j] = v;
          }
        }
      }
    }
  });
  for (int cc = 0; cc < c; ++cc)  // read_t = M_t[0]
    std::copy_n(now + static_cast<int64_t>(cc) * B_, nb, hs + (C_ + cc) * TB + col);
}

// Of M_t = move(M', π_t), M' = M_{t−1} with row 0 := w_t, w_t and π_t from h_t, given dcur =
// ∂loss/∂M_t: ∂loss/∂M_{t−1} into dprev (overwritten; row 0 was overwritten by the write, so its
// gradient is 0 until the controller's read adds to it), the MLP's and the actions' gradients,
// and dh (C × nb, row stride B) += [W1; W_a]ᵀ·dz1a_t.
template <typename S>
void Tape<S>::step_backward(int t, int b0, int b1, const S* P, S* dh) {
  const int64_t TB = static_cast<int64_t>(T_) * B_, col = static_cast<int64_t>(t) * B_ + b0;
  const int nb = b1 - b0, c = c_, k = k_, n = n_;
  const S *z1a = z1a_.data() + col, *z2 = z2_.data() + col, *w = w_.data() + col, *pi = z1a + k * TB;
  S *dz1a = dz1a_.data() + col, *dz2 = dz2_.data() + col, *dw = dw_.data() + col, *dpi = dz1a + k * TB;
  const S* dnow = this->dcur(t) + b0;
  S* dbefore = this->dprev(t) + b0;
  const S* before = t > 0 ? this->contents(t - 1) + b0 : nullptr;
  for_jump_runs(b0, nb, [&](int j0, int len, int L) {
    const S* p = pi + j0;
    S* dp = dpi + j0;  // the five sums Σ_{m,cc} ∂loss/∂M_t[m]·M'[source], then the logits' gradients
    for (int a = 0; a < 5; ++a) std::fill_n(dp + a * TB, len, S(0));
    for (int m = 0; m < n; ++m) {
      int r[5];
      for (int a = 0; a < 5; ++a) r[a] = source(a, m, L);
      for (int cc = 0; cc < c; ++cc) {
        const S* g = dnow + (static_cast<int64_t>(m) * c + cc) * B_ + j0;
        const S* x[5];
        if (move_sources(x, r, cc, j0, w, before)) {
          accumulate5(dp, TB, g, x[0], x[1], x[2], x[3], x[4], len);
        } else {
          for (int a = 0; a < 5; ++a)
            for (int j = 0; j < len; ++j) dp[a * TB + j] += g[j] * (x[a] ? x[a][j] : S(0));
        }
      }
    }
    // ∂loss/∂M'[r] = Σ_a π_a ∂loss/∂M_t[m] over the m whose source a is r
    for (int r = 0; r < n; ++r) {
      int m[5];
      for (int a = 0; a < 5; ++a) m[a] = source(a == 0 ? 0 : a % 2 == 1 ? a + 1 : a - 1, r, L);  // the inverse shift
      for (int cc = 0; cc < c; ++cc) {
        S* d = dbefore + (static_cast<int64_t>(r) * c + cc) * B_ + j0;
        const S* g[5];
        for (int a = 0; a < 5; ++a) g[a] = dnow + (static_cast<int64_t>(m[a]) * c + cc) * B_ + j0;
        mix5(d, p, TB, g[0], g[1], g[2], g[3], g[4], len);
        if (r == 0) {  // row 0 of M' is the write: its gradient is w's, and M_{t−1}[0]'s is 0
          std::copy_n(d, len, dw + cc * TB + j0);
          std::fill_n(d, len, S(0));
        }
      }
    }
    for (int j = 0; j < len; ++j) {  // softmax
      S dot = 0;
      for (int a = 0; a < 5; ++a) dot += p[a * TB + j] * dp[a * TB + j];
      for (int a = 0; a < 5; ++a) dp[a * TB + j] = p[a * TB + j] * (dp[a * TB + j] - dot);
    }
  });
  // w = W3 z2 + b3;  z2 = relu(W2 z1 + b2);  z1 = relu(W1 h + b1)
  gemm<S>(k, nb, c, {P + w3_, 1, k}, {dw, TB, 1}, dz2, TB, false);
  for (int r = 0; r < k; ++r)
    for (int j = 0; j < nb; ++j)
      if (!(z2[r * TB + j] > S(0))) dz2[r * TB + j] = S(0);
  gemm<S>(k, nb, k, {P + w2_, 1, k}, {dz2, TB, 1}, dz1a, TB, false);
  for (int r = 0; r < k; ++r)
    for (int j = 0; j < nb; ++j)
      if (!(z1a[r * TB + j] > S(0))) dz1a[r * TB + j] = S(0);
  gemm<S>(C_, nb, k + 5, {P + w1_, 1, C_}, {dz1a, TB, 1}, dh, B_, true);
}

template <typename S>
void Tape<S>::weight_gradients(S* G, const S* hs) {
  const int64_t TB = static_cast<int64_t>(T_) * B_;
  const int tb = static_cast<int>(TB);
  gemm_cols<S>(c_, k_, tb, {dw_.data(), TB, 1}, {z2_.data(), 1, TB}, G + w3_, k_, true);
  add_row_sums(G + b3_, dw_.data(), c_, tb, TB);
  gemm_cols<S>(k_, k_, tb, {dz2_.data(), TB, 1}, {z1a_.data(), 1, TB}, G + w2_, k_, true);
  add_row_sums(G + b2_, dz2_.data(), k_, tb, TB);
  gemm_cols<S>(k_ + 5, C_, tb, {dz1a_.data(), TB, 1}, {hs, 1, TB}, G + w1_, C_, true);
  add_row_sums(G + b1_, dz1a_.data(), k_ + 5, tb, TB);
}

// ---- the controller around a memory ----------------------------------------------------------
template <typename S, typename Memory>
class MemoryCell final : public BufferedCell<S, MemoryCell<S, Memory>> {
 public:
  MemoryCell(const ModelConfig& cfg, const ParamLayout& layout, int l)
      : C_(cfg.d_model),
        memory_(cfg, layout, "rnn." + std::to_string(l) + "."),
        c_(memory_.width()),
        o_(layout, l),
        in_(cfg.d_model, cfg.d_model, cfg.vocab, l == 0) {}

  const S* output() const override { return hs_.data(); }
  void forward(const CellInput<S>& in, const S* P, int B, int T, const int32_t* input_lengths) override;
  void backward(S* dinp, S* demb, S* G, const S* dout, const CellInput<S>& in, const S* P) override;

  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f) {
    const int64_t TB = static_cast<int64_t>(T) * B, C = self.C_, c = self.c_;
    InputSide<S>::buffers(self.in_, B, T, need_grads, f);
    f(self.xp_, C * TB);
    f(self.hs_, (C + c) * TB);
    f(self.wcat_, C * (C + c));
    Memory::buffers(self.memory_, B, T, need_grads, f);
    if (!need_grads) return;
    f(self.dpre_, C * TB);
    f(self.dstate_, (C + c) * B);
  }

 private:
  int C_;
  Memory memory_;
  int c_;  // the width of the read
  CellOffsets o_;
  InputSide<S> in_;  // W_ih[:, :C]·x
  int B_ = 0, T_ = 0;
  std::vector<S> xp_;      // [C][T·B] W_ih[:, :C]·x, then the controller's pre-activations
  std::vector<S> hs_;      // [C + c][T·B] h_t, then read_t: the state of step t
  std::vector<S> wcat_;    // (C, C + c) [W_hh | W_ih[:, C:]]
  std::vector<S> dpre_;    // [C][T·B] ∂loss/∂ the controller's pre-activations
  std::vector<S> dstate_;  // [C + c][B] ∂loss/∂[h_{t−1} ; read_{t−1}]
};

template <typename S, typename Memory>
void MemoryCell<S, Memory>::forward(const CellInput<S>& in, const S* P, int B, int T, const int32_t* input_lengths) {
  B_ = B;
  T_ = T;
  const int64_t TB = static_cast<int64_t>(T) * B;
  const int C = C_, K = C_ + c_;
  in_.forward(xp_.data(), P + o_.wih, K, in, TB);
  for (int u = 0; u < C; ++u) {
    std::copy_n(P + o_.whh + static_cast<int64_t>(u) * C, C, wcat_.data() + static_cast<int64_t>(u) * K);
    std::copy_n(P + o_.wih + static_cast<int64_t>(u) * K + C, c_, wcat_.data() + static_cast<int64_t>(u) * K + C);
  }
  memory_.begin(B, T, input_lengths);
  const S *bih = P + o_.bih, *bhh = P + o_.bhh;
  for_example_ranges(B, static_cast<int64_t>(C) * K * TB >= kMinParallelWork, [&](int b0, int b1) {
    const int nb = b1 - b0;
    for (int t = 0; t < T; ++t) {
      const int64_t col = static_cast<int64_t>(t) * B + b0;
      if (t > 0) gemm<S>(C, nb, K, {wcat_.data(), K, 1}, {hs_.data() + col - B, TB, 1}, xp_.data() + col, TB, true);
      for (int u = 0; u < C; ++u) {
        const S* pre = xp_.data() + u * TB + col;
        S* h = hs_.data() + u * TB + col;
        const S bias = bih[u] + bhh[u];
        for (int j = 0; j < nb; ++j) h[j] = std::max(pre[j] + bias, S(0));
      }
      memory_.step_forward(t, b0, b1, P, hs_.data());
    }
  });
}

template <typename S, typename Memory>
void MemoryCell<S, Memory>::backward(S* dinp, S* demb, S* G, const S* dout, const CellInput<S>& in, const S* P) {
  const int B = B_, T = T_, C = C_, K = C_ + c_;
  const int64_t TB = static_cast<int64_t>(T) * B;
  for_example_ranges(B, static_cast<int64_t>(C) * K * TB >= kMinParallelWork, [&](int b0, int b1) {
    const int nb = b1 - b0;
    for (int r = 0; r < K; ++r) std::fill_n(dstate_.data() + static_cast<int64_t>(r) * B + b0, nb, S(0));
    memory_.zero_gradient(b0, b1);
    for (int t = T - 1; t >= 0; --t) {
      const int64_t col = static_cast<int64_t>(t) * B + b0;
      S* dh = dstate_.data() + b0;  // ∂loss/∂h_t through the recurrence, then + the memory's
      memory_.step_backward(t, b0, b1, P, dh);
      for (int u = 0; u < C; ++u) {  // h = relu(pre), relu'(0) = 0
        const S* h = hs_.data() + u * TB + col;
        const S* dy = dout + u * TB + col;
        const S* dr = dh + static_cast<int64_t>(u) * B;
        S* dp = dpre_.data() + u * TB + col;
        for (int j = 0; j < nb; ++j) dp[j] = h[j] > S(0) ? dy[j] + dr[j] : S(0);
      }
      if (t == 0) break;
      // ∂loss/∂[h_{t−1} ; read_{t−1}] = [W_hh | W_ih[:, C:]]ᵀ·dpre_t
      gemm<S>(K, nb, C, {wcat_.data(), 1, K}, {dpre_.data() + col, TB, 1}, dh, B, false);
      memory_.add_read_gradient(t, b0, b1, dh + static_cast<int64_t>(C) * B);
    }
  });
  // The whole sequence: [dW_hh | dW_ih[:, C:]] += dpre_t·state_{t−1}ᵀ (t >= 1), the biases, the
  // memory's weights, the input side (dW_ih[:, :C] += dpre·xᵀ and ∂loss/∂x).
  const int tb = static_cast<int>(TB);
  gemm_cols<S>(C, C, tb - B, {dpre_.data() + B, TB, 1}, {hs_.data(), 1, TB}, G + o_.whh, C, true);
  gemm_cols<S>(C, c_, tb - B, {dpre_.data() + B, TB, 1}, {hs_.data() + C * TB, 1, TB}, G + o_.wih + C, K, true);
  add_row_sums(G + o_.bih, dpre_.data(), C, tb, TB);
  add_row_sums(G + o_.bhh, dpre_.data(), C, tb, TB);
  memory_.weight_gradients(G, hs_.data());
  in_.backward(dinp, demb, G + o_.wih, K, dpre_.data(), P + o_.wih, in, TB);
}

}  // namespace

template <typename S>
std::unique_ptr<RecurrentCell<S>> make_memory_cell(const ModelConfig& cfg, const ParamLayout& layout, int l) {
  if (cfg.arch == Arch::StackRnn) return std::make_unique<MemoryCell<S, Stack<S>>>(cfg, layout, l);
  return std::make_unique<MemoryCell<S, Tape<S>>>(cfg, layout, l);
}

template std::unique_ptr<RecurrentCell<float>> make_memory_cell<float>(const ModelConfig&, const ParamLayout&, int);
template std::unique_ptr<RecurrentCell<double>> make_memory_cell<double>(const ModelConfig&, const ParamLayout&, int);

}  // namespace srbench::model
