// DeltaNet's mixer (deltanet_mixer.hpp): projections, short convolutions, l2, β, the gate, the
// delta rule, the per-head output norm, the output gate and o_proj; and back.
#include "model/deltanet_mixer.hpp"

#include <algorithm>
#include <cmath>

#include "model/buffers.hpp"
#include "model/fastmath.hpp"
#include "model/gates.hpp"
#include "model/layers.hpp"
#include "model/parallel.hpp"

namespace srbench::model {
namespace {

using gates::silu;
using gates::silu_grad;
using gates::softplus;
using gates::softplus_grad;
using recurrent::sigmoid_;

constexpr double kEps = 1e-6;  // l2's and o_norm's (F's norm_eps; linear-rnn.md)

DeltaDims rule_dims(const DeltaNetDims& m) { return DeltaDims{m.B, m.T, m.H, m.head_dim()}; }

// out (N, C) = the causal depthwise convolution of x (N, C) with taps (κ, C) (transposed: tap i
// of every channel contiguous), per sequence of T rows, x before the sequence 0; the taps added
// in order i = 0 … κ−1 (tap κ−1 the current position).
template <typename S>
void conv_forward(S* out, const S* x, const S* taps, int B, int T, int C, int kappa) {
  parallel_for(B, B > 1 && static_cast<int64_t>(B) * T * C * kappa >= (1 << 15), [&](int b) {
    for (int t = 0; t < T; ++t) {
      const int64_t row = static_cast<int64_t>(b) * T + t;
      S* o = out + row * C;
      std::fill(o, o + C, S(0));
      for (int i = std::max(0, kappa - 1 - t); i < kappa; ++i) {
        const S* w = taps + static_cast<int64_t>(i) * C;
        const S* xi = x + (row - (kappa - 1) + i) * C;
        for (int c = 0; c < C; ++c) o[c] += w[c] * xi[c];
      }
    }
  });
}

// dx (N, C) from dout (N, C); dtaps (B, κ, C) per sequence (summed by the caller in sequence order).
template <typename S>
void conv_backward(S* dx, S* dtaps, const S* dout, const S* x, const S* taps, int B, int T, int C, int kappa) {
  parallel_for(B, B > 1 && static_cast<int64_t>(B) * T * C * kappa >= (1 << 15), [&](int b) {
    S* dw = dtaps + static_cast<int64_t>(b) * kappa * C;
    std::fill(dw, dw + static_cast<int64_t>(kappa) * C, S(0));
    for (int t = 0; t < T; ++t) {
      const int64_t row = static_cast<int64_t>(b) * T + t;
      // x at t is read by the outputs at t … t+κ−1 (tap κ−1−j at output t+j)
      S* dxt = dx + row * C;
      std::fill(dxt, dxt + C, S(0));
      for (int j = 0; j < kappa && t + j < T; ++j) {
        const S* w = taps + static_cast<int64_t>(kappa - 1 - j) * C;
        const S* dj = dout + (row + j) * C;
        for (int c = 0; c < C; ++c) dxt[c] += w[c] * dj[c];
      }
      const S* dc = dout + row * C;
      for (int i = std::max(0, kappa - 1 - t); i < kappa; ++i) {
        const S* xi = x + (row - (kappa - 1) + i) * C;
        S* dwi = dw + static_cast<int64_t>(i) * C;
        for (int c = 0; c < C; ++c) dwi[c] += dc[c] * xi[c];
      }
    }
  });
}

}  // namespace

template <typename S>
template <typename Self, typename F>
void DeltaNetMixer<S>::buffers(Self& self, const DeltaNetDims& m, bool need_grads, F&& f) {
  const int64_t n = m.rows(), d = m.d, H = m.H, nd = n * d, nH = n * H, k = m.K;
  const Role saved = Role::Saved, scratch = Role::Scratch;
  f(self.proj_, 3 * nd, saved), f(self.conv_, k > 0 ? 3 * nd : 0, saved), f(self.act_, 3 * nd, saved);
  f(self.inv_, 2 * nH, saved), f(self.qk_, 2 * nd, saved), f(self.bz_, nH, saved), f(self.beta_, nH, saved);
  f(self.az_, m.gated ? nH : 0, saved), f(self.alpha_, m.gated ? nH : 0, saved), f(self.o_, nd, saved);
  f(self.rstd_, nH, saved), f(self.on_, nd, saved), f(self.g_, m.output_gate ? nd : 0, saved);
  f(self.gated_, m.output_gate ? nd : 0, saved), f(self.conv_t_, k * d, saved);
  if (!need_grads) return;
  f(self.d_gated_, nd, scratch), f(self.d_on_, m.output_gate ? nd : 0, scratch), f(self.d_o_, nd, scratch);
  f(self.d_qkv_, 3 * nd, scratch), f(self.d_act_, 3 * nd, scratch), f(self.d_beta_, nH, scratch);
  f(self.d_alpha_, m.gated ? nH : 0, scratch), f(self.d_bz_, nH, scratch), f(self.d_az_, m.gated ? nH : 0, scratch);
  f(self.d_conv_w_, static_cast<int64_t>(m.B) * k * d, scratch), f(self.d_g_, m.output_gate ? nd : 0, scratch);
  f(self.du_part_, nd, scratch);  // ∂/∂u of one projection at a time, added into du
}

template <typename S>
void DeltaNetMixer<S>::reserve(const DeltaNetDims& m, bool need_grads) {
  buffers(*this, m, need_grads, GrowBuffer{});
  rule_.reserve(rule_dims(m), need_grads);
}

template <typename S>
CallMemory DeltaNetMixer<S>::memory(const DeltaNetDims& m, bool need_grads) const {
  CallMemory c;
  buffers(*this, m, need_grads, CountBuffer{&c});
  const CallMemory r = rule_.memory(rule_dims(m), need_grads);
  c.saved += r.saved, c.scratch += r.scratch;
  return c;
}

template <typename S>
void DeltaNetMixer<S>::forward(S* out, const S* u, const DeltaNetWeights<S>& w, const DeltaNetDims& m) {
  const int N = static_cast<int>(m.rows()), d = m.d, H = m.H, Kh = m.head_dim(), kappa = m.K;
  const int64_t nd = m.rows() * d, nH = m.rows() * H;
  const S* projw[3] = {w.q_proj, w.k_proj, w.v_proj};
  const S* convw[3] = {w.q_conv, w.k_conv, w.v_conv};
  for (int p = 0; p < 3; ++p) {
    S* pr = &proj_[p * nd];
    matmul_forward(pr, u, projw[p], static_cast<const S*>(nullptr), N, d, d);
    const S* pre = pr;
    if (kappa > 0) {
      for (int c = 0; c < d; ++c)
        for (int i = 0; i < kappa; ++i) conv_t_[static_cast<int64_t>(i) * d + c] = convw[p][static_cast<int64_t>(c) * kappa + i];
      conv_forward(&conv_[p * nd], pr, conv_t_.data(), m.B, m.T, d, kappa);
      pre = &conv_[p * nd];
    }
    S* a = &act_[p * nd];
    for (int64_t i = 0; i < nd; ++i) a[i] = silu(pre[i]);
  }
  // q, k = l2(q̂), l2(k̂) per head: x / √(Σx² + ε)
  for (int p = 0; p < 2; ++p)
    for (int64_t r = 0; r < nH; ++r) {
      const S* a = &act_[p * nd + r * Kh];
      const S ss = fastmath::lane_sum<S>(Kh, [&](int64_t j) { return a[j] * a[j]; });
      const S inv = S(1) / std::sqrt(ss + S(kEps));
      inv_[p * nH + r] = inv;
      S* q = &qk_[p * nd + r * Kh];
      for (int j = 0; j < Kh; ++j) q[j] = a[j] * inv;
    }
  matmul_forward(bz_.data(), u, w.b_proj, static_cast<const S*>(nullptr), N, d, H);
  for (int64_t i = 0; i < nH; ++i) beta_[i] = S(m.beta_scale) * sigmoid_(bz_[i]);
  if (m.gated) {
    matmul_forward(az_.data(), u, w.a_proj, w.dt_bias, N, d, H);
    for (int64_t r = 0; r < m.rows(); ++r)
      for (int h = 0; h < H; ++h) {
        const S A = static_cast<S>(std::exp(static_cast<double>(w.A_log[h])));
        // in double, rounded once: the same float whichever libm variant runs
        alpha_[r * H + h] = static_cast<S>(std::exp(static_cast<double>(-A * softplus(az_[r * H + h]))));
      }
  }
  rule_.forward(o_.data(), &qk_[0], &qk_[nd], &act_[2 * nd], beta_.data(), m.gated ? alpha_.data() : nullptr,
                rule_dims(m));
  rmsnorm_forward_eps(on_.data(), rstd_.data(), o_.data(), w.o_norm, static_cast<int>(nH), Kh, kEps);
  const S* top = on_.data();
  if (m.output_gate) {
    matmul_forward(g_.data(), u, w.g_proj, static_cast<const S*>(nullptr), N, d, d);
    for (int64_t i = 0; i < nd; ++i) gated_[i] = on_[i] * silu(g_[i]);
    top = gated_.data();
  }
  matmul_forward(out, top, w.o_proj, static_cast<const S*>(nullptr), N, d, d);
}

template <typename S>
void DeltaNetMixer<S>::backward(S* du, const DeltaNetGrads<S>& g, const S* dout, const S* u,
                                const DeltaNetWeights<S>& w, const DeltaNetDims& m) {
  const int N = static_cast<int>(m.rows()), d = m.d, H = m.H, Kh = m.head_dim(), kappa = m.K;
  const int64_t nd = m.rows() * d, nH = m.rows() * H;
  S* tmp = du_part_.data();  // ∂/∂u through one projection
  auto add_du = [&](const S* dy, S* dweight, S* dbias, const S* weight, int OC) {
    matmul_backward_add(du, tmp, dweight, dbias, dy, u, weight, N, d, OC);
  };
  // out = W_o top
  const S* top = m.output_gate ? gated_.data() : on_.data();
  matmul_backward(d_gated_.data(), g.o_proj, static_cast<S*>(nullptr), dout, top, w.o_proj, N, d, d);
  std::fill(du, du + nd, S(0));
  const S* d_on = d_gated_.data();
  if (m.output_gate) {  // top = ô ⊙ SiLU(g)
    for (int64_t i = 0; i < nd; ++i) {
      d_on_[i] = d_gated_[i] * silu(g_[i]);
      d_g_[i] = d_gated_[i] * on_[i] * silu_grad(g_[i]);
    }
    d_on = d_on_.data();
    add_du(d_g_.data(), g.g_proj, nullptr, w.g_proj, d);
  }
  std::fill(d_o_.begin(), d_o_.begin() + nd, S(0));
  rmsnorm_backward(d_o_.data(), g.o_norm, d_on, o_.data(), w.o_norm, rstd_.data(), static_cast<int>(nH), Kh);
  rule_.backward(&d_qkv_[0], &d_qkv_[nd], &d_qkv_[2 * nd], d_beta_.data(), m.gated ? d_alpha_.data() : nullptr,
                 d_o_.data(), &qk_[0], &qk_[nd], &act_[2 * nd], beta_.data(), m.gated ? alpha_.data() : nullptr,
                 rule_dims(m));
  // l2: ∂x̂ = inv·(∂q − q (q·∂q)); v̂ = v
  for (int p = 0; p < 2; ++p)
    for (int64_t r = 0; r < nH; ++r) {
      const S* q = &qk_[p * nd + r * Kh];
      const S* dq = &d_qkv_[p * nd + r * Kh];
      const S qd = fastmath::lane_sum<S>(Kh, [&](int64_t j) { return q[j] * dq[j]; });
      const S inv = inv_[p * nH + r];
      S* da = &d_act_[p * nd + r * Kh];
      for (int j = 0; j < Kh; ++j) da[j] = inv * (dq[j] - q[j] * qd);
    }
  std::copy(&d_qkv_[2 * nd], &d_qkv_[2 * nd] + nd, &d_act_[2 * nd]);
  // β = s·σ(bz): ∂bz = ∂β·β·(1 − β/s)
  for (int64_t i = 0; i < nH; ++i) d_bz_[i] = d_beta_[i] * beta_[i] * (S(1) - beta_[i] / S(m.beta_scale));
  add_du(d_bz_.data(), g.b_proj, nullptr, w.b_proj, H);
  if (m.gated) {  // log α = −A·softplus(az), A = exp(A_log)
    for (int h = 0; h < H; ++h) {
      const S A = static_cast<S>(std::exp(static_cast<double>(w.A_log[h])));
      double dA_log = 0;  // a sum over every row, with cancellation: accumulated in double, rows in order
      for (int64_t r = 0; r < m.rows(); ++r) {
        const int64_t i = r * H + h;
        const S dlog = d_alpha_[i] * alpha_[i];
        d_az_[i] = -dlog * A * softplus_grad(az_[i]);
        dA_log -= static_cast<double>(dlog) * static_cast<double>(A) * static_cast<double>(softplus(az_[i]));
      }
      g.A_log[h] += static_cast<S>(dA_log);
    }
    add_du(d_az_.data(), g.a_proj, g.dt_bias, w.a_proj, H);
  }
  // SiLU, the convolutions and the projections
  S* const gconv[3] = {g.q_conv, g.k_conv, g.v_conv};
  const S* convw[3] = {w.q_conv, w.k_conv, w.v_conv};
  S* const gproj[3] = {g.q_proj, g.k_proj, g.v_proj};
  const S* projw[3] = {w.q_proj, w.k_proj, w.v_proj};
  for (int p = 0; p < 3; ++p) {
    const S* pre = kappa > 0 ? &conv_[p * nd] : &proj_[p * nd];
    S* da = &d_act_[p * nd];
    for (int64_t i = 0; i < nd; ++i) da[i] *= silu_grad(pre[i]);
    const S* dproj = da;
    if (kappa > 0) {
      for (int c = 0; c < d; ++c)
        for (int i = 0; i < kappa; ++i) conv_t_[static_cast<int64_t>(i) * d + c] = convw[p][static_cast<int64_t>(c) * kappa + i];
      conv_backward(&d_qkv_[p * nd], d_conv_w_.data(), da, &proj_[p * nd], conv_t_.data(), m.B, m.T, d, kappa);
      for (int b = 0; b < m.B; ++b)  // the taps' gradient, sequences in order; (κ, d) → (d, κ)
        for (int i = 0; i < kappa; ++i)
          for (int c = 0; c < d; ++c)
            gconv[p][static_cast<int64_t>(c) * kappa + i] += d_conv_w_[(static_cast<int64_t>(b) * kappa + i) * d + c];
      dproj = &d_qkv_[p * nd];
    }
    add_du(dproj, gproj[p], nullptr, projw[p], d);
  }
}

template class DeltaNetMixer<float>;
template class DeltaNetMixer<double>;

}  // namespace srbench::model
