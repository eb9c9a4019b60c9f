// The recurrent stack (recurrent.hpp): embedding, the cells, the head, and the transposes between
// the cells' feature-major layout and the model's row order.
#include "model/recurrent.hpp"

#include <algorithm>
#include <string>

#include "model/buffers.hpp"
#include "model/layers.hpp"
#include "model/parallel.hpp"
#include "model/recurrent_workspace.hpp"

namespace srbench::model {

CellOffsets::CellOffsets(const ParamLayout& layout, int l) {
  const std::string p = "rnn." + std::to_string(l) + ".";
  wih = layout.at(p + "weight_ih").offset;
  whh = layout.at(p + "weight_hh").offset;
  bih = layout.at(p + "bias_ih").offset;
  bhh = layout.at(p + "bias_hh").offset;
}

template <typename S>
RecurrentStack<S>::RecurrentStack(const ModelConfig& cfg)
    : cfg_(cfg), layout_(cfg), L_(cfg.layers), C_(cfg.d_model), V_(cfg.vocab) {
  tok_emb_ = layout_.at("tok_emb").offset;
  headw_ = layout_.at("head.weight").offset;
  headb_ = layout_.at("head.bias").offset;
  for (int l = 0; l < L_; ++l) cells_.push_back(make_cell<S>(cfg, layout_, l));
}

template <typename S>
RecurrentStack<S>::~RecurrentStack() = default;

template <typename S>
template <typename F>
void RecurrentStack<S>::for_each_buffer(int B, int T, bool need_grads, F&& f) {
  const int64_t N = static_cast<int64_t>(B) * T, C = C_;
  f(x0_, C * N);
  f(rows_, L_ * N * C);
  if (!need_grads) return;
  f(drows_, N * C);
  f(dtop_, C * N);
  f(dbelow_, C * N);
}

template <typename S>
void RecurrentStack<S>::reserve(int B, int T, bool need_grads) {
  for_each_buffer(B, T, need_grads, [](std::vector<S>& v, int64_t n) { grow(v, n); });
  for (auto& cell : cells_) cell->reserve(B, T, need_grads);
}

template <typename S>
int64_t RecurrentStack<S>::workspace_elements(int B, int T, bool need_grads) const {
  int64_t n = 0;
  const_cast<RecurrentStack*>(this)->for_each_buffer(B, T, need_grads,
                                                     [&](const std::vector<S>&, int64_t size) { n += size; });
  for (const auto& cell : cells_) n += cell->workspace_elements(B, T, need_grads);
  return n;
}

template <typename S>
const S* RecurrentStack<S>::block_output(int l) const {
  return rows_.data() + static_cast<int64_t>(l) * B_ * T_ * C_;
}

namespace {

// rows (N,C), row n = b·T + t  ←→  cols [C][T·B], column t·B + b.
template <typename S>
void to_rows(S* rows, const S* cols, int B, int T, int C) {
  const int64_t TB = static_cast<int64_t>(T) * B;
  parallel_for(B, static_cast<int64_t>(B) * T * C >= (1 << 16), [&](int b) {
    for (int t = 0; t < T; ++t) {
      S* r = rows + (static_cast<int64_t>(b) * T + t) * C;
      const S* c = cols + static_cast<int64_t>(t) * B + b;
      for (int u = 0; u < C; ++u) r[u] = c[u * TB];
    }
  });
}
template <typename S>
void to_cols(S* cols, const S* rows, int B, int T, int C) {
  const int64_t TB = static_cast<int64_t>(T) * B;
  parallel_for(C, static_cast<int64_t>(B) * T * C >= (1 << 16), [&](int u) {
    S* c = cols + u * TB;
    for (int t = 0; t < T; ++t)
      for (int b = 0; b < B; ++b) c[static_cast<int64_t>(t) * B + b] = rows[(static_cast<int64_t>(b) * T + t) * C + u];
  });
}

}  // namespace

// ---- forward ---------------------------------------------------------------------------------
// logits (N,V) of tokens (N).
template <typename S>
void RecurrentStack<S>::forward(S* logits, const int32_t* tokens, const S* P, int B, int T, const RowLengths& rows) {
  B_ = B;
  T_ = T;
  input_lengths_ = rows.input_lengths;
  const int64_t N = static_cast<int64_t>(B) * T, TB = N;
  // x_0 [C][T·B] = tok_emb[tokens]: column t·B + b is token (b, t)
  const S* emb = P + tok_emb_;
  parallel_for(C_, N * C_ >= (1 << 16), [&](int u) {
    S* x = x0_.data() + u * TB;
    for (int t = 0; t < T; ++t)
      for (int b = 0; b < B; ++b) x[static_cast<int64_t>(t) * B + b] = emb[static_cast<int64_t>(tokens[b * T + t]) * C_ + u];
  });
  const S* inp = x0_.data();
  for (int l = 0; l < L_; ++l) {
    cells_[l]->forward(inp, P, B, T, rows.input_lengths);
    inp = cells_[l]->output();
    to_rows(rows_.data() + l * N * C_, inp, B, T, C_);
  }
  // logits = head(h_{L−1})
  matmul_forward(logits, block_output(L_ - 1), P + headw_, P + headb_, static_cast<int>(N), C_, V_);
}

// ---- backward --------------------------------------------------------------------------------
// G += ∂loss/∂P from dlogits (N,V), after forward on the same batch.
template <typename S>
void RecurrentStack<S>::backward(S* G, const S* dlogits, const int32_t* tokens, const S* P) {
  const int B = B_, T = T_;
  const int64_t N = static_cast<int64_t>(B) * T, TB = N;
  matmul_backward(drows_.data(), G + headw_, G + headb_, dlogits, block_output(L_ - 1), P + headw_,
                  static_cast<int>(N), C_, V_);
  to_cols(dtop_.data(), drows_.data(), B, T, C_);
  for (int l = L_ - 1; l >= 0; --l) {
    const S* inp = l == 0 ? x0_.data() : cells_[l - 1]->output();
    cells_[l]->backward(dbelow_.data(), G, dtop_.data(), inp, P);
    std::swap(dtop_, dbelow_);  // ∂loss/∂ layer l's inputs = ∂loss/∂ layer l−1's outputs
  }
  // Of x_0 = tok_emb[tokens]: dtok_emb[token] += ∂loss/∂x_0's column, positions in row order.
  S* demb = G + tok_emb_;
  const S* dx = dtop_.data();
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      S* d = demb + static_cast<int64_t>(tokens[b * T + t]) * C_;
      const S* g = dx + static_cast<int64_t>(t) * B + b;
      for (int u = 0; u < C_; ++u) d[u] += g[u * TB];
    }
}

template class RecurrentStack<float>;
template class RecurrentStack<double>;

int64_t recurrent_workspace_bytes(const ModelConfig& cfg, int B, int T, bool need_grads) {
  cfg.validate();
  if (!cfg.recurrent()) throw ModelError("recurrent_workspace_bytes: arch transformer is not recurrent");
  return RecurrentStack<float>(cfg).workspace_elements(B, T, need_grads) * static_cast<int64_t>(sizeof(float));
}

}  // namespace srbench::model
