// The memory a model allocates for a call (model.hpp), for a peak-memory estimate before anything
// runs (harness/run/resources.hpp). The model reports it from the same list of buffers its
// reserve grows, every variant's own included (spline-score attention's scores, LIMe's raw keys
// and values, relative positions' p, a bidirectional model's lengths, a recurrent stack's
// workspace), so an estimate never re-derives the model's sizes.
//
// Not included: the parameters, their gradients and AdamW's moments (ParamLayout::total() floats
// each), tables fixed when the model is built (sinusoids, RoPE's angles, relative positions' R),
// sgemm's per-thread packing buffer (at most (n + 32)·512 floats for a product n columns wide),
// and what every call allocates and frees again (Eigen's blocks for LIMe's products).
#pragma once

#include <cstdint>

#include "model/config.hpp"

namespace srbench::model {

// Bytes, split as an estimate reports them.
struct CallMemory {
  int64_t saved = 0;    // the activations forward keeps for backward (under a recurrent arch, forward's buffers)
  int64_t scratch = 0;  // the architecture's other buffers: backward's, per-thread scratch, row lengths
  int64_t outputs = 0;  // the model's own: the logits, their gradient (forward_backward only), the losses
  int64_t total() const { return saved + scratch + outputs; }
};

// What the first forward_backward(…, B, T, need_grads) of a float Model with a (valid) config
// allocates, with `threads` OpenMP threads. ModelError for an invalid config.
CallMemory forward_backward_memory(const ModelConfig& cfg, int B, int T, bool need_grads, int threads);

// A bound on sgemm's per-thread packing buffers for this config's products: (n + 32)·512 floats a
// thread for a product n columns wide, n at most the widest matrix of the layout (either side:
// backward's products run along a weight's other axis) plus the vocabulary.
int64_t packing_bytes(const ModelConfig& cfg, int threads);

// What the first infer(…, B, T) of a float Model allocates: the logits and losses, and the
// architecture's forward-only buffers (the transformer's: linear in T, no T×T matrix).
CallMemory infer_memory(const ModelConfig& cfg, int B, int T, int threads);

}  // namespace srbench::model
