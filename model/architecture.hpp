// The architecture seam (internal to model/): what BasicModel<S> (model.hpp) asks of the network
// it wraps. The model owns the flat parameter and gradient buffers, checks a batch's input,
// and computes the loss from the logits; an architecture owns everything in between — its
// parameter layout and init, the forward pass to logits, the backward pass from the logits'
// gradient, the activations saved for it, and views of them for diagnostics. It is chosen once,
// when the model is built (make_architecture).
//
// Implemented by the transformer (transformer.hpp, model.md); a recurrent stack (recurrent.md)
// implements the same interface and has no attention (has_attention() false).
//
// Shapes (layers.hpp's legend): B sequences, T positions, N = B·T rows, C = d_model,
// V vocabulary. tokens (N) row-major [B,T]; logits, dlogits (N,V).
#pragma once

#include <cstdint>
#include <memory>

#include "model/config.hpp"
#include "common/rows.hpp"
#include "model/memory.hpp"
#include "model/params.hpp"

namespace srbench::model {

template <typename S>
class Architecture {
 public:
  virtual ~Architecture() = default;

  // Every parameter tensor by its checkpoint name, with its place in the flat buffer.
  virtual const ParamLayout& layout() const = 0;
  // Writes the initial parameters (layout order) into params; depends on the seed only.
  virtual void init(S* params, uint64_t seed) const = 0;

  // Sizes the saved activations for B sequences of T positions (with need_grads, also what
  // backward needs); grows only, so that steps of a shape seen before allocate nothing.
  virtual void reserve(int B, int T, bool need_grads) = 0;
  // The bytes reserve(B, T, need_grads) allocates from nothing with `threads` OpenMP threads
  // (memory.hpp's saved and scratch), and those infer(…, B, T) allocates (by default the former
  // without gradients).
  virtual CallMemory workspace(int B, int T, bool need_grads, int threads) const = 0;
  virtual CallMemory infer_workspace(int B, int T, int threads) const { return workspace(B, T, false, threads); }
  // logits (N,V) of tokens (N), saving what backward needs. The input is valid (checked by the
  // model) and reserve(B, T, …) was called. `rows` (model.hpp) may be empty.
  virtual void forward(S* logits, const int32_t* tokens, const S* params, int B, int T, const RowLengths& rows) = 0;
  // Forward only, for evaluation: the logits forward computes (the transformer: bit for bit in
  // float), keeping nothing for backward or the views below (they are not valid after it). The
  // transformer runs it in groups of examples with attention in strips (attention.hpp), so its
  // memory grows linearly in T; by default reserve(B, T, false) then forward.
  virtual void infer(S* logits, const int32_t* tokens, const S* params, int B, int T, const RowLengths& rows) {
    reserve(B, T, false);
    forward(logits, tokens, params, B, T, rows);
  }
  // grads += ∂loss/∂params, given dlogits = ∂loss/∂logits (N,V) of the last forward, for its
  // tokens and params (reserve was called with need_grads).
  virtual void backward(S* grads, const S* dlogits, const int32_t* tokens, const S* params) = 0;

  // Views of the last forward's activations (model.hpp documents their shapes); layer l in
  // [0, layers), checked by the model. attention and values exist only if has_attention(): an
  // architecture without attention (recurrent.md's, linear-rnn.md's) keeps these defaults and
  // gives block_output alone.
  virtual bool has_attention() const { return false; }
  virtual const S* attention(int) const { return nullptr; }
  virtual const S* values(int) const { return nullptr; }
  virtual int64_t values_stride() const { return 0; }
  virtual const S* block_output(int l) const = 0;
};

// The architecture a (valid) config describes: the transformer of model.md, or under a recurrent
// `arch` the recurrent stack of recurrent.md (recurrent.hpp).
template <typename S>
std::unique_ptr<Architecture<S>> make_architecture(const ModelConfig& cfg);

}  // namespace srbench::model
