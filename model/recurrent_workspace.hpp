// The size of a recurrent model's workspace (recurrent.md), for a peak-memory estimate: exactly
// what the architecture's reserve(B, T, need_grads) allocates from nothing for a float model —
// the saved activations of every layer, the transposed layer outputs, and with need_grads the
// gradient buffers of backward. Not included: the parameters, gradients and AdamW moments (3 ×
// ParamLayout::total() floats with the parameters' own), the model's logits, their gradient and
// the per-position losses (2·B·T·V + B·T floats), and sgemm's per-thread packing buffer (at most
// (n + 32)·512 floats for a product n columns wide).
#pragma once

#include <cstdint>

#include "model/config.hpp"

namespace srbench::model {

// Bytes of the workspace of a (valid, recurrent) config for B sequences of T positions.
// ModelError for an invalid config or a transformer.
int64_t recurrent_workspace_bytes(const ModelConfig& cfg, int B, int T, bool need_grads);

}  // namespace srbench::model
