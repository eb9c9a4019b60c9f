// MixerMlpStack's members (mixer_stack.hpp), included by the file of each Family, which
// instantiates it (mamba.cpp, deltanet.cpp, gla.cpp).
#pragma once

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/layers.hpp"
#include "model/mixer_stack.hpp"

namespace srbench::model {

template <typename S, typename Family>
MixerMlpStack<S, Family>::MixerMlpStack(const ModelConfig& cfg)
    : cfg_(cfg), layout_(cfg), L_(cfg.layers), C_(cfg.d_model), V_(cfg.vocab), I_(cfg.resolved_mlp_hidden()),
      layer_norm_(cfg.resolved_norm() == Norm::Layer), mixers_(static_cast<size_t>(cfg.layers)),
      mlps_(static_cast<size_t>(cfg.layers)) {
  tok_emb_ = layout_.at("tok_emb").offset;
  headw_ = layout_.at("head.weight").offset;
  headb_ = layout_.at("head.bias").offset;
  lnf_w_ = offset_or_none(layout_, "ln_f.weight");
  lnf_b_ = offset_or_none(layout_, "ln_f.bias");
  for (int l = 0; l < L_; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".", m = b + "mixer.";
    auto at = [&](const std::string& n) { return offset_or_none(layout_, n); };
    Block k{};
    k.ln1_w = at(b + "ln1.weight"), k.ln1_b = at(b + "ln1.bias");
    k.ln2_w = at(b + "ln2.weight"), k.ln2_b = at(b + "ln2.bias");
    k.mixer = Family::offsets(layout_, m);
    k.gate = at(b + "mlp.gate_proj.weight"), k.up = at(b + "mlp.up_proj.weight"), k.down = at(b + "mlp.down_proj.weight");
    blocks_.push_back(k);
  }
}

template <typename S, typename Family>
template <typename P>
auto MixerMlpStack<S, Family>::mlp_weights(const Block& b, P* p) {
  using W = std::conditional_t<std::is_const_v<P>, GatedMlpWeights<S>, GatedMlpGrads<S>>;
  return W{tensor_at(p, b.gate), tensor_at(p, b.up), tensor_at(p, b.down)};
}

template <typename S, typename Family>
template <typename Self, typename F>
void MixerMlpStack<S, Family>::buffers(Self& self, int B, int T, bool need_grads, F&& f) {
  const int64_t N = static_cast<int64_t>(B) * T, C = self.C_, parts = static_cast<int64_t>(self.L_) * (self.I_ > 0 ? 2 : 1);
  f(self.h_, (parts + 1) * N * C, Role::Saved);
  f(self.n_, parts * N * C, Role::Saved);
  f(self.mean_, (parts + 1) * N, Role::Saved);
  f(self.rstd_, (parts + 1) * N, Role::Saved);
  f(self.nf_, N * C, Role::Saved);
  f(self.part_, N * C, Role::Saved);
  if (!need_grads) return;
  f(self.dh_, N * C, Role::Scratch);
  f(self.dn_, N * C, Role::Scratch);
}

template <typename S, typename Family>
void MixerMlpStack<S, Family>::reserve(int B, int T, bool need_grads) {
  buffers(*this, B, T, need_grads, GrowBuffer{});
  for (auto& m : mixers_) m.reserve(Family::dims(cfg_, B, T), need_grads);
  if (I_ > 0)
    for (auto& m : mlps_) m.reserve(static_cast<int64_t>(B) * T, C_, I_, need_grads);
}

template <typename S, typename Family>
CallMemory MixerMlpStack<S, Family>::workspace(int B, int T, bool need_grads, int) const {
  CallMemory c;
  buffers(*this, B, T, need_grads, CountBuffer{&c});
  auto add = [&](const CallMemory& k) { c.saved += k.saved, c.scratch += k.scratch; };
  for (const auto& m : mixers_) add(m.memory(Family::dims(cfg_, B, T), need_grads));
  if (I_ > 0)
    for (const auto& m : mlps_) add(m.memory(static_cast<int64_t>(B) * T, C_, I_, need_grads));
  return c;
}

template <typename S, typename Family>
void MixerMlpStack<S, Family>::norm_forward(S* out, S* mean, S* rstd, const S* inp, const S* w, const S* bias, int N) const {
  if (layer_norm_) layernorm_forward_eps(out, mean, rstd, inp, w, bias, N, C_, Family::kNormEps);
  else rmsnorm_forward_eps(out, rstd, inp, w, N, C_, Family::kNormEps);
}

template <typename S, typename Family>
void MixerMlpStack<S, Family>::norm_backward(S* dinp, S* dw, S* dbias, const S* dout, const S* inp, const S* w, const S* mean,
                                     const S* rstd, int N) const {
  if (layer_norm_) layernorm_backward(dinp, dw, dbias, dout, inp, w, mean, rstd, N, C_);
  else rmsnorm_backward(dinp, dw, dout, inp, w, rstd, N, C_);
}

template <typename S, typename Family>
void MixerMlpStack<S, Family>::forward(S* logits, const int32_t* tokens, const S* P, int B, int T, const RowLengths&) {
  B_ = B, T_ = T;
  const int N = B * T, halves = I_ > 0 ? 2 : 1;
  const int64_t NC = static_cast<int64_t>(N) * C_;
  const auto m = Family::dims(cfg_, B, T);
  encoder_forward(h_.data(), tokens, P + tok_emb_, static_cast<const S*>(nullptr), B, T, C_);
  for (int idx = 0; idx < L_ * halves; ++idx) {
    const Block& k = blocks_[static_cast<size_t>(idx / halves)];
    const bool mixer = idx % halves == 0;
    const S* h = h_.data() + idx * NC;
    S* n = n_.data() + idx * NC;
    norm_forward(n, mean_.data() + static_cast<int64_t>(idx) * N, rstd_.data() + static_cast<int64_t>(idx) * N, h,
                 P + (mixer ? k.ln1_w : k.ln2_w), tensor_at(P, mixer ? k.ln1_b : k.ln2_b), N);
    if (mixer) mixers_[static_cast<size_t>(idx / halves)].forward(part_.data(), n, Family::weights(k.mixer, P), m);
    else mlps_[static_cast<size_t>(idx / halves)].forward(part_.data(), n, mlp_weights(k, P), N, C_, I_);
    residual_forward(h_.data() + (idx + 1) * NC, h, part_.data(), NC);
  }
  const int64_t last = static_cast<int64_t>(L_) * halves;
  const S* top = h_.data() + last * NC;
  if (cfg_.final_norm) {
    norm_forward(nf_.data(), mean_.data() + last * N, rstd_.data() + last * N, top, P + lnf_w_, tensor_at(P, lnf_b_), N);
    top = nf_.data();
  }
  matmul_forward(logits, top, P + headw_, P + headb_, N, C_, V_);
}

template <typename S, typename Family>
void MixerMlpStack<S, Family>::backward(S* G, const S* dlogits, const int32_t* tokens, const S* P) {
  const int B = B_, T = T_, N = B * T, halves = I_ > 0 ? 2 : 1;
  const int64_t NC = static_cast<int64_t>(N) * C_, last = static_cast<int64_t>(L_) * halves;
  const auto m = Family::dims(cfg_, B, T);
  const S* top = cfg_.final_norm ? nf_.data() : h_.data() + last * NC;
  S* dtop = cfg_.final_norm ? dn_.data() : dh_.data();
  matmul_backward(dtop, G + headw_, G + headb_, dlogits, top, P + headw_, N, C_, V_);
  if (cfg_.final_norm) {
    std::fill(dh_.begin(), dh_.begin() + NC, S(0));
    norm_backward(dh_.data(), G + lnf_w_, tensor_at(G, lnf_b_), dn_.data(), h_.data() + last * NC, P + lnf_w_,
                  mean_.data() + last * N, rstd_.data() + last * N, N);
  }
  for (int64_t idx = last - 1; idx >= 0; --idx) {
    const Block& k = blocks_[static_cast<size_t>(idx / halves)];
    const bool mixer = idx % halves == 0;
    const S* n = n_.data() + idx * NC;
    // h_{idx+1} = h_idx + f(norm(h_idx)): dh passes through unchanged, and through f and the norm
    if (mixer) mixers_[static_cast<size_t>(idx / halves)].backward(dn_.data(), Family::weights(k.mixer, G), dh_.data(), n,
                                                                    Family::weights(k.mixer, P), m);
    else mlps_[static_cast<size_t>(idx / halves)].backward(dn_.data(), mlp_weights(k, G), dh_.data(), n,
                                                            mlp_weights(k, P), N, C_, I_);
    norm_backward(dh_.data(), G + (mixer ? k.ln1_w : k.ln2_w), tensor_at(G, mixer ? k.ln1_b : k.ln2_b), dn_.data(),
                  h_.data() + idx * NC, P + (mixer ? k.ln1_w : k.ln2_w), mean_.data() + idx * N,
                  rstd_.data() + idx * N, N);
  }
  encoder_backward(G + tok_emb_, static_cast<S*>(nullptr), dh_.data(), tokens, B, T, C_);
}

template <typename S, typename Family>
const S* MixerMlpStack<S, Family>::block_output(int l) const {
  const int halves = I_ > 0 ? 2 : 1;
  return h_.data() + static_cast<int64_t>(l + 1) * halves * B_ * T_ * C_;
}

template <typename S, typename Family>
void MixerMlpStack<S, Family>::init(S* params, uint64_t seed) const {
  Family::init(cfg_, layout_, params, seed);
}

}  // namespace srbench::model
