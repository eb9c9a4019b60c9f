// The variants of a transformer block (internal to model/), chosen once when a transformer is
// built (make_* below, from its config), so that the forward and backward passes call one table
// or object instead of testing the config in every layer:
//   NormFns          LayerNorm | RMSNorm                              (norm:)
//   MlpActivation    gelu | relu | spline                             (activation:)
//   QkvTransform     LIMe's key/value mixing, RoPE's rotation         (lime: static, position: rope):
//                    stages applied in place to a block's qkv, in that order
//   AttentionKernel  softmax | spline-score | spline-kernel           (attention:), with ALiBi's
//                    score bias under `position: alibi` or Transformer-XL's terms under
//                    `relative` (relative.hpp); causal, or every key of the example's own
//                    length (`causal: false`)
// A variant with parameters of its own (spline values, LIMe routers) finds their offsets in the
// layout when it is built and reads them from the flat buffers it is handed (params; gradients
// added into grads). One that saves activations of its own owns them, sized by reserve(B, T, …)
// like the rest of the workspace (grown only: no allocation in a step of a shape seen before),
// from one list of its buffers that also reports their size (add_workspace; buffers.hpp).
//
// Shapes: layers.hpp's legend (B, T, N = B·T, C, H, F); l is the block, L the number of blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/attention.hpp"
#include "model/config.hpp"
#include "model/memory.hpp"
#include "model/params.hpp"

namespace srbench::model {

// out (N,C) = norm(inp (N,C)) with weight and bias (C; RMSNorm has no bias: nullptr), saving
// mean (N; not used by RMSNorm) and rstd (N) for backward. backward ADDS into dinp (N,C), dweight
// and dbias (C): layers.hpp's layernorm_* / rmsnorm_*.
template <typename S>
struct NormFns {
  void (*forward)(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, int N, int C);
  void (*backward)(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight, const S* mean,
                   const S* rstd, int N, int C);
};
template <typename S>
NormFns<S> make_norm(const ModelConfig& cfg);

// The MLP's activation, elementwise over n values of block l.
template <typename S>
class MlpActivation {
 public:
  virtual ~MlpActivation() = default;
  // out = act(inp).
  virtual void forward(S* out, const S* inp, const S* params, int l, int64_t n) const = 0;
  // dinp = dout·act'(inp) (overwritten; dinp may be dout); a spline's values gradient is added
  // into grads.
  virtual void backward(S* dinp, S* grads, const S* dout, const S* inp, const S* params, int l, int64_t n) const = 0;
};
template <typename S>
std::unique_ptr<MlpActivation<S>> make_activation(const ModelConfig& cfg, const ParamLayout& layout);

// An in-place stage on block l's qkv (N,3C), between the q|k|v projection and attention.
template <typename S>
class QkvTransform {
 public:
  virtual ~QkvTransform() = default;
  virtual void reserve(int B, int T) = 0;
  // Adds what reserve(B, T) allocates from nothing, with `threads` OpenMP threads, to m (memory.hpp).
  virtual void add_workspace(CallMemory& m, int B, int T, int threads) const = 0;
  virtual void forward(S* qkv, const S* params, int l, int B, int T) = 0;
  // dqkv (N,3C) in place, from the gradient of forward's output to that of its input; the
  // stage's parameter gradients are added into grads. Called for l = L−1 down to 0, after a
  // forward of every block.
  virtual void backward(S* dqkv, S* grads, const S* params, int l, int B, int T) = 0;
};
// The stages this config asks for, in forward order: LIMe (lime: static), then RoPE (position:
// rope); none for the others.
template <typename S>
std::vector<std::unique_ptr<QkvTransform<S>>> make_qkv_transforms(const ModelConfig& cfg, const ParamLayout& layout);

// Attention of block l over the (transformed) qkv (N,3C), each query reading the keys `keys`
// says (attention.hpp: causal, or every key of its example's own length).
template <typename S>
class AttentionKernel {
 public:
  virtual ~AttentionKernel() = default;
  virtual void reserve(int B, int T) = 0;
  // Adds what reserve(B, T) allocates from nothing, with `threads` OpenMP threads, to m (memory.hpp).
  virtual void add_workspace(CallMemory& m, int B, int T, int threads) const = 0;
  // out (N,C) heads concatenated; att (B,H,T,T) the weights α (0 for the keys not read).
  virtual void forward(S* out, S* att, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B,
                       int T) = 0;
  // dqkv (N,3C) = the gradient (overwritten) from dout (N,C); a spline's values gradient is
  // added into grads; scratch holds T·T values per OpenMP thread (omp_get_max_threads()). keys
  // as in the forward pass.
  virtual void backward(S* dqkv, S* grads, S* scratch, const S* dout, const S* qkv, const S* att, const S* params,
                        const AttentionKeys& keys, int l, int B, int T) = 0;
  // Forward only (attention.hpp's *_infer kernels): reserve_infer sizes the strip scratch for B
  // sequences of T positions; prepare_infer computes, once per batch, what every block's call
  // reads (under relative positions each block's p_r); infer writes out (N,C), bit for bit
  // forward's in float, and keeps nothing.
  virtual void reserve_infer(int B, int T) = 0;
  virtual void prepare_infer(const S* params, int T) = 0;
  virtual void infer(S* out, const S* qkv, const S* params, const AttentionKeys& keys, int l, int B, int T) = 0;
};
template <typename S>
std::unique_ptr<AttentionKernel<S>> make_attention(const ModelConfig& cfg, const ParamLayout& layout);

}  // namespace srbench::model
