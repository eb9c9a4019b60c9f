#include "model/relative.hpp"

#include <omp.h>

#include <cmath>
#include <string>

#include "model/buffers.hpp"
#include "model/layers.hpp"

namespace srbench::model {

template <typename S>
RelativePositions<S>::RelativePositions(const ModelConfig& cfg, const ParamLayout& layout)
    : L_(cfg.layers), C_(cfg.d_model), H_(cfg.heads), max_len_(cfg.max_len) {
  for (int l = 0; l < L_; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".attn.rel.";
    u_.push_back(layout.at(b + "u").offset);
    v_.push_back(layout.at(b + "v").offset);
    w_.push_back(layout.at(b + "proj.weight").offset);
  }
  // R_r = [sin(r ω_k) for k < C/2 | cos(r ω_k) for k < C/2], ω_k = 10000^(−2k/C): halves, not interleaved
  const int half = C_ / 2;
  table_.resize(static_cast<size_t>(2 * max_len_ - 1) * C_);
  for (int r = -(max_len_ - 1); r <= max_len_ - 1; ++r) {
    S* row = table_.data() + static_cast<int64_t>(r + max_len_ - 1) * C_;
    for (int k = 0; k < half; ++k) {
      const double omega = std::pow(10000.0, -2.0 * k / C_);
      row[k] = static_cast<S>(std::sin(r * omega));
      row[half + k] = static_cast<S>(std::cos(r * omega));
    }
  }
}

template <typename S>
const S* RelativePositions<S>::table(int T) const {
  return table_.data() + static_cast<int64_t>(max_len_ - T) * C_;
}

template <typename S>
void RelativePositions<S>::reserve(int B, int T) {
  const int64_t R = 2 * static_cast<int64_t>(T) - 1;
  grow(pos_, L_ * R * C_);
  grow(dpos_, R * C_);
  grow(partial_, relative_partial_size(B, T, C_));
  grow(scratch_, omp_get_max_threads() * relative_scratch_size(T, C_ / H_));
}

template <typename S>
void RelativePositions<S>::forward(ScoreTerms<S>& terms, const S* params, int l, int T) {
  // p_r = W_R·R_r: the rows R_{−(T−1)} … R_{T−1} times W_Rᵀ
  matmul_forward(pos(l, T), table(T), params + w_[l], static_cast<const S*>(nullptr), 2 * T - 1, C_, C_);
  terms.rel_u = params + u_[l];
  terms.rel_v = params + v_[l];
  terms.rel_pos = pos(l, T);
  terms.rel_scratch = scratch_.data();
}

template <typename S>
void RelativePositions<S>::backward_terms(ScoreTerms<S>& terms, RelativeGrads<S>& drel, const S* params, S* grads,
                                          int l, int T) {
  terms.rel_u = params + u_[l];
  terms.rel_v = params + v_[l];
  terms.rel_pos = pos(l, T);
  terms.rel_scratch = scratch_.data();
  drel = {grads + u_[l], grads + v_[l], dpos_.data(), partial_.data()};
}

template <typename S>
void RelativePositions<S>::backward(S* grads, const S* params, int l, int T) {
  // p = R·W_Rᵀ: ∂W_R += ∂pᵀ·R
  matmul_backward(static_cast<S*>(nullptr), grads + w_[l], static_cast<S*>(nullptr), dpos_.data(), table(T),
                  params + w_[l], 2 * T - 1, C_, C_);
}

template class RelativePositions<float>;
template class RelativePositions<double>;

}  // namespace srbench::model
