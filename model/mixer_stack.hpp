// The language model around a linear-recurrent mixer — linear-rnn.md's Mamba, DeltaNet and GLA
// LMs — as an Architecture (architecture.hpp; internal to model/): pre-norm residual blocks of the
// mixer and, with an MLP width I >= 1, a SwiGLU MLP (gated_mlp.hpp; mamba's blocks have none: I = 0,
// ModelConfig::resolved_mlp_hidden); no positions.
//
//   h_0 = tok_emb[tokens]
//   h = h + Mixer_l(Norm_{ln1,l}(h));  h = h + MLP_l(Norm_{ln2,l}(h))  (the second without an MLP: absent)
//   logits = head(Norm_{ln_f}(h_L))      (final_norm: false: head(h_L))
//
// Every norm RMSNorm (`norm: rms`, the default) or LayerNorm, with the Family's ε (mamba 1e-5,
// deltanet and gla 1e-6). Layout, in buffer order (d = d_model, I = mlp width): tok_emb [V,d]; per
// block l: blocks.{l}.ln1.weight [d] (.bias), the mixer's tensors blocks.{l}.mixer.* (the
// Family's), blocks.{l}.ln2.weight [d] (.bias), .mlp.gate_proj.weight [I,d], .mlp.up_proj.weight
// [I,d], .mlp.down_proj.weight [d,I] (I >= 1); ln_f.weight [d] (.bias) (final_norm); head.weight
// [V,d], head.bias [V].
//
// A Family (mamba.hpp, deltanet.hpp, gla.hpp) gives the mixer: `template <typename S> using Mixer`,
// `Offsets` (its tensors' offsets in one block), `offsets(layout, "blocks.{l}.mixer.")`,
// `dims(cfg, B, T)`, `weights<S>(offsets, params)` (its Weights from const params, its Grads from
// mutable ones), `kNormEps`, and `init<S>(cfg, layout, params, seed)` (the whole model's init).
#pragma once

#include <string>
#include <vector>

#include "model/architecture.hpp"
#include "model/gated_mlp.hpp"

namespace srbench::model {

template <typename S, typename Family>
class MixerMlpStack final : public Architecture<S> {
 public:
  explicit MixerMlpStack(const ModelConfig& cfg);  // cfg valid, of the Family's arch

  const ParamLayout& layout() const override { return layout_; }
  void init(S* params, uint64_t seed) const override;
  void reserve(int B, int T, bool need_grads) override;
  CallMemory workspace(int B, int T, bool need_grads, int threads) const override;
  void forward(S* logits, const int32_t* tokens, const S* params, int B, int T, const RowLengths& rows) override;
  void backward(S* grads, const S* dlogits, const int32_t* tokens, const S* params) override;
  const S* block_output(int l) const override;  // (N, d): the residual stream after block l

 private:
  struct Block {
    size_t ln1_w, ln1_b, ln2_w, ln2_b;  // kNone where absent
    typename Family::Offsets mixer;
    size_t gate, up, down;
  };
  template <typename P>
  static auto mlp_weights(const Block& b, P* params);
  void norm_forward(S* out, S* mean, S* rstd, const S* inp, const S* w, const S* bias, int N) const;
  void norm_backward(S* dinp, S* dw, S* dbias, const S* dout, const S* inp, const S* w, const S* mean,
                     const S* rstd, int N) const;
  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f);

  ModelConfig cfg_;
  ParamLayout layout_;
  int L_, C_, V_, I_;
  bool layer_norm_;
  size_t tok_emb_, lnf_w_ = 0, lnf_b_ = 0, headw_, headb_;
  std::vector<Block> blocks_;
  std::vector<typename Family::template Mixer<S>> mixers_;
  std::vector<GatedMlp<S>> mlps_;

  int B_ = 0, T_ = 0;
  // the residual stream: before each block, between its two halves, and after the last:
  // (2L+1, N, C) with an MLP (h_{2l} before block l, h_{2l+1} after its mixer), (L+1, N, C) without
  std::vector<S> h_;
  std::vector<S> n_;            // (2L, N, C): ln1's and ln2's outputs, in the order of h_
  std::vector<S> mean_, rstd_;  // (2L+1, N): their statistics, ln_f's last
  std::vector<S> nf_;           // (N, C): ln_f's output
  std::vector<S> part_;         // (N, C): a mixer's or an MLP's output
  std::vector<S> dh_, dn_;      // (N, C) each
};

// linear-rnn.md's init for deltanet and gla, one generator over the tensors in layout order
// (`init: default`: F's `_init_weights`; `init: grazzi`: G's DeltaNet layer and LM).
template <typename S>
void init_deltanet_gla(const ModelConfig& cfg, const ParamLayout& layout, S* params, uint64_t seed);

}  // namespace srbench::model
