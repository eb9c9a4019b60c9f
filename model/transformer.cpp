// The transformer's forward and backward passes (transformer.hpp), one function per stage.
// Shapes: layers.hpp's legend (B, T, N = B·T, C, H, F, V); P the parameters, G the gradients
// (flat buffers); res(i) (N,C) is the residual stream after i half-blocks, so block l reads
// res(2l) and writes res(2l+1) (after attention) and res(2l+2).
#include "model/transformer.hpp"

#include <algorithm>

#include "model/attention.hpp"
#include "model/buffers.hpp"
#include "model/layers.hpp"

namespace srbench::model {

template <typename S>
typename Transformer<S>::BlockActs Transformer<S>::block_acts(int l) {
  const int64_t N = N_, C = C_, F = F_;
  auto rows = [&](std::vector<S>& v, int64_t width) { return v.data() + l * N * width; };
  return {.in = res_.data() + 2 * l * N * C,
          .mid = res_.data() + (2 * l + 1) * N * C,
          .out = res_.data() + (2 * l + 2) * N * C,
          .ln1 = rows(ln1_, C),
          .ln1_mean = rows(ln1_mean_, 1),
          .ln1_rstd = rows(ln1_rstd_, 1),
          .qkv = rows(qkv_, 3 * C),
          .att = att_.data() + l * static_cast<int64_t>(B_) * H_ * T_ * T_,
          .atty = rows(atty_, C),
          .ln2 = rows(ln2_, C),
          .ln2_mean = rows(ln2_mean_, 1),
          .ln2_rstd = rows(ln2_rstd_, 1),
          .fc = rows(fc_, F),
          .act = rows(act_, F)};
}

// The diagnostics views: block_acts' layout of the last forward, read-only (att; v in columns
// [2C, 3C) of qkv, under LIMe the mixed values; out).
template <typename S>
const S* Transformer<S>::attention(int l) const {
  return att_.data() + l * static_cast<int64_t>(B_) * H_ * T_ * T_;
}

template <typename S>
const S* Transformer<S>::values(int l) const {
  return qkv_.data() + l * N_ * 3 * C_ + 2 * C_;
}

template <typename S>
const S* Transformer<S>::block_output(int l) const {
  return res_.data() + (2 * l + 2) * N_ * C_;
}

// ---- forward ---------------------------------------------------------------------------------
// logits (N,V) of tokens (N). Under `causal: false` the rows' lengths (rows.lengths, kept for
// backward; without them every row is T long) say which keys each example's queries read.
template <typename S>
void Transformer<S>::forward(S* logits, const int32_t* tokens, const S* P, int B, int T, const RowLengths& rows) {
  B_ = B;
  T_ = T;
  N_ = static_cast<int64_t>(B) * T;
  keys_ = {cfg_.causal, nullptr};
  if (!cfg_.causal && rows.lengths) {
    std::copy(rows.lengths, rows.lengths + B, lengths_.begin());
    keys_.lengths = lengths_.data();
  }
  embedding_forward(tokens, P);
  for (int l = 0; l < L_; ++l) block_forward(l, P);
  head_forward(logits, P);
}

// res(0) (N,C) = tok_emb[tokens] (+ pos_emb[t], or the fixed sinusoid table).
template <typename S>
void Transformer<S>::embedding_forward(const int32_t* tokens, const S* P) {
  const S* pos = pos_emb_ != kNone ? P + pos_emb_ : sinusoid_.empty() ? nullptr : sinusoid_.data();
  model::encoder_forward(res_.data(), tokens, P + tok_emb_, pos, B_, T_, C_);
}

// res(2l) (N,C) → res(2l+2) (N,C).
template <typename S>
void Transformer<S>::block_forward(int l, const S* P) {
  attention_residual_forward(l, P);  // h = h + o(Attn(LN1(h)))
  mlp_residual_forward(l, P);        // h = h + proj(act(fc(LN2(h))))
}

// mid (N,C) = in + o(Attn(LN1(in))); qkv (N,3C), att (B,H,T,T), atty (N,C) saved.
template <typename S>
void Transformer<S>::attention_residual_forward(int l, const S* P) {
  const BlockOffsets& o = blocks_[l];
  const BlockActs a = block_acts(l);
  const int n = static_cast<int>(N_);
  norm_.forward(a.ln1, a.ln1_mean, a.ln1_rstd, a.in, P + o.ln1w, tensor_at(P, o.ln1b), n, C_);
  matmul_forward(a.qkv, a.ln1, P + o.qkvw, P + o.qkvb, n, C_, 3 * C_);
  for (auto& stage : qkv_transforms_) stage->forward(a.qkv, P, l, B_, T_);
  attention_->forward(a.atty, a.att, a.qkv, P, keys_, l, B_, T_);
  matmul_forward(a.mid, a.atty, P + o.ow, P + o.ob, n, C_, C_);
  residual_forward(a.mid, a.mid, a.in, N_ * C_);
}

// out (N,C) = mid + proj(act(fc(LN2(mid)))); fc, act (N,F) saved.
template <typename S>
void Transformer<S>::mlp_residual_forward(int l, const S* P) {
  const BlockOffsets& o = blocks_[l];
  const BlockActs a = block_acts(l);
  const int n = static_cast<int>(N_);
  norm_.forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.mid, P + o.ln2w, tensor_at(P, o.ln2b), n, C_);
  matmul_forward(a.fc, a.ln2, P + o.fcw, P + o.fcb, n, C_, F_);
  activation_->forward(a.act, a.fc, P, l, N_ * F_);
  matmul_forward(a.out, a.act, P + o.projw, P + o.projb, n, F_, C_);
  residual_forward(a.out, a.out, a.mid, N_ * C_);
}

// logits (N,V) = head(LN_f(res(2L))); lnf (N,C) saved.
template <typename S>
void Transformer<S>::head_forward(S* logits, const S* P) {
  const int n = static_cast<int>(N_);
  norm_.forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), res_.data() + 2 * L_ * N_ * C_, P + lnfw_,
                tensor_at(P, lnfb_), n, C_);
  matmul_forward(logits, lnf_.data(), P + headw_, P + headb_, n, C_, V_);
}

// ---- forward only ----------------------------------------------------------------------------
// infer: forward's logits, group by group. A group is as many whole examples as fit in
// kInferRows rows (at least one); it goes through every block before the next group starts (so
// LIMe's raw keys and values are those of the group's rows), with attention in query strips
// (AttentionKernel::infer). Every stage is row by row (norms, products, activations, RoPE,
// LIMe's mixing) or example by example (attention), with sgemm's sums independent of how a
// product is split: the logits are forward's bit for bit in float. Memory: the groups' buffers
// (kInferRows rows), the strips' scratch, under relative positions p (L, 2T−1, C): linear in T.
int64_t transformer_infer_floats(const ModelConfig& cfg, int B, int T, int threads) {
  // Transformer::infer's grow() calls below, the kernels' reserve_infer (variants.cpp) and
  // RelativePositions::reserve_infer.
  const int64_t C = cfg.d_model, F = cfg.mlp_hidden();
  const int64_t R = static_cast<int64_t>(infer_group_examples(B, T)) * T;
  const bool relative = cfg.position == Position::Relative;
  int64_t floats = R * (2 * C + 2 * C + 3 * C + 2 * F + 2) + B;  // ires, iln|iatty, iqkv, ifc|iact, imean|irstd
  floats += static_cast<int64_t>(std::max(threads, 1)) * attention_infer_scratch_size(T, static_cast<int>(C / cfg.heads), relative);
  if (relative) floats += static_cast<int64_t>(cfg.layers) * (2 * static_cast<int64_t>(T) - 1) * C;
  if (cfg.attention == Attention::SplineKernel) floats += static_cast<int64_t>(infer_group_examples(B, T)) * T * 2 * C;
  return floats;
}

template <typename S>
void Transformer<S>::infer(S* logits, const int32_t* tokens, const S* P, int B, int T, const RowLengths& rows) {
  const int G = infer_group_examples(B, T);
  const int64_t R = static_cast<int64_t>(G) * T, C = C_, F = F_;
  grow(ires_, 2 * R * C);
  for (auto* v : {&iln_, &iatty_}) grow(*v, R * C);
  for (auto* v : {&imean_, &irstd_}) grow(*v, R);
  grow(iqkv_, R * 3 * C);
  for (auto* v : {&ifc_, &iact_}) grow(*v, R * F);
  grow(lengths_, B);
  for (auto& stage : qkv_transforms_) stage->reserve(G, T);
  attention_->reserve_infer(G, T);
  attention_->prepare_infer(P, T);
  const bool own_lengths = !cfg_.causal && rows.lengths;
  if (own_lengths) std::copy(rows.lengths, rows.lengths + B, lengths_.begin());
  for (int b0 = 0; b0 < B; b0 += G) {
    const int g = std::min(G, B - b0);
    const int64_t first = static_cast<int64_t>(b0) * T;
    const AttentionKeys keys{cfg_.causal, own_lengths ? lengths_.data() + b0 : nullptr};
    infer_group(logits + first * V_, tokens + first, P, g, T, keys);
  }
}

// logits (B·T, V) of one group, as embedding_forward, block_forward and head_forward compute
// them, in the group's buffers: x = ires_ (the stream), y = its second half (the stream after
// attention), then x again after the MLP.
template <typename S>
void Transformer<S>::infer_group(S* logits, const int32_t* tokens, const S* P, int B, int T,
                                 const AttentionKeys& keys) {
  const int64_t R = static_cast<int64_t>(B) * T;
  const int n = static_cast<int>(R);
  S* x = ires_.data();
  S* y = x + R * C_;
  const S* pos = pos_emb_ != kNone ? P + pos_emb_ : sinusoid_.empty() ? nullptr : sinusoid_.data();
  model::encoder_forward(x, tokens, P + tok_emb_, pos, B, T, C_);
  for (int l = 0; l < L_; ++l) {
    const BlockOffsets& o = blocks_[l];
    norm_.forward(iln_.data(), imean_.data(), irstd_.data(), x, P + o.ln1w, tensor_at(P, o.ln1b), n, C_);
    matmul_forward(iqkv_.data(), iln_.data(), P + o.qkvw, P + o.qkvb, n, C_, 3 * C_);
    for (auto& stage : qkv_transforms_) stage->forward(iqkv_.data(), P, l, B, T);
    attention_->infer(iatty_.data(), iqkv_.data(), P, keys, l, B, T);
    matmul_forward(y, iatty_.data(), P + o.ow, P + o.ob, n, C_, C_);
    residual_forward(y, y, x, R * C_);
    norm_.forward(iln_.data(), imean_.data(), irstd_.data(), y, P + o.ln2w, tensor_at(P, o.ln2b), n, C_);
    matmul_forward(ifc_.data(), iln_.data(), P + o.fcw, P + o.fcb, n, C_, F_);
    activation_->forward(iact_.data(), ifc_.data(), P, l, R * F_);
    matmul_forward(x, iact_.data(), P + o.projw, P + o.projb, n, F_, C_);
    residual_forward(x, x, y, R * C_);
  }
  norm_.forward(iln_.data(), imean_.data(), irstd_.data(), x, P + lnfw_, tensor_at(P, lnfb_), n, C_);
  matmul_forward(logits, iln_.data(), P + headw_, P + headb_, n, C_, V_);
}

// ---- backward --------------------------------------------------------------------------------
// G += ∂loss/∂P from dlogits (N,V), after forward on the same batch.
template <typename S>
void Transformer<S>::backward(S* G, const S* dlogits, const int32_t* tokens, const S* P) {
  head_backward(G, dlogits, P);                               // dres = ∂/∂res(2L)
  for (int l = L_ - 1; l >= 0; --l) block_backward(l, G, P);  // dres: ∂/∂res(2l+2) → ∂/∂res(2l)
  embedding_backward(G, tokens);
}

// Of logits = head(LN_f(res(2L))): dres (N,C) = ∂loss/∂res(2L) (dres is zeroed first).
template <typename S>
void Transformer<S>::head_backward(S* G, const S* dlogits, const S* P) {
  const int n = static_cast<int>(N_);
  matmul_backward(dln_.data(), G + headw_, G + headb_, dlogits, lnf_.data(), P + headw_, n, C_, V_);
  zero(dres_, N_ * C_);
  norm_.backward(dres_.data(), G + lnfw_, tensor_at(G, lnfb_), dln_.data(), res_.data() + 2 * L_ * N_ * C_,
                 P + lnfw_, lnf_mean_.data(), lnf_rstd_.data(), n, C_);
}

// dres (N,C): ∂loss/∂res(2l+2) → ∂loss/∂res(2l).
template <typename S>
void Transformer<S>::block_backward(int l, S* G, const S* P) {
  mlp_residual_backward(l, G, P);        // of out = mid + proj(act(fc(LN2(mid))))
  attention_residual_backward(l, G, P);  // of mid = in + o(Attn(LN1(in)))
}

// Of out = mid + proj(act(fc(LN2(mid)))): dres (N,C) from ∂/∂out to ∂/∂mid (the identity path
// stays in dres, the MLP's path is added to it).
template <typename S>
void Transformer<S>::mlp_residual_backward(int l, S* G, const S* P) {
  const BlockOffsets& o = blocks_[l];
  const BlockActs a = block_acts(l);
  const int n = static_cast<int>(N_);
  matmul_backward(dact_.data(), G + o.projw, G + o.projb, dres_.data(), a.act, P + o.projw, n, F_, C_);
  // in place: dact becomes the gradient of the activation's input
  activation_->backward(dact_.data(), G, dact_.data(), a.fc, P, l, N_ * F_);
  matmul_backward(dln_.data(), G + o.fcw, G + o.fcb, dact_.data(), a.ln2, P + o.fcw, n, C_, F_);
  norm_.backward(dres_.data(), G + o.ln2w, tensor_at(G, o.ln2b), dln_.data(), a.mid, P + o.ln2w, a.ln2_mean,
                 a.ln2_rstd, n, C_);
}

// Of mid = in + o(Attn(LN1(in))): dres (N,C) from ∂/∂mid to ∂/∂in.
template <typename S>
void Transformer<S>::attention_residual_backward(int l, S* G, const S* P) {
  const BlockOffsets& o = blocks_[l];
  const BlockActs a = block_acts(l);
  const int n = static_cast<int>(N_);
  matmul_backward(datty_.data(), G + o.ow, G + o.ob, dres_.data(), a.atty, P + o.ow, n, C_, C_);
  attention_->backward(dqkv_.data(), G, scratch_.data(), datty_.data(), a.qkv, a.att, P, keys_, l, B_, T_);
  // The stages in reverse. LIMe: the router's gradient, the raw k̂|v̂ gradients of layers <= l;
  // dqkv's k|v columns become the complete gradient of this layer's raw k̂|v̂.
  for (auto stage = qkv_transforms_.rbegin(); stage != qkv_transforms_.rend(); ++stage)
    (*stage)->backward(dqkv_.data(), G, P, l, B_, T_);
  // Under softmax attention without RoPE the key bias adds q_i·b_k to every score of row i (to
  // every key the row reads, causal or not), a shift softmax ignores: ∂loss/∂b_k is exactly 0. Under LIMe too: layer m's key bias adds
  // the same vector Σ_j W_l[i, m·H + j]·b_{m,j} to every key of every layer l >= m that mixes
  // it, again a per-row shift. Keep it exactly 0 rather than summing the rounding noise of dK
  // over positions (which would also drive AdamW steps of order lr).
  if (key_bias_inert_) kbias_keep_.assign(G + o.qkvb + C_, G + o.qkvb + 2 * C_);
  matmul_backward(dln_.data(), G + o.qkvw, G + o.qkvb, dqkv_.data(), a.ln1, P + o.qkvw, n, C_, 3 * C_);
  if (key_bias_inert_) std::copy(kbias_keep_.begin(), kbias_keep_.end(), G + o.qkvb + C_);
  norm_.backward(dres_.data(), G + o.ln1w, tensor_at(G, o.ln1b), dln_.data(), a.in, P + o.ln1w, a.ln1_mean,
                 a.ln1_rstd, n, C_);
}

// Of res(0) = tok_emb[tokens] (+ pos_emb[t]): dres (N,C) = ∂loss/∂res(0) scattered into the
// token rows (and summed over examples into the learned position rows).
template <typename S>
void Transformer<S>::embedding_backward(S* G, const int32_t* tokens) {
  model::encoder_backward(G + tok_emb_, tensor_at(G, pos_emb_), dres_.data(), tokens, B_, T_, C_);
}

template class Transformer<float>;
template class Transformer<double>;

}  // namespace srbench::model
