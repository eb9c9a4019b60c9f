// The Mamba language model (mamba.hpp): layout, init, forward and backward around the mixers.
#include "model/mamba.hpp"

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/init_random.hpp"
#include "model/layers.hpp"

namespace srbench::model {

void ParamLayout::add_mamba(const ModelConfig& cfg) {
  const int64_t V = cfg.vocab, d = cfg.d_model, E = static_cast<int64_t>(cfg.expand) * d, N = cfg.d_state;
  const int64_t R = cfg.resolved_dt_rank(), K = cfg.d_conv;
  const bool bias = cfg.resolved_norm() == Norm::Layer;
  auto norm = [&](const std::string& prefix) {
    add(prefix + ".weight", {d}, false);
    if (bias) add(prefix + ".bias", {d}, false);
  };
  add("tok_emb", {V, d}, true);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    norm(b + "ln1");
    const std::string m = b + "mixer.";
    add(m + "in_proj.weight", {2 * E, d}, true);
    add(m + "conv1d.weight", {E, K}, true);
    add(m + "conv1d.bias", {E}, false);
    add(m + "x_proj.weight", {R + 2 * N, E}, true);
    add(m + "dt_proj.weight", {E, R}, true);
    add(m + "dt_proj.bias", {E}, false);
    add(m + "A_log", {E, N}, false);
    add(m + "D", {E}, false);
    add(m + "out_proj.weight", {d, E}, true);
  }
  if (cfg.final_norm) norm("ln_f");
  add("head.weight", {V, d}, true);
  add("head.bias", {V}, false);
  spline_block_.offset = total_;
}

template <typename S>
MambaStack<S>::MambaStack(const ModelConfig& cfg)
    : cfg_(cfg), layout_(cfg), L_(cfg.layers), C_(cfg.d_model), V_(cfg.vocab),
      layer_norm_(cfg.resolved_norm() == Norm::Layer), mixers_(static_cast<size_t>(cfg.layers)) {
  tok_emb_ = layout_.at("tok_emb").offset;
  headw_ = layout_.at("head.weight").offset;
  headb_ = layout_.at("head.bias").offset;
  if (cfg.final_norm) {
    lnf_w_ = layout_.at("ln_f.weight").offset;
    if (layer_norm_) lnf_b_ = layout_.at("ln_f.bias").offset;
  }
  for (int l = 0; l < L_; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".", m = b + "mixer.";
    Block k{};
    k.ln1_w = layout_.at(b + "ln1.weight").offset;
    if (layer_norm_) k.ln1_b = layout_.at(b + "ln1.bias").offset;
    k.in_proj = layout_.at(m + "in_proj.weight").offset;
    k.conv_w = layout_.at(m + "conv1d.weight").offset;
    k.conv_b = layout_.at(m + "conv1d.bias").offset;
    k.x_proj = layout_.at(m + "x_proj.weight").offset;
    k.dt_w = layout_.at(m + "dt_proj.weight").offset;
    k.dt_b = layout_.at(m + "dt_proj.bias").offset;
    k.A_log = layout_.at(m + "A_log").offset;
    k.D = layout_.at(m + "D").offset;
    k.out_proj = layout_.at(m + "out_proj.weight").offset;
    blocks_.push_back(k);
  }
}

template <typename S>
MambaDims MambaStack<S>::dims(int B, int T) const {
  MambaDims m;
  m.B = B, m.T = T, m.d = C_, m.E = cfg_.expand * C_, m.N = cfg_.d_state, m.R = cfg_.resolved_dt_rank();
  m.K = cfg_.d_conv, m.signed_eigenvalues = cfg_.eigenvalues == Eigenvalues::Signed;
  return m;
}

template <typename S>
template <typename P>
auto MambaStack<S>::weights(const Block& b, P* p) {
  using W = std::conditional_t<std::is_const_v<P>, MambaWeights<S>, MambaGrads<S>>;
  return W{p + b.in_proj, p + b.conv_w, p + b.conv_b, p + b.x_proj, p + b.dt_w,
           p + b.dt_b,    p + b.A_log,  p + b.D,      p + b.out_proj};
}

template <typename S>
template <typename Self, typename F>
void MambaStack<S>::buffers(Self& self, int B, int T, bool need_grads, F&& f) {
  const int64_t N = static_cast<int64_t>(B) * T, C = self.C_, L = self.L_;
  f(self.h_, (L + 1) * N * C, Role::Saved);
  f(self.n1_, L * N * C, Role::Saved);
  f(self.mean_, (L + 1) * N, Role::Saved);
  f(self.rstd_, (L + 1) * N, Role::Saved);
  f(self.nf_, N * C, Role::Saved);
  f(self.mix_, N * C, Role::Saved);
  if (!need_grads) return;
  f(self.dh_, N * C, Role::Scratch);
  f(self.dn_, N * C, Role::Scratch);
}

template <typename S>
void MambaStack<S>::reserve(int B, int T, bool need_grads) {
  buffers(*this, B, T, need_grads, GrowBuffer{});
  for (auto& m : mixers_) m.reserve(dims(B, T), need_grads);
}

// The stack's own buffers and every layer's mixer's, as reserve(B, T, need_grads) allocates them.
template <typename S>
CallMemory MambaStack<S>::workspace(int B, int T, bool need_grads, int) const {
  CallMemory c;
  buffers(*this, B, T, need_grads, CountBuffer{&c});
  for (const auto& m : mixers_) {
    const CallMemory k = m.memory(dims(B, T), need_grads);
    c.saved += k.saved, c.scratch += k.scratch;
  }
  return c;
}

template <typename S>
void MambaStack<S>::norm_forward(S* out, S* mean, S* rstd, const S* inp, const S* w, const S* bias, int N) const {
  if (layer_norm_) layernorm_forward(out, mean, rstd, inp, w, bias, N, C_);
  else rmsnorm_forward(out, rstd, inp, w, N, C_);
}

template <typename S>
void MambaStack<S>::norm_backward(S* dinp, S* dw, S* dbias, const S* dout, const S* inp, const S* w, const S* mean,
                                  const S* rstd, int N) const {
  if (layer_norm_) layernorm_backward(dinp, dw, dbias, dout, inp, w, mean, rstd, N, C_);
  else rmsnorm_backward(dinp, dw, dout, inp, w, rstd, N, C_);
}

template <typename S>
void MambaStack<S>::forward(S* logits, const int32_t* tokens, const S* P, int B, int T, const RowLengths&) {
  B_ = B, T_ = T;
  const int N = B * T;
  const int64_t NC = static_cast<int64_t>(N) * C_;
  const MambaDims m = dims(B, T);
  encoder_forward(h_.data(), tokens, P + tok_emb_, static_cast<const S*>(nullptr), B, T, C_);
  for (int l = 0; l < L_; ++l) {
    const Block& k = blocks_[static_cast<size_t>(l)];
    const S* h = h_.data() + l * NC;
    S* n1 = n1_.data() + l * NC;
    norm_forward(n1, mean_.data() + static_cast<int64_t>(l) * N, rstd_.data() + static_cast<int64_t>(l) * N, h,
                 P + k.ln1_w, layer_norm_ ? P + k.ln1_b : nullptr, N);
    mixers_[static_cast<size_t>(l)].forward(mix_.data(), n1, weights(k, P), m);
    residual_forward(h_.data() + (l + 1) * NC, h, mix_.data(), NC);
  }
  const S* top = h_.data() + L_ * NC;
  if (cfg_.final_norm) {
    norm_forward(nf_.data(), mean_.data() + static_cast<int64_t>(L_) * N, rstd_.data() + static_cast<int64_t>(L_) * N,
                 top, P + lnf_w_, layer_norm_ ? P + lnf_b_ : nullptr, N);
    top = nf_.data();
  }
  matmul_forward(logits, top, P + headw_, P + headb_, N, C_, V_);
}

template <typename S>
void MambaStack<S>::backward(S* G, const S* dlogits, const int32_t* tokens, const S* P) {
  const int B = B_, T = T_, N = B * T;
  const int64_t NC = static_cast<int64_t>(N) * C_;
  const MambaDims m = dims(B, T);
  const S* top = cfg_.final_norm ? nf_.data() : h_.data() + L_ * NC;
  // head: ∂loss/∂ its input
  S* dtop = cfg_.final_norm ? dn_.data() : dh_.data();
  matmul_backward(dtop, G + headw_, G + headb_, dlogits, top, P + headw_, N, C_, V_);
  if (cfg_.final_norm) {
    std::fill(dh_.begin(), dh_.begin() + NC, S(0));
    norm_backward(dh_.data(), G + lnf_w_, layer_norm_ ? G + lnf_b_ : nullptr, dn_.data(), h_.data() + L_ * NC,
                  P + lnf_w_, mean_.data() + static_cast<int64_t>(L_) * N, rstd_.data() + static_cast<int64_t>(L_) * N,
                  N);
  }
  for (int l = L_ - 1; l >= 0; --l) {
    const Block& k = blocks_[static_cast<size_t>(l)];
    // h_{l+1} = h_l + Mixer(ln1(h_l)): dh passes through unchanged, and through the mixer and ln1
    mixers_[static_cast<size_t>(l)].backward(dn_.data(), weights(k, G), dh_.data(), n1_.data() + l * NC,
                                             weights(k, P), m);
    norm_backward(dh_.data(), G + k.ln1_w, layer_norm_ ? G + k.ln1_b : nullptr, dn_.data(), h_.data() + l * NC,
                  P + k.ln1_w, mean_.data() + static_cast<int64_t>(l) * N, rstd_.data() + static_cast<int64_t>(l) * N,
                  N);
  }
  encoder_backward(G + tok_emb_, static_cast<S*>(nullptr), dh_.data(), tokens, B, T, C_);
}

template <typename S>
const S* MambaStack<S>::block_output(int l) const {
  return h_.data() + static_cast<int64_t>(l + 1) * B_ * T_ * C_;
}

// linear-rnn.md's init, one generator over the tensors in layout order (`init: default`: the
// reference LM's, M's `Mamba.__init__` and `_init_weights`; `init: grazzi`: G's MambaLM).
template <typename S>
void MambaStack<S>::init(S* params, uint64_t seed) const {
  InitRandom rng(seed);
  const bool grazzi = cfg_.init == InitScheme::Grazzi;
  const double d = C_, E = static_cast<double>(cfg_.expand) * C_, K = cfg_.d_conv, R = cfg_.resolved_dt_rank();
  const int Nst = cfg_.d_state;
  for (const auto& p : layout_.tensors()) {
    S* x = params + p.offset;
    auto fill_uniform = [&](double b) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(b * (2.0 * rng.uniform() - 1.0));
    };
    auto fill_normal = [&](double sd) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(sd * rng.normal());
    };
    auto fill = [&](double v) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(v);
    };
    const std::string& n = p.name;
    if (n == "tok_emb") fill_normal(grazzi ? 1.0 : 0.02);
    else if (n == "head.weight") grazzi ? fill_uniform(1.0 / std::sqrt(d)) : fill_normal(0.02);
    else if (n == "head.bias" || ends_with(n, "ln1.bias") || n == "ln_f.bias") fill(0.0);
    else if (ends_with(n, "ln1.weight") || n == "ln_f.weight") fill(1.0);
    else if (ends_with(n, "in_proj.weight")) fill_uniform(1.0 / std::sqrt(d));
    else if (ends_with(n, "x_proj.weight")) fill_uniform(1.0 / std::sqrt(E));
    else if (ends_with(n, "conv1d.weight") || ends_with(n, "conv1d.bias")) fill_uniform(1.0 / std::sqrt(K));
    else if (ends_with(n, "dt_proj.weight")) fill_uniform(1.0 / std::sqrt(R));
    else if (ends_with(n, "dt_proj.bias")) {
      // dt log-uniform in [0.001, 0.1]; the bias is softplus⁻¹(dt) = dt + log(−expm1(−dt))
      for (size_t i = 0; i < p.size; ++i) {
        const double dt = std::exp(rng.uniform() * (std::log(0.1) - std::log(0.001)) + std::log(0.001));
        x[i] = static_cast<S>(dt + std::log(-std::expm1(-dt)));
      }
    } else if (ends_with(n, "A_log")) {
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(std::log(static_cast<double>(i % Nst + 1)));
    } else if (ends_with(n, ".D")) fill(1.0);
    else if (ends_with(n, "out_proj.weight")) fill_uniform(1.0 / std::sqrt(E) / (grazzi ? 1.0 : std::sqrt(L_)));
    else throw ModelError("mamba init: no rule for " + n);
  }
}

template class MambaStack<float>;
template class MambaStack<double>;

}  // namespace srbench::model
