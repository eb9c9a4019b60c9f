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

template <typename S>
void Transformer<S>::reserve(int B, int T, bool need_grads) {
  const int64_t N = static_cast<int64_t>(B) * T, L = L_, C = C_, F = F_;
  grow(res_, (2 * L + 1) * N * C);
  for (auto* v : {&ln1_, &ln2_, &atty_}) grow(*v, L * N * C);
  for (auto* v : {&ln1_mean_, &ln1_rstd_, &ln2_mean_, &ln2_rstd_}) grow(*v, L * N);
  grow(qkv_, L * N * 3 * C);
  grow(att_, L * B * H_ * T * T);
  grow(fc_, L * N * F);
  grow(act_, L * N * F);
  grow(lnf_, N * C);
  grow(lnf_mean_, N);
  grow(lnf_rstd_, N);
  for (auto* v : {&dres_, &dln_, &datty_}) grow(*v, N * C);
  grow(dqkv_, N * 3 * C);
  grow(dact_, N * F);
  grow(lengths_, B);
  if (need_grads) grow(scratch_, static_cast<int64_t>(omp_get_max_threads()) * T * T);
  for (auto& stage : qkv_transforms_) stage->reserve(B, T);
  attention_->reserve(B, T);
}

// transformer.cpp instantiates the class (and the members defined there); these are the rest.
template Transformer<float>::Transformer(const ModelConfig&);
template Transformer<double>::Transformer(const ModelConfig&);
template Transformer<float>::~Transformer();
template Transformer<double>::~Transformer();
template void Transformer<float>::reserve(int, int, bool);
template void Transformer<double>::reserve(int, int, bool);

}  // namespace srbench::model
