#include "model/variants.hpp"

#include <omp.h>

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/attention.hpp"
#include "model/layers.hpp"
#include "model/lime.hpp"
#include "model/relative.hpp"

namespace srbench::model {

namespace {

// The values of one spline site (MLP or attention) for every block — under `share: model` the
// same tensor for all — and the spline's shape.
struct SplineSites {
  std::vector<size_t> offsets;  // per block
  SplineShape shape;

  SplineSites(const ModelConfig& cfg, const ParamLayout& layout, const SplineConfig& sc, const char* own,
              const char* shared)
      : shape{sc.keypoints, sc.range, sc.extrapolate == Extrapolate::Linear} {
    for (int l = 0; l < cfg.layers; ++l)
      offsets.push_back(layout.at(sc.share == SplineShare::Layer ? "blocks." + std::to_string(l) + "." + own
                                                                 : std::string(shared))
                            .offset);
  }
  template <typename S>
  S* values(S* buffer, int l) const {
    return buffer + offsets[l];
  }
};

// ---- norms -----------------------------------------------------------------------------------
template <typename S>
void rmsnorm_forward_fn(S* out, S*, S* rstd, const S* inp, const S* weight, const S*, int N, int C) {
  rmsnorm_forward(out, rstd, inp, weight, N, C);
}
template <typename S>
void rmsnorm_backward_fn(S* dinp, S* dweight, S*, const S* dout, const S* inp, const S* weight, const S*,
                         const S* rstd, int N, int C) {
  rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, N, C);
}

// ---- activations -----------------------------------------------------------------------------
// A fixed elementwise function of layers.hpp (gelu, relu): no parameters.
template <typename S, void (*Forward)(S*, const S*, int64_t), void (*Backward)(S*, const S*, const S*, int64_t)>
class FixedActivation final : public MlpActivation<S> {
 public:
  void forward(S* out, const S* inp, const S*, int, int64_t n) const override { Forward(out, inp, n); }
  void backward(S* dinp, S*, const S* dout, const S* inp, const S*, int, int64_t n) const override {
    Backward(dinp, inp, dout, n);
  }
};

// φ of blocks.{l}.mlp.act.values (or spline.mlp.values).
template <typename S>
class SplineActivation final : public MlpActivation<S> {
 public:
  SplineActivation(const ModelConfig& cfg, const ParamLayout& layout)
      : spline_(cfg, layout, cfg.mlp_spline, "mlp.act.values", "spline.mlp.values") {}
  void forward(S* out, const S* inp, const S* params, int l, int64_t n) const override {
    spline_forward(out, inp, spline_.values(params, l), n, spline_.shape);
  }
  void backward(S* dinp, S* grads, const S* dout, const S* inp, const S* params, int l, int64_t n) const override {
    spline_backward(dinp, spline_.values(grads, l), dout, inp, spline_.values(params, l), n, spline_.shape);
  }

 private:
  SplineSites spline_;
};

// ---- qkv transforms --------------------------------------------------------------------------
// LIMe (lime.hpp): layer l's keys and values mix the raw k̂, v̂ of every layer m <= l through the
// router blocks.{l}.attn.router (l >= 1). Saves every layer's raw k̂|v̂ (2·L·N·C); accumulates
// their gradients from the top layer down.
template <typename S>
class LimeMixing final : public QkvTransform<S> {
 public:
  LimeMixing(const ModelConfig& cfg, const ParamLayout& layout) : L_(cfg.layers), C_(cfg.d_model), H_(cfg.heads) {
    for (int l = 0; l < L_; ++l)
      routers_.push_back(offset_or_none(layout, "blocks." + std::to_string(l) + ".attn.router"));
  }
  void reserve(int B, int T) override { buffers(*this, B, T, GrowBuffer{}); }
  void add_workspace(CallMemory& m, int B, int T, int) const override { buffers(*this, B, T, CountBuffer{&m}); }
  void forward(S* qkv, const S* params, int l, int B, int T) override {
    lime_forward(qkv, kv_raw_.data(), tmp_.data(), tensor_at(params, routers_[l]), l, L_,
                 static_cast<int64_t>(B) * T, C_, H_);
  }
  void backward(S* dqkv, S* grads, const S* params, int l, int B, int T) override {
    const int64_t N = static_cast<int64_t>(B) * T;
    if (l == L_ - 1) zero(dkv_raw_, L_ * N * 2 * C_);  // the top layer starts the accumulation
    lime_backward(dqkv, tensor_at(grads, routers_[l]), dkv_raw_.data(), tmp_.data(), kv_raw_.data(),
                  tensor_at(params, routers_[l]), l, L_, N, C_, H_);
  }

 private:
  template <typename Self, typename Fn>
  static void buffers(Self& self, int B, int T, Fn&& f) {
    const int64_t N = static_cast<int64_t>(B) * T;
    f(self.kv_raw_, self.L_ * N * 2 * self.C_, Role::Saved);
    f(self.dkv_raw_, self.L_ * N * 2 * self.C_, Role::Scratch);
    f(self.tmp_, N * self.C_, Role::Scratch);
  }
  int L_, C_, H_;
  std::vector<size_t> routers_;  // per block (kNone for block 0)
  std::vector<S> kv_raw_, dkv_raw_, tmp_;
};

// RoPE: q and k of each head rotated pairwise by t·θ_i, θ_i = 10000^(−2i/hs).
template <typename S>
class RotaryPositions final : public QkvTransform<S> {
 public:
  explicit RotaryPositions(const ModelConfig& cfg) : C_(cfg.d_model), H_(cfg.heads) {
    const int hs = cfg.head_size();
    cos_sin_.resize(static_cast<size_t>(cfg.max_len) * hs);  // (max_len, hs/2, 2)
    for (int t = 0; t < cfg.max_len; ++t)
      for (int i = 0; 2 * i < hs; ++i) {
        const double theta = std::pow(10000.0, -2.0 * i / hs);
        cos_sin_[static_cast<size_t>(t) * hs + 2 * i] = static_cast<S>(std::cos(t * theta));
        cos_sin_[static_cast<size_t>(t) * hs + 2 * i + 1] = static_cast<S>(std::sin(t * theta));
      }
  }
  void reserve(int, int) override {}
  void add_workspace(CallMemory&, int, int, int) const override {}
  void forward(S* qkv, const S*, int, int B, int T) override { rope_forward(qkv, cos_sin_.data(), B, T, C_, H_); }
  void backward(S* dqkv, S*, const S*, int, int B, int T) override {
    rope_backward(dqkv, cos_sin_.data(), B, T, C_, H_);
  }

 private:
  int C_, H_;
  std::vector<S> cos_sin_;
};

// ---- attention kernels -----------------------------------------------------------------------
// ALiBi's slopes s_h = 2^(−8(h+1)/H) under `position: alibi`, else none (symmetric under
// `causal: false`: the kernels apply them).
template <typename S>
std::vector<S> alibi_slopes(const ModelConfig& cfg) {
  std::vector<S> slopes;
  if (cfg.position == Position::Alibi)
    for (int h = 0; h < cfg.heads; ++h) slopes.push_back(static_cast<S>(std::pow(2.0, -8.0 * (h + 1) / cfg.heads)));
  return slopes;
}
template <typename S>
const S* data_or_null(const std::vector<S>& v) {
  return v.empty() ? nullptr : v.data();
}

// The score terms of the kernels with scores (softmax, spline-score): ALiBi's slopes under
// `position: alibi`, Transformer-XL's terms under `relative` (relative.hpp), else none.
template <typename S>
class ScoreTermSource {
 public:
  ScoreTermSource(const ModelConfig& cfg, const ParamLayout& layout) : slopes_(alibi_slopes<S>(cfg)) {
    if (cfg.position == Position::Relative) relative_ = std::make_unique<RelativePositions<S>>(cfg, layout);
  }
  void reserve(int B, int T) {
    if (relative_) relative_->reserve(B, T);
  }
  void add_workspace(CallMemory& m, int B, int T, int threads) const {
    if (relative_) relative_->add_workspace(m, B, T, threads);
  }
  ScoreTerms<S> forward(const S* params, int l, int T) {
    ScoreTerms<S> terms{data_or_null(slopes_)};
    if (relative_) relative_->forward(terms, params, l, T);
    return terms;
  }
  // The terms of the backward pass, and where the kernel puts the relative terms' gradients.
  ScoreTerms<S> backward(RelativeGrads<S>& drel, const S* params, S* grads, int l, int T) {
    ScoreTerms<S> terms{data_or_null(slopes_)};
    if (relative_) relative_->backward_terms(terms, drel, params, grads, l, T);
    return terms;
  }
  // After the kernel's backward: W_R's gradient.
  void finish_backward(S* grads, const S* params, int l, int T) {
    if (relative_) relative_->backward(grads, params, l, T);
  }
  // Forward only: every block's p_r for T positions computed once (prepare_infer), then read.
  void reserve_infer(int T) {
    if (relative_) relative_->reserve_infer(T);
  }
  void prepare_infer(const S* params, int L, int T) {
    ScoreTerms<S> unused;
    for (int l = 0; relative_ && l < L; ++l) relative_->forward(unused, params, l, T);
  }
  ScoreTerms<S> infer(const S* params, int l, int T) {
    ScoreTerms<S> terms{data_or_null(slopes_)};
    if (relative_) relative_->saved_terms(terms, params, l, T);
    return terms;
  }
  bool relative() const { return relative_ != nullptr; }

 private:
  std::vector<S> slopes_;
  std::unique_ptr<RelativePositions<S>> relative_;
};

// The forward-only kernels' per-thread strip scratch (attention_infer_scratch_size).
template <typename S>
void grow_strip_scratch(std::vector<S>& v, int T, int hs, bool relative) {
  grow(v, omp_get_max_threads() * attention_infer_scratch_size(T, hs, relative));
}

template <typename S>
class SoftmaxAttention final : public AttentionKernel<S> {
 public:
  SoftmaxAttention(const ModelConfig& cfg, const ParamLayout& layout)
      : L_(cfg.layers), C_(cfg.d_model), H_(cfg.heads), terms_(cfg, layout) {}
  void reserve(int B, int T) override { terms_.reserve(B, T); }
  void add_workspace(CallMemory& m, int B, int T, int threads) const override { terms_.add_workspace(m, B, T, threads); }
  void forward(S* out, S* att, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B,
               int T) override {
    attention_forward(out, att, qkv, keys, terms_.forward(params, l, T), B, T, C_, H_);
  }
  void backward(S* dqkv, S* grads, S* scratch, const S* dout, const S* qkv, const S* att, const S* params,
                const AttentionKeys& keys, int l, int B, int T) override {
    RelativeGrads<S> drel;
    const ScoreTerms<S> terms = terms_.backward(drel, params, grads, l, T);
    attention_backward(dqkv, drel, scratch, dout, qkv, att, keys, terms, B, T, C_, H_);
    terms_.finish_backward(grads, params, l, T);
  }
  void reserve_infer(int, int T) override {
    terms_.reserve_infer(T);
    grow_strip_scratch(strip_, T, C_ / H_, terms_.relative());
  }
  void prepare_infer(const S* params, int T) override { terms_.prepare_infer(params, L_, T); }
  void infer(S* out, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B, int T) override {
    attention_infer(out, strip_.data(), qkv, keys, terms_.infer(params, l, T), B, T, C_, H_);
  }

 private:
  int L_, C_, H_;
  ScoreTermSource<S> terms_;
  std::vector<S> strip_;
};

// α_ij = φ(s_ij) / (Σ_j' |φ(s_ij')| + ε). Saves the scores (L,B,H,T,T) and the row
// denominators (L,B,H,T).
template <typename S>
class SplineScoreAttention final : public AttentionKernel<S> {
 public:
  SplineScoreAttention(const ModelConfig& cfg, const ParamLayout& layout)
      : L_(cfg.layers), C_(cfg.d_model), H_(cfg.heads), terms_(cfg, layout),
        spline_(cfg, layout, cfg.attn_spline, "attn.kernel.values", "spline.attn.values") {}
  void reserve(int B, int T) override {
    buffers(*this, B, T, GrowBuffer{});
    terms_.reserve(B, T);
  }
  void add_workspace(CallMemory& m, int B, int T, int threads) const override {
    buffers(*this, B, T, CountBuffer{&m});
    terms_.add_workspace(m, B, T, threads);
  }
  void forward(S* out, S* att, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B,
               int T) override {
    spline_score_attention_forward(out, att, scores(l, B, T), norm(l, B, T), qkv, keys, terms_.forward(params, l, T),
                                   spline_.values(params, l), spline_.shape, B, T, C_, H_);
  }
  void backward(S* dqkv, S* grads, S* scratch, const S* dout, const S* qkv, const S* att, const S* params,
                const AttentionKeys& keys, int l, int B, int T) override {
    RelativeGrads<S> drel;
    const ScoreTerms<S> terms = terms_.backward(drel, params, grads, l, T);
    spline_score_attention_backward(dqkv, spline_.values(grads, l), drel, scratch, dout, qkv, att, scores(l, B, T),
                                    norm(l, B, T), keys, terms, spline_.values(params, l), spline_.shape, B, T, C_,
                                    H_);
    terms_.finish_backward(grads, params, l, T);
  }
  void reserve_infer(int, int T) override {
    terms_.reserve_infer(T);
    grow_strip_scratch(strip_, T, C_ / H_, terms_.relative());
  }
  void prepare_infer(const S* params, int T) override { terms_.prepare_infer(params, L_, T); }
  void infer(S* out, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B, int T) override {
    spline_score_attention_infer(out, strip_.data(), qkv, keys, terms_.infer(params, l, T), spline_.values(params, l),
                                 spline_.shape, B, T, C_, H_);
  }

 private:
  template <typename Self, typename Fn>
  static void buffers(Self& self, int B, int T, Fn&& f) {
    f(self.scores_, self.L_ * self.pairs(B) * T * T, Role::Saved);
    f(self.norm_, self.L_ * self.pairs(B) * T, Role::Saved);
  }
  int64_t pairs(int B) const { return static_cast<int64_t>(B) * H_; }
  S* scores(int l, int B, int T) { return scores_.data() + l * pairs(B) * T * T; }
  S* norm(int l, int B, int T) { return norm_.data() + l * pairs(B) * T; }
  int L_, C_, H_;
  ScoreTermSource<S> terms_;
  std::vector<S> scores_, norm_, strip_;
  SplineSites spline_;
};

// K_ij = φ(q_i)·φ(k_j), α_ij = K_ij / (Σ_j' |K_ij'| + ε). Saves φ(q)|φ(k) (L,N,2C) and the row
// denominators (L,B,H,T); qk, dphi (N,2C) are backward's scratch.
template <typename S>
class SplineKernelAttention final : public AttentionKernel<S> {
 public:
  SplineKernelAttention(const ModelConfig& cfg, const ParamLayout& layout)
      : L_(cfg.layers), C_(cfg.d_model), H_(cfg.heads),
        spline_(cfg, layout, cfg.attn_spline, "attn.kernel.values", "spline.attn.values") {}
  void reserve(int B, int T) override { buffers(*this, B, T, GrowBuffer{}); }
  void add_workspace(CallMemory& m, int B, int T, int) const override { buffers(*this, B, T, CountBuffer{&m}); }
  void forward(S* out, S* att, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B,
               int T) override {
    spline_kernel_attention_forward(out, att, norm(l, B, T), phi(l, B, T), qkv, keys, spline_.values(params, l),
                                    spline_.shape, B, T, C_, H_);
  }
  void backward(S* dqkv, S* grads, S* scratch, const S* dout, const S* qkv, const S* att, const S* params,
                const AttentionKeys& keys, int l, int B, int T) override {
    spline_kernel_attention_backward(dqkv, spline_.values(grads, l), scratch, qk_.data(), dphi_.data(), dout, qkv,
                                     att, norm(l, B, T), phi(l, B, T), keys, spline_.values(params, l),
                                     spline_.shape, B, T, C_, H_);
  }
  // Forward only: qk_ holds φ(q) | φ(k) of the call's rows.
  void reserve_infer(int B, int T) override {
    grow(qk_, static_cast<int64_t>(B) * T * 2 * C_);
    grow_strip_scratch(strip_, T, C_ / H_, false);
  }
  void prepare_infer(const S*, int) override {}
  void infer(S* out, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B, int T) override {
    spline_kernel_attention_infer(out, strip_.data(), qk_.data(), qkv, keys, spline_.values(params, l),
                                  spline_.shape, B, T, C_, H_);
  }

 private:
  template <typename Self, typename Fn>
  static void buffers(Self& self, int B, int T, Fn&& f) {
    const int64_t N = static_cast<int64_t>(B) * T;
    f(self.norm_, self.L_ * N * self.H_, Role::Saved);
    f(self.phi_, self.L_ * N * 2 * self.C_, Role::Saved);
    f(self.qk_, N * 2 * self.C_, Role::Scratch);
    f(self.dphi_, N * 2 * self.C_, Role::Scratch);
  }
  S* norm(int l, int B, int T) { return norm_.data() + l * static_cast<int64_t>(B) * T * H_; }
  S* phi(int l, int B, int T) { return phi_.data() + l * static_cast<int64_t>(B) * T * 2 * C_; }
  int L_, C_, H_;
  std::vector<S> norm_, phi_, qk_, dphi_, strip_;
  SplineSites spline_;
};

}  // namespace

template <typename S>
NormFns<S> make_norm(const ModelConfig& cfg) {
  if (cfg.norm == Norm::Layer) return {layernorm_forward<S>, layernorm_backward<S>};
  return {rmsnorm_forward_fn<S>, rmsnorm_backward_fn<S>};
}

template <typename S>
std::unique_ptr<MlpActivation<S>> make_activation(const ModelConfig& cfg, const ParamLayout& layout) {
  switch (cfg.activation) {
    case Activation::Gelu: return std::make_unique<FixedActivation<S, gelu_forward<S>, gelu_backward<S>>>();
    case Activation::Relu: return std::make_unique<FixedActivation<S, relu_forward<S>, relu_backward<S>>>();
    case Activation::Spline: return std::make_unique<SplineActivation<S>>(cfg, layout);
  }
  throw ModelError("make_activation: unknown activation");
}

template <typename S>
std::vector<std::unique_ptr<QkvTransform<S>>> make_qkv_transforms(const ModelConfig& cfg, const ParamLayout& layout) {
  std::vector<std::unique_ptr<QkvTransform<S>>> stages;
  if (cfg.lime == Lime::Static) stages.push_back(std::make_unique<LimeMixing<S>>(cfg, layout));
  if (cfg.position == Position::Rope) stages.push_back(std::make_unique<RotaryPositions<S>>(cfg));
  return stages;
}

template <typename S>
std::unique_ptr<AttentionKernel<S>> make_attention(const ModelConfig& cfg, const ParamLayout& layout) {
  switch (cfg.attention) {
    case Attention::Softmax: return std::make_unique<SoftmaxAttention<S>>(cfg, layout);
    case Attention::SplineScore: return std::make_unique<SplineScoreAttention<S>>(cfg, layout);
    case Attention::SplineKernel: return std::make_unique<SplineKernelAttention<S>>(cfg, layout);
  }
  throw ModelError("make_attention: unknown attention");
}

#define SRBENCH_VARIANTS(S)                                                                                      \
  template NormFns<S> make_norm<S>(const ModelConfig&);                                                          \
  template std::unique_ptr<MlpActivation<S>> make_activation<S>(const ModelConfig&, const ParamLayout&);         \
  template std::vector<std::unique_ptr<QkvTransform<S>>> make_qkv_transforms<S>(const ModelConfig&,              \
                                                                                const ParamLayout&);             \
  template std::unique_ptr<AttentionKernel<S>> make_attention<S>(const ModelConfig&, const ParamLayout&);
SRBENCH_VARIANTS(float)
SRBENCH_VARIANTS(double)
#undef SRBENCH_VARIANTS

}  // namespace srbench::model
