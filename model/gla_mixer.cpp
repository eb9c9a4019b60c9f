// GLA's mixer (gla_mixer.hpp): projections, the low-rank gate, the recurrence, the per-head output
// norm, the output gate and o_proj; and back.
#include "model/gla_mixer.hpp"

#include <algorithm>
#include <cmath>

#include "model/buffers.hpp"
#include "model/gates.hpp"
#include "model/layers.hpp"

namespace srbench::model {
namespace {

using gates::silu;
using gates::silu_grad;
using gates::softplus;
using gates::softplus_grad;

constexpr double kEps = 1e-6;              // o_norm's (F's norm_eps; linear-rnn.md)
constexpr double kGateNormaliser = 16.0;   // F's gate_logit_normalizer

GlaDims scan_dims(const GlaMixerDims& m) { return GlaDims{m.B, m.T, m.H, m.key_dim(), m.value_dim()}; }

}  // namespace

template <typename S>
template <typename Self, typename F>
void GlaMixer<S>::buffers(Self& self, const GlaMixerDims& m, bool need_grads, F&& f) {
  const int64_t n = m.rows(), d = m.d, H = m.H, nd = n * d, nk = n * (d / 2), nr = n * GlaMixerDims::kGateRank;
  const Role saved = Role::Saved, scratch = Role::Scratch;
  f(self.qk_, 2 * nk, saved), f(self.v_, nd, saved), f(self.g_, nd, saved);
  f(self.y_, m.gated ? nr : 0, saved), f(self.z_, m.gated ? nk : 0, saved), f(self.alpha_, m.gated ? nk : 0, saved);
  f(self.o_, nd, saved), f(self.rstd_, n * H, saved), f(self.on_, nd, saved), f(self.top_, nd, saved);
  if (!need_grads) return;
  f(self.d_top_, nd, scratch), f(self.d_on_, nd, scratch), f(self.d_g_, nd, scratch), f(self.d_o_, nd, scratch);
  f(self.d_qk_, 2 * nk, scratch), f(self.d_v_, nd, scratch), f(self.d_alpha_, m.gated ? nk : 0, scratch);
  f(self.d_z_, m.gated ? nk : 0, scratch), f(self.d_y_, m.gated ? nr : 0, scratch), f(self.du_part_, nd, scratch);
}

template <typename S>
void GlaMixer<S>::reserve(const GlaMixerDims& m, bool need_grads) {
  buffers(*this, m, need_grads, GrowBuffer{});
  scan_.reserve(scan_dims(m), need_grads);
}

template <typename S>
CallMemory GlaMixer<S>::memory(const GlaMixerDims& m, bool need_grads) const {
  CallMemory c;
  buffers(*this, m, need_grads, CountBuffer{&c});
  const CallMemory r = scan_.memory(scan_dims(m), need_grads);
  c.saved += r.saved, c.scratch += r.scratch;
  return c;
}

template <typename S>
void GlaMixer<S>::forward(S* out, const S* u, const GlaWeights<S>& w, const GlaMixerDims& m) {
  const int N = static_cast<int>(m.rows()), d = m.d, d2 = m.d / 2, R = GlaMixerDims::kGateRank;
  const int64_t nd = m.rows() * d, nk = m.rows() * d2;
  matmul_forward(&qk_[0], u, w.q_proj, static_cast<const S*>(nullptr), N, d, d2);
  matmul_forward(&qk_[nk], u, w.k_proj, static_cast<const S*>(nullptr), N, d, d2);
  matmul_forward(v_.data(), u, w.v_proj, static_cast<const S*>(nullptr), N, d, d);
  matmul_forward(g_.data(), u, w.g_proj, static_cast<const S*>(nullptr), N, d, d);
  if (m.gated) {
    matmul_forward(y_.data(), u, w.gk0, static_cast<const S*>(nullptr), N, d, R);
    matmul_forward(z_.data(), y_.data(), w.gk1, w.gk1_bias, N, R, d2);
    // log α = logsigmoid(z)/16 = −softplus(−z)/16; exp in double, rounded once (the same float
    // whichever libm variant runs)
    for (int64_t i = 0; i < nk; ++i)
      alpha_[i] = static_cast<S>(std::exp(-static_cast<double>(softplus(-z_[i])) / kGateNormaliser));
  }
  scan_.forward(o_.data(), &qk_[0], &qk_[nk], v_.data(), m.gated ? alpha_.data() : nullptr, scan_dims(m));
  rmsnorm_forward_eps(on_.data(), rstd_.data(), o_.data(), w.o_norm, static_cast<int>(m.rows() * m.H), m.value_dim(),
                      kEps);
  for (int64_t i = 0; i < nd; ++i) top_[i] = on_[i] * silu(g_[i]);
  matmul_forward(out, top_.data(), w.o_proj, static_cast<const S*>(nullptr), N, d, d);
}

template <typename S>
void GlaMixer<S>::backward(S* du, const GlaGrads<S>& g, const S* dout, const S* u, const GlaWeights<S>& w,
                           const GlaMixerDims& m) {
  const int N = static_cast<int>(m.rows()), d = m.d, d2 = m.d / 2, R = GlaMixerDims::kGateRank;
  const int64_t nd = m.rows() * d, nk = m.rows() * d2;
  S* tmp = du_part_.data();  // ∂/∂u through one projection
  auto add_du = [&](const S* dy, S* dweight, const S* weight, int OC) {
    matmul_backward_add(du, tmp, dweight, static_cast<S*>(nullptr), dy, u, weight, N, d, OC);
  };
  // out = W_o top, top = ô ⊙ SiLU(g)
  matmul_backward(d_top_.data(), g.o_proj, static_cast<S*>(nullptr), dout, top_.data(), w.o_proj, N, d, d);
  for (int64_t i = 0; i < nd; ++i) {
    d_on_[i] = d_top_[i] * silu(g_[i]);
    d_g_[i] = d_top_[i] * on_[i] * silu_grad(g_[i]);
  }
  std::fill(du, du + nd, S(0));
  add_du(d_g_.data(), g.g_proj, w.g_proj, d);
  std::fill(d_o_.begin(), d_o_.begin() + nd, S(0));
  rmsnorm_backward(d_o_.data(), g.o_norm, d_on_.data(), o_.data(), w.o_norm, rstd_.data(),
                   static_cast<int>(m.rows() * m.H), m.value_dim());
  scan_.backward(&d_qk_[0], &d_qk_[nk], d_v_.data(), m.gated ? d_alpha_.data() : nullptr, d_o_.data(), &qk_[0],
                 &qk_[nk], v_.data(), m.gated ? alpha_.data() : nullptr, scan_dims(m));
  if (m.gated) {  // α = exp(logsigmoid(z)/16): ∂z = ∂α·α·σ(−z)/16
    for (int64_t i = 0; i < nk; ++i)
      d_z_[i] = d_alpha_[i] * alpha_[i] * softplus_grad(-z_[i]) / static_cast<S>(kGateNormaliser);
    matmul_backward(d_y_.data(), g.gk1, g.gk1_bias, d_z_.data(), y_.data(), w.gk1, N, R, d2);
    add_du(d_y_.data(), g.gk0, w.gk0, R);
  }
  add_du(&d_qk_[0], g.q_proj, w.q_proj, d2);
  add_du(&d_qk_[nk], g.k_proj, w.k_proj, d2);
  add_du(d_v_.data(), g.v_proj, w.v_proj, d);
}

template class GlaMixer<float>;
template class GlaMixer<double>;

}  // namespace srbench::model
