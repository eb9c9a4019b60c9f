// The recurrent models of recurrent.md as an Architecture (architecture.hpp; internal to model/):
// `layers` stacked recurrent layers between the token embedding and the head.
//
//   x_0 = tok_emb[tokens]                     embedding_forward
//   x_{l+1} = cell_l(x_l)   (all T steps)     RecurrentCell::forward, l = 0 … L−1
//   logits = head(x_L)                        head_forward
//
// and backward in reverse, each cell by back-propagation through all T steps. The cell is chosen
// when the stack is built, one per layer (make_cell): rnn, lstm, gru (recurrent_gated.cpp) or
// stack_rnn, tape_rnn (recurrent_memory.cpp).
//
// Shapes: B sequences, T positions, N = B·T, C = d_model, V vocabulary. Inside the stack every
// per-layer tensor is feature-major, "[R][T·B]": row r holds one feature, column t·B + b is
// position t of example b — a step's columns are contiguous (the per-step products run on the
// whole batch), the whole sequence is one matrix (the input projections and the weight
// gradients are one product each). The head and the diagnostics views use the model's row order
// n = b·T + t: the stack transposes each layer's output once.
//
// recurrent.cpp holds the stack, recurrent_init.cpp the parameter layout and init.
#pragma once

#include <memory>
#include <vector>

#include "model/architecture.hpp"

namespace srbench::model {

// A cell's input: a dense x ([C][T·B]: the layer below's outputs), or for layer 0, when the
// vocabulary is smaller than T·B, the embedding itself — column t·B + b of x is
// tok_emb[tokens[t·B + b]] — so that the input side W·x is computed once per vocabulary entry
// (embedding_input()).
template <typename S>
struct CellInput {
  const S* x = nullptr;             // [C][T·B], or nullptr for the embedding
  const int32_t* tokens = nullptr;  // [T·B] the token of each column
  const S* emb = nullptr;           // tok_emb (V, C)
  int V = 0;
};

// Whether layer 0 of `cfg` takes the embedding itself (CellInput's tokens) for B×T batches.
inline bool embedding_input(const ModelConfig& cfg, int B, int T) {
  return static_cast<int64_t>(cfg.vocab) < static_cast<int64_t>(B) * T;
}

// One recurrent layer: its parameters' offsets, its saved activations, forward and backward over
// a whole sequence. Outputs (and dense inputs) are [C][T·B] with row stride T·B.
template <typename S>
class RecurrentCell {
 public:
  virtual ~RecurrentCell() = default;
  // Sizes the saved activations (with need_grads, also backward's); grows only.
  virtual void reserve(int B, int T, bool need_grads) = 0;
  // The outputs h_t of every step for the input `in`; input_lengths (B) or nullptr: each
  // example's input-tape length (tape_rnn), else T.
  virtual void forward(const CellInput<S>& in, const S* P, int B, int T, const int32_t* input_lengths) = 0;
  // [C][T·B], row stride T·B: the last forward's outputs.
  virtual const S* output() const = 0;
  // G += ∂loss/∂params from dout = ∂loss/∂output ([C][T·B]), after forward on the same input and
  // P; and ∂loss/∂ the input: into dinp ([C][T·B], overwritten) for a dense input, onto G's
  // tok_emb rows (demb, (V, C)) for the embedding.
  virtual void backward(S* dinp, S* demb, S* G, const S* dout, const CellInput<S>& in, const S* P) = 0;
  // Bytes that reserve(B, T, need_grads) allocates (from nothing).
  virtual int64_t workspace_bytes(int B, int T, bool need_grads) const = 0;
};

// f(vector, elements) grows the vector (reserve); the byte count of such a list (workspace_bytes).
struct Grow {
  template <typename V>
  void operator()(V& v, int64_t n) const {
    if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  }
};
struct CountBytes {
  int64_t* bytes;
  template <typename V>
  void operator()(const V&, int64_t n) const {
    *bytes += n * static_cast<int64_t>(sizeof(typename V::value_type));
  }
};

// The input side of a cell, pre = W·x for R rows of W (R, C) with row stride ldw, over the
// whole sequence: one product for a dense x; for the embedding one product per vocabulary entry,
// table = W·tok_embᵀ (R, V), and a gather of its columns. Backward: dW += dpre·xᵀ and ∂loss/∂x —
// for the embedding through dsum (R, V), dpre summed over the columns of each token (in column
// order), dW += dsum·tok_emb and dtok_emb += dsumᵀ·W.
template <typename S>
class InputSide {
 public:
  InputSide(int R, int C, int V, bool layer0) : R_(R), C_(C), V_(layer0 ? V : 0) {}
  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f) {
    const bool table = self.V_ > 0 && static_cast<int64_t>(self.V_) < static_cast<int64_t>(B) * T;
    f(self.table_, table ? static_cast<int64_t>(self.R_) * self.V_ : 0);
    if (need_grads) f(self.dsum_, table ? static_cast<int64_t>(self.R_) * self.V_ : 0);
  }
  // pre (R, T·B), row stride T·B
  void forward(S* pre, const S* W, int64_t ldw, const CellInput<S>& in, int64_t TB);
  void backward(S* dinp, S* demb, S* dW, int64_t ldw, const S* dpre, const S* W, const CellInput<S>& in, int64_t TB);

 private:
  int R_, C_, V_;
  std::vector<S> table_, dsum_;  // (R, V)
};

// The offsets of a layer's rnn.{l}.weight_ih, weight_hh, bias_ih and bias_hh: every cell has them.
struct CellOffsets {
  size_t wih, whh, bih, bhh;
  CellOffsets(const ParamLayout& layout, int l);
};

// reserve() and workspace_bytes() of a cell from its one list of buffers:
// Derived::buffers(self, B, T, need_grads, f) calls f(vector, elements) for each.
template <typename S, typename Derived>
class BufferedCell : public RecurrentCell<S> {
 public:
  void reserve(int B, int T, bool need_grads) override {
    Derived::buffers(static_cast<Derived&>(*this), B, T, need_grads, Grow{});
  }
  int64_t workspace_bytes(int B, int T, bool need_grads) const override {
    int64_t bytes = 0;
    Derived::buffers(static_cast<const Derived&>(*this), B, T, need_grads, CountBytes{&bytes});
    return bytes;
  }
};

template <typename S>
class RecurrentStack final : public Architecture<S> {
 public:
  explicit RecurrentStack(const ModelConfig& cfg);  // cfg valid, recurrent
  ~RecurrentStack() override;

  const ParamLayout& layout() const override { return layout_; }
  void init(S* params, uint64_t seed) const override;
  void reserve(int B, int T, bool need_grads) override;
  void forward(S* logits, const int32_t* tokens, const S* params, int B, int T, const RowLengths& rows) override;
  void backward(S* grads, const S* dlogits, const int32_t* tokens, const S* params) override;

  const S* block_output(int l) const override;  // [B,T,C]: layer l's outputs h_{l,t}

  // Bytes that reserve(B, T, need_grads) allocates from nothing (the stack's buffers and every
  // cell's): recurrent_workspace_bytes (recurrent_workspace.hpp) of a float model.
  int64_t workspace_bytes(int B, int T, bool need_grads) const;
  // The same split (memory.hpp): forward's buffers as saved, backward's as scratch.
  CallMemory workspace(int B, int T, bool need_grads, int threads) const override;

 private:
  // The stack's own buffers for (B, T): f(vector, elements) for each.
  template <typename Self, typename F>
  static void buffers(Self& self, int B, int T, bool need_grads, F&& f);
  // Layer l's input in the current call: the layer below's outputs, or the embedding.
  CellInput<S> input(int l, const S* P) const;

  ModelConfig cfg_;
  ParamLayout layout_;
  int L_, C_, V_;
  size_t tok_emb_, headw_, headb_;
  std::vector<std::unique_ptr<RecurrentCell<S>>> cells_;

  int B_ = 0, T_ = 0;
  const int32_t* input_lengths_ = nullptr;  // of the last forward (tape_rnn), or nullptr

  std::vector<int32_t> tokens_;  // [T·B] the token of each column
  std::vector<S> x0_;            // [C][T·B] the embedding, when layer 0 takes it dense
  mutable std::vector<S> rows_;  // (L, N, C): layer l's outputs in row order n = b·T + t (block_output)
  mutable std::vector<char> rows_ready_;  // [L] rows_ of layer l hold the last forward's
  std::vector<S> drows_;         // (N, C) ∂loss/∂ of the last layer's rows
  std::vector<S> dtop_, dbelow_; // [C][T·B] ×2: ∂loss/∂ a layer's outputs, ∂loss/∂ its inputs
};

// The cell of layer l for a recurrent config (recurrent_gated.cpp, recurrent_memory.cpp).
template <typename S>
std::unique_ptr<RecurrentCell<S>> make_cell(const ModelConfig& cfg, const ParamLayout& layout, int l);

extern template class RecurrentStack<float>;
extern template class RecurrentStack<double>;

}  // namespace srbench::model
