// The recurrent stack (recurrent.hpp): embedding, the cells, the head, and the transposes between
// the cells' feature-major layout and the model's row order; and the cells' input side.
#include "model/recurrent.hpp"

#include <algorithm>
#include <string>

#include "model/layers.hpp"
#include "model/parallel.hpp"
#include "model/recurrent_kernels.hpp"
#include "model/recurrent_workspace.hpp"

namespace srbench::model {

using recurrent::gemm;
using recurrent::gemm_cols;

CellOffsets::CellOffsets(const ParamLayout& layout, int l) {
  const std::string p = "rnn." + std::to_string(l) + ".";
  wih = layout.at(p + "weight_ih").offset;
  whh = layout.at(p + "weight_hh").offset;
  bih = layout.at(p + "bias_ih").offset;
  bhh = layout.at(p + "bias_hh").offset;
}

// ---- the input side --------------------------------------------------------------------------
template <typename S>
void InputSide<S>::forward(S* pre, const S* W, int64_t ldw, const CellInput<S>& in, int64_t TB) {
  const int tb = static_cast<int>(TB);
  if (in.x) return gemm_cols<S>(R_, tb, C_, {W, ldw, 1}, {in.x, TB, 1}, pre, TB, false);
  // table (R, V) = W·tok_embᵀ; pre[r][col] = table[r][token of col]
  gemm_cols<S>(R_, V_, C_, {W, ldw, 1}, {in.emb, 1, C_}, table_.data(), V_, false);
  parallel_for(R_, static_cast<int64_t>(R_) * TB >= (1 << 18), [&](int r) {
    const S* t = table_.data() + static_cast<int64_t>(r) * V_;
    S* p = pre + r * TB;
    for (int64_t col = 0; col < TB; ++col) p[col] = t[in.tokens[col]];
  });
}

template <typename S>
void InputSide<S>::backward(S* dinp, S* demb, S* dW, int64_t ldw, const S* dpre, const S* W, const CellInput<S>& in,
                            int64_t TB) {
  const int tb = static_cast<int>(TB);
  if (in.x) {  // dW += dpre·xᵀ, dinp = Wᵀ·dpre
    gemm_cols<S>(R_, C_, tb, {dpre, TB, 1}, {in.x, 1, TB}, dW, ldw, true);
    gemm_cols<S>(C_, tb, R_, {W, 1, ldw}, {dpre, TB, 1}, dinp, TB, false);
    return;
  }
  // dsum[r][v] = Σ dpre[r][col] over the columns whose token is v, in the order of the columns.
  // Each (r, v) is a chain of dependent additions through memory; eight rows go side by side, so
  // that eight chains overlap (each row's additions are the same, in the same order).
  constexpr int kRows = 8;
  const int blocks = (R_ + kRows - 1) / kRows;
  parallel_for(blocks, static_cast<int64_t>(R_) * TB >= (1 << 18), [&](int blk) {
    const int r0 = blk * kRows, nr = std::min(kRows, R_ - r0);
    S* d = dsum_.data() + static_cast<int64_t>(r0) * V_;
    std::fill(d, d + static_cast<int64_t>(nr) * V_, S(0));
    const S* g = dpre + r0 * TB;
    if (nr == kRows) {
      S *d0 = d, *d1 = d0 + V_, *d2 = d1 + V_, *d3 = d2 + V_, *d4 = d3 + V_, *d5 = d4 + V_, *d6 = d5 + V_,
        *d7 = d6 + V_;
      const S *g0 = g, *g1 = g0 + TB, *g2 = g1 + TB, *g3 = g2 + TB, *g4 = g3 + TB, *g5 = g4 + TB, *g6 = g5 + TB,
              *g7 = g6 + TB;
      for (int64_t col = 0; col < TB; ++col) {
        const int32_t v = in.tokens[col];
        d0[v] += g0[col], d1[v] += g1[col], d2[v] += g2[col], d3[v] += g3[col];
        d4[v] += g4[col], d5[v] += g5[col], d6[v] += g6[col], d7[v] += g7[col];
      }
    } else {
      for (int i = 0; i < nr; ++i)
        for (int64_t col = 0; col < TB; ++col) d[i * V_ + in.tokens[col]] += g[i * TB + col];
    }
  });
  gemm<S>(R_, C_, V_, {dsum_.data(), V_, 1}, {in.emb, C_, 1}, dW, ldw, true);
  gemm<S>(V_, C_, R_, {dsum_.data(), 1, V_}, {W, ldw, 1}, demb, C_, true);
}

template class InputSide<float>;
template class InputSide<double>;

// ---- the stack -------------------------------------------------------------------------------
template <typename S>
RecurrentStack<S>::RecurrentStack(const ModelConfig& cfg)
    : cfg_(cfg), layout_(cfg), L_(cfg.layers), C_(cfg.d_model), V_(cfg.vocab) {
  tok_emb_ = layout_.at("tok_emb").offset;
  headw_ = layout_.at("head.weight").offset;
  headb_ = layout_.at("head.bias").offset;
  for (int l = 0; l < L_; ++l) cells_.push_back(make_cell<S>(cfg, layout_, l));
  rows_ready_.assign(static_cast<size_t>(L_), 0);
}

template <typename S>
RecurrentStack<S>::~RecurrentStack() = default;

template <typename S>
template <typename Self, typename F>
void RecurrentStack<S>::buffers(Self& self, int B, int T, bool need_grads, F&& f) {
  const int64_t N = static_cast<int64_t>(B) * T, C = self.C_;
  f(self.tokens_, N);
  f(self.x0_, embedding_input(self.cfg_, B, T) ? 0 : C * N);
  f(self.rows_, self.L_ * N * C);
  if (!need_grads) return;
  f(self.drows_, N * C);
  f(self.dtop_, C * N);
  f(self.dbelow_, C * N);
}

template <typename S>
void RecurrentStack<S>::reserve(int B, int T, bool need_grads) {
  buffers(*this, B, T, need_grads, Grow{});
  for (auto& cell : cells_) cell->reserve(B, T, need_grads);
}

template <typename S>
int64_t RecurrentStack<S>::workspace_bytes(int B, int T, bool need_grads) const {
  int64_t bytes = 0;
  buffers(*this, B, T, need_grads, CountBytes{&bytes});
  for (const auto& cell : cells_) bytes += cell->workspace_bytes(B, T, need_grads);
  return bytes;
}

template <typename S>
CallMemory RecurrentStack<S>::workspace(int B, int T, bool need_grads, int) const {
  CallMemory m;
  m.saved = workspace_bytes(B, T, false);
  m.scratch = workspace_bytes(B, T, need_grads) - m.saved;
  return m;
}

namespace {

// rows (N,C), row n = b·T + t  ←→  cols [C][T·B], column t·B + b: for each t a C × B block
// transposed, kU channels at a time, so that both sides are read and written along their rows (kU
// streams along cols' rows, kU consecutive floats of each of rows' rows). Copies: the order does not
// change a value. (One channel at a time, every read or write of cols was a page after the last:
// a quarter of an rnn's training step at d 256, T 40, batch 32; performance.md, round 19.)
constexpr int kU = 8;
template <typename S>
void to_rows(S* rows, const S* cols, int B, int T, int C) {
  const int64_t TB = static_cast<int64_t>(T) * B;
  parallel_for(T, TB * C >= (1 << 16), [&](int t) {
    for (int u0 = 0; u0 < C; u0 += kU) {
      const int nu = std::min(kU, C - u0);
      const S* c = cols + u0 * TB + static_cast<int64_t>(t) * B;
      for (int b = 0; b < B; ++b) {
        S* r = rows + (static_cast<int64_t>(b) * T + t) * C + u0;
        for (int k = 0; k < nu; ++k) r[k] = c[k * TB + b];
      }
    }
  });
}
template <typename S>
void to_cols(S* cols, const S* rows, int B, int T, int C) {
  const int64_t TB = static_cast<int64_t>(T) * B;
  parallel_for(T, TB * C >= (1 << 16), [&](int t) {
    for (int u0 = 0; u0 < C; u0 += kU) {
      const int nu = std::min(kU, C - u0);
      S* c = cols + u0 * TB + static_cast<int64_t>(t) * B;
      for (int b = 0; b < B; ++b) {
        const S* r = rows + (static_cast<int64_t>(b) * T + t) * C + u0;
        for (int k = 0; k < nu; ++k) c[k * TB + b] = r[k];
      }
    }
  });
}

}  // namespace

// Layer l's outputs in row order, transposed on the first request after a forward (training
// needs only the last layer's, for the head).
template <typename S>
const S* RecurrentStack<S>::block_output(int l) const {
  S* rows = rows_.data() + static_cast<int64_t>(l) * B_ * T_ * C_;
  if (!rows_ready_[l]) {
    to_rows(rows, cells_[l]->output(), B_, T_, C_);
    rows_ready_[l] = 1;
  }
  return rows;
}

template <typename S>
CellInput<S> RecurrentStack<S>::input(int l, const S* P) const {
  if (l > 0) return {cells_[l - 1]->output(), nullptr, nullptr, 0};
  if (embedding_input(cfg_, B_, T_)) return {nullptr, tokens_.data(), P + tok_emb_, V_};
  return {x0_.data(), nullptr, nullptr, 0};
}

// ---- forward ---------------------------------------------------------------------------------
// logits (N,V) of tokens (N).
template <typename S>
void RecurrentStack<S>::forward(S* logits, const int32_t* tokens, const S* P, int B, int T, const RowLengths& rows) {
  B_ = B;
  T_ = T;
  const int64_t N = static_cast<int64_t>(B) * T, TB = N;
  for (int t = 0; t < T; ++t)  // column t·B + b is token (b, t)
    for (int b = 0; b < B; ++b) tokens_[static_cast<size_t>(t) * B + b] = tokens[b * T + t];
  if (!embedding_input(cfg_, B, T)) {  // x_0 [C][T·B] = tok_emb[tokens]
    const S* emb = P + tok_emb_;
    parallel_for(C_, N * C_ >= (1 << 16), [&](int u) {
      S* x = x0_.data() + u * TB;
      for (int64_t col = 0; col < TB; ++col) x[col] = emb[static_cast<int64_t>(tokens_[col]) * C_ + u];
    });
  }
  for (int l = 0; l < L_; ++l) cells_[l]->forward(input(l, P), P, B, T, rows.input_lengths);
  std::fill(rows_ready_.begin(), rows_ready_.end(), 0);
  // logits = head(h_{L−1})
  matmul_forward(logits, block_output(L_ - 1), P + headw_, P + headb_, static_cast<int>(N), C_, V_);
}

// ---- backward --------------------------------------------------------------------------------
// G += ∂loss/∂P from dlogits (N,V), after forward on the same batch.
template <typename S>
void RecurrentStack<S>::backward(S* G, const S* dlogits, const int32_t*, const S* P) {
  const int B = B_, T = T_;
  const int64_t N = static_cast<int64_t>(B) * T, TB = N;
  matmul_backward(drows_.data(), G + headw_, G + headb_, dlogits, block_output(L_ - 1), P + headw_,
                  static_cast<int>(N), C_, V_);
  to_cols(dtop_.data(), drows_.data(), B, T, C_);
  for (int l = L_ - 1; l >= 0; --l) {
    cells_[l]->backward(dbelow_.data(), G + tok_emb_, G, dtop_.data(), input(l, P), P);
    std::swap(dtop_, dbelow_);  // ∂loss/∂ layer l's inputs = ∂loss/∂ layer l−1's outputs
  }
  if (embedding_input(cfg_, B, T)) return;  // layer 0 added the embedding's gradient itself
  // Of x_0 = tok_emb[tokens]: dtok_emb[token] += ∂loss/∂x_0's column, columns in order.
  S* demb = G + tok_emb_;
  const S* dx = dtop_.data();
  for (int64_t col = 0; col < TB; ++col) {
    S* d = demb + static_cast<int64_t>(tokens_[col]) * C_;
    for (int u = 0; u < C_; ++u) d[u] += dx[u * TB + col];
  }
}

template class RecurrentStack<float>;
template class RecurrentStack<double>;

int64_t recurrent_workspace_bytes(const ModelConfig& cfg, int B, int T, bool need_grads) {
  cfg.validate();
  if (!cfg.recurrent()) throw ModelError("recurrent_workspace_bytes: arch transformer is not recurrent");
  return RecurrentStack<float>(cfg).workspace_bytes(B, T, need_grads);
}

}  // namespace srbench::model
