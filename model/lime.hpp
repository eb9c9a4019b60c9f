// LIMe, layer-integrated memory (model.md, "LIMe"): the keys and values that layer l's attention
// uses mix every head of every layer up to l,
//   k_{l,i} = Σ_{m≤l} Σ_j W_l[i, m·H + j] · k̂_{m,j}      (the same W_l for the values),
// with k̂_{m,j}, v̂_{m,j} the raw (pre-RoPE) head-slices of layer m and W_l the router
// blocks.{l}.attn.router [H, (l+1)·H]. Layer 0 uses its own heads (no router).
//
// Shapes (layers.hpp's legend): qkv / dqkv (N,3C) q|k|v of one layer. kv_raw / dkv_raw hold the
// raw k̂ (part 0) and v̂ (part 1) of every layer (or their gradients), 2·L·N·C values, head-major
// so that a layer's mixing is one small GEMM: part p, layer m, head j, row n, feature d at
// ((p·L + m)·H + j)·N·hs + n·hs + d. tmp: N·C scratch values.
// Threads: the GEMMs over the N·hs columns run in fixed chunks (OpenMP over chunks and rows); the
// router gradient is one GEMM: results do not depend on the thread count.
#pragma once

#include <cstdint>

namespace srbench::model {

// Saves layer l's raw k̂, v̂ (columns [C, 3C) of qkv, as the qkv projection left them) into
// kv_raw, then, for l >= 1, overwrites those columns with the mixed keys and values
// (router W (H,(l+1)H)). For l = 0, W is unused (may be nullptr).
template <typename S>
void lime_forward(S* qkv, S* kv_raw, S* tmp, const S* W, int l, int L, int64_t N, int C, int H);

// Backward of lime_forward for layer l, called with dqkv holding the gradient of layer l's q and
// MIXED k, v (after RoPE's backward), and with layers > l already done:
//   dW (H,(l+1)H) += Σ_rows Σ_d dk_{l,i}·k̂_{m,j} + dv_{l,i}·v̂_{m,j}      (l >= 1)
//   dkv_raw layer m += W_l[:, m-block]ᵀ · (dk_l | dv_l)   for every m <= l (l = 0: identity)
// then columns [C, 3C) of dqkv are overwritten with dkv_raw layer l — now complete: the gradient
// of layer l's raw k̂|v̂ from every layer that reads them — ready for the qkv projection's backward.
// dkv_raw must be zeroed before the first (top) layer's call.
template <typename S>
void lime_backward(S* dqkv, S* dW, S* dkv_raw, S* tmp, const S* kv_raw, const S* W, int l, int L, int64_t N, int C,
                   int H);

}  // namespace srbench::model
