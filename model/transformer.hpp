// The transformer of model.md as an Architecture (architecture.hpp; internal to model/):
// pre-norm; causal (model.md's decoder) or, under `causal: false`, bidirectional with each
// example's padding keys masked (chomsky.md §7.3).
//
//   h = tok_emb[x] (+ pos_emb[t])            embedding_forward
//   for each block l:                        block_forward
//     h = h + o(Attn(LN1(h)))                  attention_residual_forward
//     h = h + proj(act(fc(LN2(h))))            mlp_residual_forward
//   logits = head(LN_f(h))                   head_forward
//
// and backward in reverse: head_backward, block_backward (the MLP residual, then the attention
// residual), embedding_backward. The variants (norm, activation, LIMe / RoPE, attention kernel)
// are chosen when it is built (variants.hpp); Attn(·) is the qkv projection, the qkv transforms,
// the attention kernel.
//
// transformer.cpp holds the forward and backward passes and the diagnostics views,
// transformer_build.cpp the construction (offsets, variants, fixed tables) and the workspace's
// sizing, transformer_init.cpp model.md's init.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "model/architecture.hpp"
#include "model/variants.hpp"

namespace srbench::model {

// Forward only (Transformer::infer): a group is as many whole examples of T positions as fit in
// kInferRows rows, at least one and at most B.
inline constexpr int64_t kInferRows = 4096;
inline int infer_group_examples(int B, int T) {
  return static_cast<int>(std::clamp<int64_t>(kInferRows / std::max(T, 1), 1, std::max(B, 1)));
}

// The float values Transformer<float>::infer allocates for B sequences of T positions with
// `threads` OpenMP threads: one group's buffers, the attention strips' scratch per thread, the
// relative-position table, spline-kernel attention's q|k buffer (its caller's logits and its qkv
// stages' buffers not counted: Transformer::infer_workspace adds LIMe's).
int64_t transformer_infer_floats(const ModelConfig& cfg, int B, int T, int threads);

template <typename S>
class Transformer final : public Architecture<S> {
 public:
  explicit Transformer(const ModelConfig& cfg);  // cfg must be valid
  ~Transformer() override;

  const ParamLayout& layout() const override { return layout_; }
  void init(S* params, uint64_t seed) const override;
  void reserve(int B, int T, bool need_grads) override;
  CallMemory workspace(int B, int T, bool need_grads, int threads) const override;
  CallMemory infer_workspace(int B, int T, int threads) const override;
  void forward(S* logits, const int32_t* tokens, const S* params, int B, int T, const RowLengths& rows) override;
  void backward(S* grads, const S* dlogits, const int32_t* tokens, const S* params) override;
  void infer(S* logits, const int32_t* tokens, const S* params, int B, int T, const RowLengths& rows) override;

  bool has_attention() const override { return true; }
  const S* attention(int l) const override;
  const S* values(int l) const override;
  int64_t values_stride() const override { return 3 * static_cast<int64_t>(C_); }
  const S* block_output(int l) const override;

 private:
  // Offsets of one block's tensors in the flat buffer (kNone: absent, e.g. RMSNorm's biases).
  // q, k, v are adjacent: qkvw is one (3C,C) matrix, qkvb one (3C) bias.
  struct BlockOffsets {
    size_t ln1w, ln1b, qkvw, qkvb, ow, ob, ln2w, ln2b, fcw, fcb, projw, projb;
  };
  // Block l's saved activations in the workspace, for the current B, T.
  struct BlockActs {
    S *in, *mid, *out;             // (N,C) residual stream: the block's input, after attention, its output
    S *ln1, *ln1_mean, *ln1_rstd;  // (N,C), (N), (N)
    S *qkv;                        // (N,3C) q | k | v after the qkv transforms (LIMe's mixed k, v; RoPE)
    S *att;                        // (B,H,T,T) attention weights (0 for the keys not read)
    S *atty;                       // (N,C) heads concatenated
    S *ln2, *ln2_mean, *ln2_rstd;  // like ln1
    S *fc, *act;                   // (N,F) before / after the activation
  };
  BlockActs block_acts(int l);
  // The workspace's list (buffers.hpp): reserve grows these, workspace() counts them.
  template <typename Self, typename Fn>
  static void buffers(Self& self, int B, int T, bool need_grads, int threads, Fn&& f);

  // forward, in order (B_, T_, N_: the current call's sizes)
  void embedding_forward(const int32_t* tokens, const S* P);
  void block_forward(int l, const S* P);
  void attention_residual_forward(int l, const S* P);
  void mlp_residual_forward(int l, const S* P);
  void head_forward(S* logits, const S* P);
  // backward, in order; dres_ carries the residual stream's gradient from one to the next
  void head_backward(S* G, const S* dlogits, const S* P);
  void block_backward(int l, S* G, const S* P);
  void mlp_residual_backward(int l, S* G, const S* P);
  void attention_residual_backward(int l, S* G, const S* P);
  void embedding_backward(S* G, const int32_t* tokens);
  // forward only (infer): one group of B examples of T positions through every block
  void infer_group(S* logits, const int32_t* tokens, const S* P, int B, int T, const AttentionKeys& keys);

  ModelConfig cfg_;
  ParamLayout layout_;
  int L_, C_, H_, F_, V_;

  // chosen when built
  NormFns<S> norm_;
  std::unique_ptr<MlpActivation<S>> activation_;
  std::vector<std::unique_ptr<QkvTransform<S>>> qkv_transforms_;  // in forward order
  std::unique_ptr<AttentionKernel<S>> attention_;
  // Under softmax attention without RoPE the key bias's gradient is exactly 0 (transformer.cpp).
  bool key_bias_inert_;

  // fixed
  std::vector<BlockOffsets> blocks_;
  size_t tok_emb_, pos_emb_, lnfw_, lnfb_, headw_, headb_;
  std::vector<S> sinusoid_;  // (max_len, C) under `sinusoidal`, else empty

  // the current call's sizes and keys (forward sets them; backward and the views read them)
  int B_ = 0, T_ = 0;
  int64_t N_ = 0;
  AttentionKeys keys_;            // causal, or each example's keys [0, length) (lengths_)
  std::vector<int32_t> lengths_;  // (B) the rows' lengths under `causal: false`

  // workspace, grown by reserve()
  std::vector<S> res_;                          // (2L+1, N, C): residual stream, block l's input at 2l
  std::vector<S> ln1_, ln1_mean_, ln1_rstd_;    // (L, N, C), (L, N), (L, N)
  std::vector<S> qkv_;                          // (L, N, 3C)
  std::vector<S> att_;                          // (L, B, H, T, T)
  std::vector<S> atty_;                         // (L, N, C)
  std::vector<S> ln2_, ln2_mean_, ln2_rstd_;    // like ln1
  std::vector<S> fc_, act_;                     // (L, N, F)
  std::vector<S> lnf_, lnf_mean_, lnf_rstd_;    // (N, C), (N), (N)
  std::vector<S> dres_, dln_, datty_, dqkv_, dact_;  // gradients, one layer at a time: (N,C) ×3, (N,3C), (N,F)
  std::vector<S> kbias_keep_;                   // (C) the key bias's gradient kept across the qkv backward (if inert)
  std::vector<S> scratch_;                      // (threads, T, T) attention backward
  // forward only, one group of examples (rows R = its B·T) at a time: the residual stream and
  // its half-block copy (2, R, C), a norm's output, mean, rstd (R, C), (R), (R), qkv (R, 3C),
  // atty (R, C), fc, act (R, F)
  std::vector<S> ires_, iln_, imean_, irstd_, iqkv_, iatty_, ifc_, iact_;
};

extern template class Transformer<float>;
extern template class Transformer<double>;

}  // namespace srbench::model
