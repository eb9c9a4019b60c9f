// The Mamba-1 language model of linear-rnn.md as an Architecture (architecture.hpp; internal to
// model/): pre-norm residual blocks of the Mamba mixer (mamba_mixer.hpp), no positions, no MLP.
//
//   h_0 = tok_emb[tokens]
//   h_{l+1} = h_l + Mixer_l(Norm_{ln1,l}(h_l))     l = 0 … L−1
//   logits = head(Norm_{ln_f}(h_L))                 (final_norm: false: head(h_L))
//
// Norm is RMSNorm (`norm: rms`, the default under mamba) or LayerNorm, ε 1e-5 both. Layout, in
// buffer order (d = d_model, E = expand·d, N = d_state, R = dt_rank, κ = d_conv):
//   tok_emb [V,d]
//   per block l: blocks.{l}.ln1.weight [d] (.bias [d]: norm layer)
//                blocks.{l}.mixer.in_proj.weight [2E,d]  .conv1d.weight [E,κ]  .conv1d.bias [E]
//                .x_proj.weight [R+2N,E]  .dt_proj.weight [E,R]  .dt_proj.bias [E]
//                .A_log [E,N]  .D [E]  .out_proj.weight [d,E]
//   ln_f.weight [d] (.bias [d])   (final_norm)
//   head.weight [V,d]  head.bias [V]
// Weight decay on tok_emb, head.weight and every 2-D mixer weight; not on norms, biases, A_log, D.
#pragma once

#include <vector>

#include "model/architecture.hpp"
#include "model/mamba_mixer.hpp"

namespace srbench::model {

template <typename S>
class MambaStack final : public Architecture<S> {
 public:
  explicit MambaStack(const ModelConfig& cfg);  // cfg valid, arch mamba

  const ParamLayout& layout() const override { return layout_; }
  void init(S* params, uint64_t seed) const override;
  void reserve(int B, int T, bool need_grads) override;
  CallMemory workspace(int B, int T, bool need_grads, int threads) const override;
  void forward(S* logits, const int32_t* tokens, const S* params, int B, int T, const RowLengths& rows) override;
  void backward(S* grads, const S* dlogits, const int32_t* tokens, const S* params) override;

  const S* block_output(int l) const override;  // (N, d): h_{l+1}

 private:
  struct Block {
    size_t ln1_w, ln1_b;  // ln1_b unused under rms
    size_t in_proj, conv_w, conv_b, x_proj, dt_w, dt_b, A_log, D, out_proj;
  };
  MambaDims dims(int B, int T) const;
  template <typename P>
  static auto weights(const Block& b, P* params);
  void norm_forward(S* out, S* mean, S* rstd, const S* inp, const S* w, const S* bias, int N) const;
  void norm_backward(S* dinp, S* dw, S* dbias, const S* dout, const S* inp, const S* w, const S* mean,
                     const S* rstd, int N) const;
  // f(vector, elements) for each of the stack's own buffers
  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f);

  ModelConfig cfg_;
  ParamLayout layout_;
  int L_, C_, V_;
  bool layer_norm_;
  size_t tok_emb_, lnf_w_ = 0, lnf_b_ = 0, headw_, headb_;
  std::vector<Block> blocks_;
  std::vector<MambaMixer<S>> mixers_;

  int B_ = 0, T_ = 0;
  std::vector<S> h_;            // (L+1, N, C): the residual stream before each block and after the last
  std::vector<S> n1_;           // (L, N, C): ln1's outputs
  std::vector<S> mean_, rstd_;  // (L+1, N): ln1's (and ln_f's, last) statistics
  std::vector<S> nf_;           // (N, C): ln_f's output
  std::vector<S> mix_;          // (N, C): a mixer's output
  std::vector<S> dh_, dn_;      // (N, C) each: ∂loss/∂h, ∂loss/∂ a norm's output
};

extern template class MambaStack<float>;
extern template class MambaStack<double>;

}  // namespace srbench::model
