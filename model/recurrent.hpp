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

// One recurrent layer: its parameters' offsets, its saved activations, forward and backward over
// a whole sequence. Inputs and outputs are [C][T·B] with row stride T·B.
template <typename S>
class RecurrentCell {
 public:
  virtual ~RecurrentCell() = default;
  // Sizes the saved activations (with need_grads, also backward's); grows only. Elements of S it
  // needs: cells report their sizes through `size` (reserve, and workspace_elements below).
  virtual void reserve(int B, int T, bool need_grads) = 0;
  // The outputs h_t of every step for the inputs `inp` ([C][T·B]); input_lengths (B) or nullptr:
  // each example's input-tape length (tape_rnn), else T.
  virtual void forward(const S* inp, const S* P, int B, int T, const int32_t* input_lengths) = 0;
  // [C][T·B], row stride T·B: the last forward's outputs.
  virtual const S* output() const = 0;
  // dinp ([C][T·B], overwritten) = ∂loss/∂inp and G += ∂loss/∂params, from dout = ∂loss/∂output
  // ([C][T·B]; the cell may use it as scratch), after forward on the same inp and P.
  virtual void backward(S* dinp, S* G, S* dout, const S* inp, const S* P) = 0;
  // Elements of S that reserve(B, T, need_grads) allocates (from nothing).
  virtual int64_t workspace_elements(int B, int T, bool need_grads) const = 0;
};

// The offsets of a layer's rnn.{l}.weight_ih, weight_hh, bias_ih and bias_hh: every cell has them.
struct CellOffsets {
  size_t wih, whh, bih, bhh;
  CellOffsets(const ParamLayout& layout, int l);
};

// reserve() and workspace_elements() of a cell from its one list of buffers:
// Derived::buffers(self, B, T, need_grads, f) calls f(vector, elements) for each.
template <typename S, typename Derived>
class BufferedCell : public RecurrentCell<S> {
 public:
  void reserve(int B, int T, bool need_grads) override {
    Derived::buffers(static_cast<Derived&>(*this), B, T, need_grads, [](std::vector<S>& v, int64_t n) {
      if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
    });
  }
  int64_t workspace_elements(int B, int T, bool need_grads) const override {
    int64_t n = 0;
    Derived::buffers(static_cast<const Derived&>(*this), B, T, need_grads,
                     [&](const std::vector<S>&, int64_t size) { n += size; });
    return n;
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

  bool has_attention() const override { return false; }
  const S* attention(int) const override { return nullptr; }
  const S* values(int) const override { return nullptr; }
  int64_t values_stride() const override { return 0; }
  const S* block_output(int l) const override;  // [B,T,C]: layer l's outputs h_{l,t}

  // Elements of S that reserve(B, T, need_grads) allocates from nothing (the stack's buffers and
  // every cell's); recurrent_workspace_bytes (model.hpp) is this × sizeof(float).
  int64_t workspace_elements(int B, int T, bool need_grads) const;

 private:
  // The stack's own buffers for (B, T): f(vector, elements) for each.
  template <typename F>
  void for_each_buffer(int B, int T, bool need_grads, F&& f);

  ModelConfig cfg_;
  ParamLayout layout_;
  int L_, C_, V_;
  size_t tok_emb_, headw_, headb_;
  std::vector<std::unique_ptr<RecurrentCell<S>>> cells_;

  int B_ = 0, T_ = 0;
  const int32_t* input_lengths_ = nullptr;  // of the last forward (tape_rnn), or nullptr

  std::vector<S> x0_;            // [C][T·B] the embedding
  std::vector<S> rows_;          // (L, N, C): layer l's outputs in row order n = b·T + t
  std::vector<S> drows_;         // (N, C) ∂loss/∂ of the last layer's rows
  std::vector<S> dtop_, dbelow_; // [C][T·B] ×2: ∂loss/∂ a layer's outputs, ∂loss/∂ its inputs
};

// The cell of layer l for a recurrent config (recurrent_gated.cpp, recurrent_memory.cpp).
template <typename S>
std::unique_ptr<RecurrentCell<S>> make_cell(const ModelConfig& cfg, const ParamLayout& layout, int l);

extern template class RecurrentStack<float>;
extern template class RecurrentStack<double>;

}  // namespace srbench::model
