#include "model/relative.hpp"

#include <omp.h>

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/layers.hpp"

namespace srbench::model {

template <typename S>
RelativePositions<S>::RelativePositions(const ModelConfig& cfg, const ParamLayout& layout)
    : L_(cfg.layers), C_(cfg.d_model), H_(cfg.heads), max_len_(cfg.max_len),
      softmax_(cfg.attention == Attention::Softmax) {
  for (int l = 0; l < L_; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".attn.rel.";
    u_.push_back(layout.at(b + "u").offset);
    v_.push_back(layout.at(b + "v").offset);
    w_.push_back(layout.at(b + "proj.weight").offset);
  }
  // R_r = [sin(r ω_k) for k < C/2 | cos(r ω_k) for k < C/2], ω_k = 10000^(−2k/C): halves, not interleaved
  const int half = C_ / 2;
  table_.resize(static_cast<size_t>(2 * max_len_ - 1) * C_);
  if (softmax_) grad_table_.resize(table_.size());
  for (int r = -(max_len_ - 1); r <= max_len_ - 1; ++r) {
    const int64_t at = static_cast<int64_t>(r + max_len_ - 1) * C_;
    for (int k = 0; k < half; ++k) {
      const double omega = std::pow(10000.0, -2.0 * k / C_), s = std::sin(r * omega / 2);
      table_[at + k] = static_cast<S>(std::sin(r * omega));
      table_[at + half + k] = static_cast<S>(std::cos(r * omega));
      if (!softmax_) continue;
      grad_table_[at + k] = table_[at + k];
      grad_table_[at + half + k] = static_cast<S>(-2 * s * s);  // cos(rω) − 1, without cancellation
    }
  }
}

template <typename S>
const S* RelativePositions<S>::table(const std::vector<S>& t, int T) const {
  return t.data() + static_cast<int64_t>(max_len_ - T) * C_;
}

template <typename S>
template <typename Self, typename Fn>
void RelativePositions<S>::buffers(Self& self, int B, int T, int threads, Fn&& f) {
  const int64_t R = 2 * static_cast<int64_t>(T) - 1;
  f(self.pos_, self.L_ * R * self.C_, Role::Saved);
  f(self.dpos_, R * self.C_, Role::Scratch);
  f(self.partial_, relative_partial_size(B, T, self.C_), Role::Scratch);
  f(self.scratch_, threads * relative_scratch_size(T, self.C_ / self.H_), Role::Scratch);
}

template <typename S>
void RelativePositions<S>::reserve(int B, int T) {
  buffers(*this, B, T, omp_get_max_threads(), GrowBuffer{});
}

template <typename S>
void RelativePositions<S>::add_workspace(CallMemory& m, int B, int T, int threads) const {
  buffers(*this, B, T, threads, CountBuffer{&m});
}

template <typename S>
void RelativePositions<S>::forward(ScoreTerms<S>& terms, const S* params, int l, int T) {
  // p_r = W_R·R_r: the rows R_{−(T−1)} … R_{T−1} times W_Rᵀ
  matmul_forward(pos(l, T), table(table_, T), params + w_[l], static_cast<const S*>(nullptr), 2 * T - 1, C_, C_);
  terms.rel_u = params + u_[l];
  terms.rel_v = params + v_[l];
  terms.rel_pos = pos(l, T);
  terms.rel_scratch = scratch_.data();
}

template <typename S>
void RelativePositions<S>::reserve_infer(int T) {
  grow(pos_, L_ * (2 * static_cast<int64_t>(T) - 1) * C_);
}

template <typename S>
void RelativePositions<S>::saved_terms(ScoreTerms<S>& terms, const S* params, int l, int T) {
  terms.rel_u = params + u_[l];
  terms.rel_v = params + v_[l];
  terms.rel_pos = pos(l, T);
}

template <typename S>
void RelativePositions<S>::backward_terms(ScoreTerms<S>& terms, RelativeGrads<S>& drel, const S* params, S* grads,
                                          int l, int T) {
  saved_terms(terms, params, l, T);
  terms.rel_scratch = scratch_.data();
  drel = {grads + u_[l], grads + v_[l], dpos_.data(), partial_.data()};
}

template <typename S>
void RelativePositions<S>::backward(S* grads, const S* params, int l, int T) {
  // p = R·W_Rᵀ: ∂W_R += ∂pᵀ·R. Under softmax Σ_r ∂p_r = Σ_i (q_i + v)·Σ_j ∂s_ij = 0 (adding one
  // vector to every p_r shifts each row's scores equally), so ∂pᵀ·R = ∂pᵀ·(R − [0 | 1]): the cosine
  // half as cos(rω) − 1, whose columns of small ω are near 0 instead of near 1. Their gradient,
  // tiny in theory, is then not the rounding left of a cancelling sum (AdamW would amplify it).
  const S* R = softmax_ ? table(grad_table_, T) : table(table_, T);
  matmul_backward(static_cast<S*>(nullptr), grads + w_[l], static_cast<S*>(nullptr), dpos_.data(), R,
                  params + w_[l], 2 * T - 1, C_, C_);
}

template class RelativePositions<float>;
template class RelativePositions<double>;

}  // namespace srbench::model
