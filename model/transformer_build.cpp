// Building a transformer (transformer.hpp): its tensors' offsets, the variants chosen from the
// config, the fixed sinusoid table; and the workspace's sizing.
#include <omp.h>

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/transformer.hpp"

namespace srbench::model {

template <typename S>
Transformer<S>::Transformer(const ModelConfig& cfg)
    : cfg_(cfg),
      layout_(cfg),
      L_(cfg.layers),
      C_(cfg.d_model),
      H_(cfg.heads),
      F_(cfg.mlp_hidden()),
      V_(cfg.vocab),
      norm_(make_norm<S>(cfg)),
      activation_(make_activation<S>(cfg, layout_)),
      qkv_transforms_(make_qkv_transforms<S>(cfg, layout_)),
      attention_(make_attention<S>(cfg, layout_)),
      key_bias_inert_(cfg.attention == Attention::Softmax && cfg.position != Position::Rope) {
  for (int l = 0; l < L_; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    auto at = [&](const std::string& n) { return offset_or_none(layout_, b + n); };
    blocks_.push_back({at("ln1.weight"), at("ln1.bias"), at("attn.q.weight"), at("attn.q.bias"), at("attn.o.weight"),
                       at("attn.o.bias"), at("ln2.weight"), at("ln2.bias"), at("mlp.fc.weight"), at("mlp.fc.bias"),
                       at("mlp.proj.weight"), at("mlp.proj.bias")});
  }
  tok_emb_ = layout_.at("tok_emb").offset;
  pos_emb_ = offset_or_none(layout_, "pos_emb");
  lnfw_ = layout_.at("ln_f.weight").offset;
  lnfb_ = offset_or_none(layout_, "ln_f.bias");
  headw_ = layout_.at("head.weight").offset;
  headb_ = layout_.at("head.bias").offset;
  if (cfg.position == Position::Sinusoidal) {  // PE[t, 2i] = sin(t·ω_i), PE[t, 2i+1] = cos(t·ω_i)
    sinusoid_.resize(static_cast<size_t>(cfg.max_len) * C_);
    for (int t = 0; t < cfg.max_len; ++t)
      for (int i = 0; 2 * i < C_; ++i) {
        const double omega = std::pow(10000.0, -2.0 * i / C_);
        sinusoid_[static_cast<size_t>(t) * C_ + 2 * i] = static_cast<S>(std::sin(t * omega));
        sinusoid_[static_cast<size_t>(t) * C_ + 2 * i + 1] = static_cast<S>(std::cos(t * omega));
      }
  }
}

template <typename S>
Transformer<S>::~Transformer() = default;

// Forward's saved activations (the residual stream, the norms with their statistics, q|k|v, the
// attention weights, the heads, the MLP's two tensors, the final norm), then the rest: one
// layer's gradients, the rows' lengths, with need_grads attention backward's per-thread scratch
// and the key bias's kept gradient.
template <typename S>
template <typename Self, typename Fn>
void Transformer<S>::buffers(Self& self, int B, int T, bool need_grads, int threads, Fn&& f) {
  const int64_t N = static_cast<int64_t>(B) * T, L = self.L_, C = self.C_, F = self.F_;
  f(self.res_, (2 * L + 1) * N * C, Role::Saved);
  for (auto* v : {&self.ln1_, &self.ln2_, &self.atty_}) f(*v, L * N * C, Role::Saved);
  for (auto* v : {&self.ln1_mean_, &self.ln1_rstd_, &self.ln2_mean_, &self.ln2_rstd_}) f(*v, L * N, Role::Saved);
  f(self.qkv_, L * N * 3 * C, Role::Saved);
  f(self.att_, L * B * self.H_ * T * T, Role::Saved);
  f(self.fc_, L * N * F, Role::Saved);
  f(self.act_, L * N * F, Role::Saved);
  f(self.lnf_, N * C, Role::Saved);
  f(self.lnf_mean_, N, Role::Saved);
  f(self.lnf_rstd_, N, Role::Saved);
  for (auto* v : {&self.dres_, &self.dln_, &self.datty_}) f(*v, N * C, Role::Scratch);
  f(self.dqkv_, N * 3 * C, Role::Scratch);
  f(self.dact_, N * F, Role::Scratch);
  f(self.lengths_, B, Role::Scratch);
  if (!need_grads) return;
  f(self.scratch_, static_cast<int64_t>(threads) * T * T, Role::Scratch);
  f(self.kbias_keep_, self.key_bias_inert_ ? C : 0, Role::Scratch);
}

template <typename S>
void Transformer<S>::reserve(int B, int T, bool need_grads) {
  buffers(*this, B, T, need_grads, omp_get_max_threads(), GrowBuffer{});
  for (auto& stage : qkv_transforms_) stage->reserve(B, T);
  attention_->reserve(B, T);
}

template <typename S>
CallMemory Transformer<S>::workspace(int B, int T, bool need_grads, int threads) const {
  CallMemory m;
  buffers(*this, B, T, need_grads, threads, CountBuffer{&m});
  for (const auto& stage : qkv_transforms_) stage->add_workspace(m, B, T, threads);
  attention_->add_workspace(m, B, T, threads);
  return m;
}

// infer's buffers (transformer_infer_floats) and its qkv stages' for one group (LIMe's), all scratch.
template <typename S>
CallMemory Transformer<S>::infer_workspace(int B, int T, int threads) const {
  CallMemory stages;
  for (const auto& stage : qkv_transforms_) stage->add_workspace(stages, infer_group_examples(B, T), T, threads);
  CallMemory m;
  m.scratch = static_cast<int64_t>(sizeof(S)) * transformer_infer_floats(cfg_, B, T, threads) + stages.total();
  return m;
}

// transformer.cpp instantiates the class (and the members defined there); these are the rest.
template Transformer<float>::Transformer(const ModelConfig&);
template Transformer<double>::Transformer(const ModelConfig&);
template Transformer<float>::~Transformer();
template Transformer<double>::~Transformer();
template void Transformer<float>::reserve(int, int, bool);
template void Transformer<double>::reserve(int, int, bool);
template CallMemory Transformer<float>::workspace(int, int, bool, int) const;
template CallMemory Transformer<double>::workspace(int, int, bool, int) const;
template CallMemory Transformer<float>::infer_workspace(int, int, int) const;
template CallMemory Transformer<double>::infer_workspace(int, int, int) const;

}  // namespace srbench::model
