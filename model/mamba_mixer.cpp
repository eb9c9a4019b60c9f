#include "model/mamba_mixer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "model/buffers.hpp"
#include "model/fastmath.hpp"
#include "model/gates.hpp"
#include "model/layers.hpp"
#include "model/parallel.hpp"
#include "model/recurrent_kernels.hpp"

namespace srbench::model {

namespace {

using recurrent::exp_nonpositive_;
using recurrent::sigmoid_;

using gates::silu;
using gates::silu_grad;
using gates::softplus;
using gates::softplus_grad;

int chunks_of(int T) { return (T + MambaMixer<float>::kChunk - 1) / MambaMixer<float>::kChunk; }


// The scan's inner loops, one state row k (E channels) at a time, on pointers that do not alias
// (so that they vectorise). Ā = c2·exp(Δ·A) − c1: c2 = 2, c1 = 1 for signed eigenvalues, c2 = 1,
// c1 = 0 (exactly exp(Δ·A)) for positive ones.

// s_k = Ā s_k + (Δ⊙x) B_k; y += s_k C_k.
template <typename S>
inline void scan_row(S* __restrict sk, S* __restrict acc, const S* __restrict dl, const S* __restrict Ak,
                     const S* __restrict dx, S bk, S ck, S c2, S c1, int E) {
  for (int e = 0; e < E; ++e) {
    const S a = c2 * exp_nonpositive_(dl[e] * Ak[e]) - c1;
    sk[e] = a * sk[e] + dx[e] * bk;
    acc[e] += sk[e] * ck;
  }
}

// The same step again in backward, from the previous state, keeping exp(Δ·A).
template <typename S>
inline void rescan_row(S* __restrict cur, S* __restrict ex, const S* __restrict prev, const S* __restrict dl,
                       const S* __restrict Ak, const S* __restrict dx, S bk, S c2, S c1, int E) {
  for (int e = 0; e < E; ++e) {
    const S a = exp_nonpositive_(dl[e] * Ak[e]);
    ex[e] = a;
    cur[e] = (c2 * a - c1) * prev[e] + dx[e] * bk;
  }
}

// Back through s_k = Ā s_{k,prev} + (Δ⊙x) B_k with ds_k = ∂/∂s_k: ∂/∂Δ through Ā, ∂/∂A (per
// sequence), ∂/∂(Δ⊙x), and ds_k becomes ∂/∂s_{k,prev}. ∂Ā/∂(Δ·A) = c2·exp(Δ·A).
template <typename S>
inline void unscan_row(S* __restrict dsk, S* __restrict d_delta, S* __restrict dA, S* __restrict d_dx,
                       const S* __restrict ex, const S* __restrict prev, const S* __restrict Ak,
                       const S* __restrict dl, S bk, S c2, S c1, int E) {
  for (int e = 0; e < E; ++e) {
    const S a = ex[e];
    const S dprod = dsk[e] * prev[e] * (c2 * a);
    d_delta[e] += dprod * Ak[e];
    dA[e] += dprod * dl[e];
    d_dx[e] += dsk[e] * bk;
    dsk[e] *= c2 * a - c1;
  }
}

// acc += a ⊙ b along E channels (b null: acc += a).
template <typename S>
inline void multiply_add(S* __restrict acc, const S* __restrict a, const S* __restrict b, int E) {
  if (b)
    for (int e = 0; e < E; ++e) acc[e] += a[e] * b[e];
  else
    for (int e = 0; e < E; ++e) acc[e] += a[e];
}

// ds_k += dy·C_k
template <typename S>
inline void add_scaled(S* __restrict ds, const S* __restrict dy, S c, int E) {
  for (int e = 0; e < E; ++e) ds[e] += dy[e] * c;
}


// Sequences whose scan is worth a parallel region.
bool parallel_scan(const MambaDims& m) {
  return m.B > 1 && static_cast<int64_t>(m.B) * m.T * m.E * m.N >= (1 << 15);
}

}  // namespace

template <typename S>
template <typename Self, typename F>
void MambaMixer<S>::buffers(Self& self, const MambaDims& m, bool need_grads, F&& f) {
  const int64_t n = m.rows(), E = m.E, N = m.N, W = m.R + 2 * m.N, B = m.B;
  const Role saved = Role::Saved, scratch = Role::Scratch;
  f(self.xz_, n * 2 * E, saved), f(self.xc_, n * E, saved), f(self.x_, n * E, saved), f(self.dbl_, n * W, saved);
  f(self.din_, n * m.R, saved), f(self.dtraw_, n * E, saved), f(self.delta_, n * E, saved), f(self.A_, E * N, saved);
  f(self.y_, n * E, saved), f(self.gated_, n * E, saved), f(self.saved_, B * chunks_of(m.T) * E * N, saved);
  f(self.run_, B * (E * N + 2 * E), saved), f(self.conv_t_, E * m.K, saved);
  if (!need_grads) return;
  f(self.dgated_, n * E, scratch), f(self.dy_, n * E, scratch), f(self.dx_, n * E, scratch);
  f(self.ddelta_, n * E, scratch), f(self.ddbl_, n * W, scratch), f(self.ddin_, n * m.R, scratch);
  f(self.dxz_, n * 2 * E, scratch), f(self.dxc_, n * E, scratch), f(self.dA_, B * E * N, scratch);
  f(self.dD_, B * E, scratch), f(self.dconv_w_, B * E * m.K, scratch), f(self.dconv_b_, B * E, scratch);
  f(self.states_, B * kChunk * E * N, scratch), f(self.exps_, B * kChunk * E * N, scratch);
  f(self.ds_, B * E * N, scratch), f(self.vecs_, B * 3 * E, scratch);
}

template <typename S>
void MambaMixer<S>::reserve(const MambaDims& m, bool need_grads) {
  buffers(*this, m, need_grads, GrowBuffer{});
}

template <typename S>
CallMemory MambaMixer<S>::memory(const MambaDims& m, bool need_grads) const {
  CallMemory c;
  buffers(*this, m, need_grads, CountBuffer{&c});
  return c;
}

template <typename S>
void MambaMixer<S>::forward(S* out, const S* u, const MambaWeights<S>& w, const MambaDims& m) {
  const int T = m.T, E = m.E, N = m.N, R = m.R, K = m.K, W = R + 2 * N;
  const int64_t n = m.rows();
  matmul_forward(xz_.data(), u, w.in_proj, static_cast<const S*>(nullptr), static_cast<int>(n), m.d, 2 * E);
  // x = SiLU(conv(x̃)): position t reads x̃ at t−K+1 … t of its own sequence; the taps
  // transposed, (K, E), so that each is a loop along channels (bias first, then the taps in order)
  for (int e = 0; e < E; ++e)
    for (int i = 0; i < K; ++i) conv_t_[static_cast<int64_t>(i) * E + e] = w.conv_w[e * K + i];
  parallel_for(m.B, parallel_scan(m), [&](int b) {
    for (int t = 0; t < T; ++t) {
      const int64_t row = static_cast<int64_t>(b) * T + t;
      S* xc = &xc_[row * E];
      std::copy(w.conv_b, w.conv_b + E, xc);
      for (int i = std::max(0, K - 1 - t); i < K; ++i)
        multiply_add(xc, &conv_t_[static_cast<int64_t>(i) * E], &xz_[(row - (K - 1) + i) * 2 * E], E);
    }
  });
  for (int64_t i = 0; i < n * E; ++i) x_[i] = silu(xc_[i]);
  matmul_forward(dbl_.data(), x_.data(), w.x_proj, static_cast<const S*>(nullptr), static_cast<int>(n), E, W);
  for (int64_t r = 0; r < n; ++r) std::memcpy(&din_[r * R], &dbl_[r * W], sizeof(S) * R);
  matmul_forward(dtraw_.data(), din_.data(), w.dt_w, w.dt_b, static_cast<int>(n), R, E);
  for (int64_t i = 0; i < n * E; ++i) delta_[i] = softplus(dtraw_[i]);
  for (int e = 0; e < E; ++e)  // A transposed, (N, E): the scan runs along channels
    for (int k = 0; k < N; ++k)  // in double, rounded once: the same float whichever libm variant runs
      A_[static_cast<int64_t>(k) * E + e] = static_cast<S>(-std::exp(static_cast<double>(w.A_log[static_cast<int64_t>(e) * N + k])));
  const int C = chunks_of(T);
  const int64_t EN = static_cast<int64_t>(E) * N;
  const S c2 = m.signed_eigenvalues ? S(2) : S(1), c1 = m.signed_eigenvalues ? S(1) : S(0);
  parallel_for(m.B, parallel_scan(m), [&](int b) {
    S* s = &run_[static_cast<int64_t>(b) * (EN + 2 * E)];  // the running state (N, E), then Δ⊙x and y's sum
    S* dx = s + EN;
    S* acc = dx + E;
    std::fill(s, s + EN, S(0));
    for (int t = 0; t < T; ++t) {
      if (t % kChunk == 0)  // the state before the chunk that starts here
        std::memcpy(&saved_[(static_cast<int64_t>(b) * C + t / kChunk) * EN], s, sizeof(S) * EN);
      const int64_t row = static_cast<int64_t>(b) * T + t;
      const S* dl = &delta_[row * E];
      const S* xr = &x_[row * E];
      const S* Bm = &dbl_[row * W + R];
      const S* Cm = Bm + N;
      for (int e = 0; e < E; ++e) dx[e] = dl[e] * xr[e], acc[e] = 0;
      for (int k = 0; k < N; ++k)  // y_e = Σ_k s_ke C_k, summed in k order
        scan_row(s + static_cast<int64_t>(k) * E, acc, dl, &A_[static_cast<int64_t>(k) * E], dx, Bm[k], Cm[k], c2, c1, E);
      for (int e = 0; e < E; ++e) y_[row * E + e] = acc[e] + w.D[e] * xr[e];
    }
  });
  for (int64_t r = 0; r < n; ++r)
    for (int e = 0; e < E; ++e) gated_[r * E + e] = y_[r * E + e] * silu(xz_[r * 2 * E + E + e]);
  matmul_forward(out, gated_.data(), w.out_proj, static_cast<const S*>(nullptr), static_cast<int>(n), E, m.d);
}

// The scan backward, chunk by chunk from the last (each chunk's states recomputed from the
// state saved before it): dΔ (before softplus′), dB and dC into ddbl_, dx's Δ⊙x and D⊙x terms,
// and per sequence dA and dD. dy_ holds ∂loss/∂y.
template <typename S>
void MambaMixer<S>::scan_backward(const MambaWeights<S>& w, const MambaDims& m) {
  const int T = m.T, E = m.E, N = m.N, R = m.R, W = R + 2 * N, C = chunks_of(T);
  const int64_t EN = static_cast<int64_t>(E) * N;
  const S c2 = m.signed_eigenvalues ? S(2) : S(1), c1 = m.signed_eigenvalues ? S(1) : S(0);
  parallel_for(m.B, parallel_scan(m), [&](int b) {
    S* ds = &ds_[b * EN];
    S* dA = &dA_[b * EN];
    S* dD = &dD_[static_cast<int64_t>(b) * E];
    S* st = &states_[static_cast<int64_t>(b) * kChunk * EN];  // the chunk's states (N, E) each
    S* ex = &exps_[static_cast<int64_t>(b) * kChunk * EN];    // and their exp(Δ·A)
    S* dx = &vecs_[static_cast<int64_t>(b) * 3 * E];          // Δ⊙x
    S* d_dx = dx + E;                                          // ∂/∂(Δ⊙x)
    S* d_delta = d_dx + E;                                     // ∂/∂Δ through Ā
    std::fill(ds, ds + EN, S(0));
    std::fill(dA, dA + EN, S(0));
    std::fill(dD, dD + E, S(0));
    for (int c = C - 1; c >= 0; --c) {
      const int t0 = c * kChunk, t1 = std::min(T, t0 + kChunk);
      const S* start = &saved_[(static_cast<int64_t>(b) * C + c) * EN];
      for (int t = t0; t < t1; ++t) {  // the chunk's states again, as forward computed them
        const int64_t row = static_cast<int64_t>(b) * T + t;
        const S* prev = t == t0 ? start : st + (t - t0 - 1) * EN;
        S* cur = st + (t - t0) * EN;
        S* e_t = ex + (t - t0) * EN;
        const S* dl = &delta_[row * E];
        const S* xr = &x_[row * E];
        const S* Bm = &dbl_[row * W + R];
        for (int e = 0; e < E; ++e) dx[e] = dl[e] * xr[e];
        for (int k = 0; k < N; ++k) {
          const int64_t o = static_cast<int64_t>(k) * E;
          rescan_row(cur + o, e_t + o, prev + o, dl, &A_[o], dx, Bm[k], c2, c1, E);
        }
      }
      for (int t = t1 - 1; t >= t0; --t) {
        const int64_t row = static_cast<int64_t>(b) * T + t;
        const S* cur = st + (t - t0) * EN;
        const S* prev = t == t0 ? start : st + (t - t0 - 1) * EN;
        const S* e_t = ex + (t - t0) * EN;
        const S* dl = &delta_[row * E];
        const S* xr = &x_[row * E];
        const S* Bm = &dbl_[row * W + R];
        const S* Cm = Bm + N;
        const S* dyr = &dy_[row * E];
        S* dB = &ddbl_[row * W + R];
        S* dC = dB + N;
        for (int e = 0; e < E; ++e) dx[e] = dl[e] * xr[e], d_dx[e] = 0, d_delta[e] = 0;
        for (int k = 0; k < N; ++k) {
          const int64_t o = static_cast<int64_t>(k) * E;
          S* dsk = ds + o;
          // y = s C: dC_k = Σ_e dy_e s_ke; the state's gradient takes dy C
          dC[k] = fastmath::lane_sum<S>(E, [&](int64_t e) { return dyr[e] * cur[o + e]; });
          add_scaled(dsk, dyr, Cm[k], E);
          // s_t = Ā s_{t−1} + (Δ⊙x) B: dB_k = Σ_e ds_ke (Δx)_e
          dB[k] = fastmath::lane_sum<S>(E, [&](int64_t e) { return dsk[e] * dx[e]; });
          unscan_row(dsk, d_delta, dA + o, d_dx, e_t + o, prev + o, &A_[o], dl, Bm[k], c2, c1, E);
        }
        for (int e = 0; e < E; ++e) {
          // Δ⊙x: dΔ += d(Δx)·x, dx = d(Δx)·Δ; and y's D⊙x term
          ddelta_[row * E + e] = d_delta[e] + d_dx[e] * xr[e];
          dx_[row * E + e] = d_dx[e] * dl[e] + dyr[e] * w.D[e];
          dD[e] += dyr[e] * xr[e];
        }
      }
    }
  });
}

// x̃ → conv: dx̃ into dxz_'s first half from dxc_ (∂loss/∂conv(x̃)); per sequence the conv's
// weight and bias gradients.
template <typename S>
void MambaMixer<S>::conv_backward(const MambaWeights<S>& w, const MambaDims& m) {
  const int T = m.T, E = m.E, K = m.K;
  for (int e = 0; e < E; ++e)
    for (int i = 0; i < K; ++i) conv_t_[static_cast<int64_t>(i) * E + e] = w.conv_w[e * K + i];
  parallel_for(m.B, parallel_scan(m), [&](int b) {
    S* dw = &dconv_w_[static_cast<int64_t>(b) * E * K];  // (K, E): the taps transposed
    S* db = &dconv_b_[static_cast<int64_t>(b) * E];
    std::fill(dw, dw + static_cast<int64_t>(E) * K, S(0));
    std::fill(db, db + E, S(0));
    for (int t = 0; t < T; ++t) {
      const int64_t row = static_cast<int64_t>(b) * T + t;
      // x̃ at t is read by the conv outputs at t … t+K−1 (tap K−1−j at output t+j)
      S* dxt = &dxz_[row * 2 * E];
      std::fill(dxt, dxt + E, S(0));
      for (int j = 0; j < K && t + j < T; ++j)
        multiply_add(dxt, &conv_t_[static_cast<int64_t>(K - 1 - j) * E], &dxc_[(row + j) * E], E);
      const S* dc = &dxc_[row * E];
      multiply_add(db, dc, static_cast<const S*>(nullptr), E);
      for (int i = std::max(0, K - 1 - t); i < K; ++i)
        multiply_add(dw + static_cast<int64_t>(i) * E, dc, &xz_[(row - (K - 1) + i) * 2 * E], E);
    }
  });
}

template <typename S>
void MambaMixer<S>::backward(S* du, const MambaGrads<S>& g, const S* dout, const S* u, const MambaWeights<S>& w,
                             const MambaDims& m) {
  const int E = m.E, N = m.N, R = m.R, K = m.K, W = R + 2 * N;
  const int64_t n = m.rows(), EN = static_cast<int64_t>(E) * N;
  // out = W_out·gated
  matmul_backward(dgated_.data(), g.out_proj, static_cast<S*>(nullptr), dout, gated_.data(), w.out_proj,
                  static_cast<int>(n), E, m.d);
  // gated = y ⊙ SiLU(z): dy, and dz into dxz's second half
  for (int64_t r = 0; r < n; ++r)
    for (int e = 0; e < E; ++e) {
      const S z = xz_[r * 2 * E + E + e], dg = dgated_[r * E + e];
      dy_[r * E + e] = dg * silu(z);
      dxz_[r * 2 * E + E + e] = dg * y_[r * E + e] * silu_grad(z);
    }
  scan_backward(w, m);
  for (int e = 0; e < E; ++e)  // sums over the sequences, in order
    for (int b = 0; b < m.B; ++b) g.D[e] += dD_[static_cast<int64_t>(b) * E + e];
  for (int e = 0; e < E; ++e)
    for (int k = 0; k < N; ++k) {  // A_log (E, N); A_ and dA_ are (N, E)
      const int64_t i = static_cast<int64_t>(k) * E + e;
      S acc = 0;
      for (int b = 0; b < m.B; ++b) acc += dA_[b * EN + i];
      g.A_log[static_cast<int64_t>(e) * N + k] += acc * A_[i];  // A = −exp(A_log): ∂A/∂A_log = A
    }
  // Δ = softplus(W_dt δ + b)
  for (int64_t i = 0; i < n * E; ++i) ddelta_[i] *= softplus_grad(dtraw_[i]);
  matmul_backward(ddin_.data(), g.dt_w, g.dt_b, ddelta_.data(), din_.data(), w.dt_w, static_cast<int>(n), R, E);
  for (int64_t r = 0; r < n; ++r) std::memcpy(&ddbl_[r * W], &ddin_[r * R], sizeof(S) * R);
  // [δ ; B ; C] = W_x x: dx += ddbl·W_x (into dxc_ first, then added)
  matmul_backward(dxc_.data(), g.x_proj, static_cast<S*>(nullptr), ddbl_.data(), x_.data(), w.x_proj,
                  static_cast<int>(n), E, W);
  for (int64_t i = 0; i < n * E; ++i) dxc_[i] = (dxc_[i] + dx_[i]) * silu_grad(xc_[i]);
  conv_backward(w, m);
  for (int e = 0; e < E; ++e)
    for (int i = 0; i < K; ++i)
      for (int b = 0; b < m.B; ++b) g.conv_w[e * K + i] += dconv_w_[(static_cast<int64_t>(b) * K + i) * E + e];
  for (int e = 0; e < E; ++e)
    for (int b = 0; b < m.B; ++b) g.conv_b[e] += dconv_b_[static_cast<int64_t>(b) * E + e];
  matmul_backward(du, g.in_proj, static_cast<S*>(nullptr), dxz_.data(), u, w.in_proj, static_cast<int>(n), m.d,
                  2 * E);
}

template class MambaMixer<float>;
template class MambaMixer<double>;

}  // namespace srbench::model
