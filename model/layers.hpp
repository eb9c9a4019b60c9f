// The layers of the transformer as pairs of free functions, llm.c style: x_forward / x_backward,
// arguments in the order outputs, inputs, weights, sizes. Backward functions ADD into every
// parameter gradient and into the residual stream's gradient (norms, encoder): zero those first.
// The other activation gradients have one producer each and are overwritten ("dinp =" below),
// which spares zeroing large buffers every step.
//
// Shape legend: B batch, T positions, N = B·T rows, C = d_model, H heads, hs = C/H head size,
// F = mlp hidden width, V vocabulary, OC a linear layer's output width. Activations are
// row-major: "(N,C)" is N rows of C contiguous values.
//
// Threads: OpenMP over fixed chunks (row blocks, output-column blocks, (example, head) pairs)
// whose boundaries do not depend on the thread count; sums over rows run in a fixed order.
#pragma once

#include <cstdint>

namespace srbench::model {

// out (N,C) = tok_emb[tokens] (+ pos[t]); tok_emb is (V,C), pos (T..,C) or nullptr.
template <typename S>
void encoder_forward(S* out, const int32_t* tokens, const S* tok_emb, const S* pos, int B, int T, int C);
// dtok_emb (V,C) += scatter of dout (N,C); dpos (T..,C) += sum over examples (nullptr: skipped).
template <typename S>
void encoder_backward(S* dtok_emb, S* dpos, const S* dout, const int32_t* tokens, int B, int T, int C);

// LayerNorm, eps 1e-5: out = (inp - mean)·rstd·weight + bias; saves mean, rstd (N).
template <typename S>
void layernorm_forward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, int N, int C);
template <typename S>  // another eps (DeltaNet's and GLA's norms: 1e-6); backward is layernorm_backward
void layernorm_forward_eps(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, int N, int C,
                           double eps);
template <typename S>
void layernorm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                        const S* mean, const S* rstd, int N, int C);

// RMSNorm, eps 1e-5: out = inp·rstd·weight, rstd = 1/sqrt(mean(inp²) + eps); saves rstd (N).
template <typename S>
void rmsnorm_forward(S* out, S* rstd, const S* inp, const S* weight, int N, int C);
// The same with another eps (DeltaNet's and GLA's norms: 1e-6); backward is rmsnorm_backward.
template <typename S>
void rmsnorm_forward_eps(S* out, S* rstd, const S* inp, const S* weight, int N, int C, double eps);
template <typename S>
void rmsnorm_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight, const S* rstd,
                      int N, int C);

// Linear: out (N,OC) = inp (N,C) · weightᵀ + bias; weight (OC,C), bias (OC) or nullptr.
template <typename S>
void matmul_forward(S* out, const S* inp, const S* weight, const S* bias, int N, int C, int OC);
// dinp (N,C) = dout·weight (overwritten; skipped if nullptr); dweight += doutᵀ·inp;
// dbias += column sums of dout (skipped if nullptr).
template <typename S>
void matmul_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight, int N,
                     int C, int OC);
// The same with dout·weight added into dinp_sum (N, C) instead of written: computed into `scratch`
// (N, C) first, then added element by element (a layer whose input feeds several projections).
template <typename S>
void matmul_backward_add(S* dinp_sum, S* scratch, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                         int N, int C, int OC);

// RoPE on q and k of qkv (N,3C) in place: in each head the pair (x_2i, x_2i+1) at position t is
// rotated by t·θ_i; cos_sin is (T..,hs/2,2) holding cos(t·θ_i), sin(t·θ_i).
template <typename S>
void rope_forward(S* qkv, const S* cos_sin, int B, int T, int C, int H);
// The inverse rotation applied to the gradients of q and k in dqkv (N,3C), in place.
template <typename S>
void rope_backward(S* dqkv, const S* cos_sin, int B, int T, int C, int H);

// The learnable spline φ (model.md): K keypoints x_k = −R + k·h, h = 2R/(K−1), values θ_k.
// u = (x+R)/h; constant extrapolation clamps u to [0, K−1], linear does not; k = clamp(⌊u⌋, 0,
// K−2); φ(x) = θ_k + (u−k)(θ_{k+1} − θ_k). ∂φ/∂x = (θ_{k+1} − θ_k)/h (0 where u was clamped),
// ∂φ/∂θ_k = 1 − (u−k), ∂φ/∂θ_{k+1} = u − k.
struct SplineShape {
  int keypoints = 64;  // K
  double range = 8.0;  // R
  bool linear = false; // extrapolate: linear (else constant)
};
// out = φ(inp), n values (values: K).
template <typename S>
void spline_forward(S* out, const S* inp, const S* values, int64_t n, const SplineShape& sp);
// dinp = dout·φ'(inp) (overwritten; dinp may be dout); dvalues (K) += Σ dout·∂φ/∂θ, summed per
// fixed chunk of elements, then the chunks in order.
template <typename S>
void spline_backward(S* dinp, S* dvalues, const S* dout, const S* inp, const S* values, int64_t n,
                     const SplineShape& sp);

// Exact (erf) GeLU and ReLU, elementwise over n values; backward: dinp = dout·act'(inp)
// (overwritten; dinp may be dout).
template <typename S>
void gelu_forward(S* out, const S* inp, int64_t n);
template <typename S>
void gelu_backward(S* dinp, const S* inp, const S* dout, int64_t n);
template <typename S>
void relu_forward(S* out, const S* inp, int64_t n);
template <typename S>
void relu_backward(S* dinp, const S* inp, const S* dout, int64_t n);

// out = a + b, n values.
template <typename S>
void residual_forward(S* out, const S* a, const S* b, int64_t n);

// Cross-entropy of logits (N,V) against targets (N; -1 = not scored). losses (N) gets each row's
// loss (0 where not scored). If dlogits is not nullptr it gets (softmax − onehot)·scale on scored
// rows and 0 elsewhere (overwritten, not added: it is the start of backward).
template <typename S>
void crossentropy_forward_backward(S* losses, S* dlogits, const S* logits, const int32_t* targets, S scale,
                                   int N, int V);

}  // namespace srbench::model
