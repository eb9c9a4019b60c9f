#include "model/layers.hpp"

// GCC 12 reports false -Wmaybe-uninitialized warnings inside the AVX-512 intrinsics that Eigen's
// matrix products use (hundreds of them with -march=native); they are not about this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "model/eigen_views.hpp"
#include "model/fastmath.hpp"
#include "model/kernels.hpp"
#include "model/parallel.hpp"
#include "model/sgemm.hpp"

namespace srbench::model {

namespace {

// GEMM chunks: a product is split into two halves (for two threads), each at least kMinRowChunk
// rows (products over rows) or kMinColChunk input features (weight gradients). The split depends
// on the shape only, never on the thread count, so neither do the results (and sgemm's do not
// depend on the split at all). Every row chunk re-packs the weight it shares with the others:
// fewer, larger chunks pack less.
constexpr int kMinRowChunk = 256;
constexpr int kMinColChunk = 32;

inline int chunks(int n, int chunk) { return (n + chunk - 1) / chunk; }
// The chunk size that splits n into (at most) two halves, a multiple of 16, at least `least`.
inline int half_chunk(int n, int least) { return std::max(least, ((n + 1) / 2 + 15) / 16 * 16); }

// ---- GEMM with a persistent packing workspace ------------------------------------------------
// Eigen's matrix product allocates its packing buffers (blockA, blockB) on the heap for every
// product larger than EIGEN_STACK_ALLOCATION_LIMIT. gemm_add() calls the same Eigen kernel
// (general_matrix_matrix_product, the same blocking sizes as `C.noalias() += A * B` computes with
// EIGEN_DONT_PARALLELIZE) with buffers owned by the calling thread, which grow to the largest
// product seen and are then reused: no allocation after the first training step. The numbers are
// those of the Eigen expression.
template <typename S>
class ThreadBlocking : public Eigen::internal::level3_blocking<S, S> {
 public:
  // For a row-major result of `rows` × `cols` and inner dimension `depth` (Eigen computes the
  // transposed, column-major product: its "m" is our cols).
  ThreadBlocking(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth) {
    this->m_mc = cols;
    this->m_nc = rows;
    this->m_kc = depth;
    Eigen::internal::computeProductBlockingSizes<S, S, 1, Eigen::Index>(this->m_kc, this->m_mc, this->m_nc, 1);
    constexpr Eigen::Index kAlign = 64 / sizeof(S);
    const Eigen::Index a = (this->m_mc * this->m_kc + kAlign - 1) / kAlign * kAlign;
    const Eigen::Index need = a + this->m_kc * this->m_nc;
    thread_local std::vector<S, Eigen::aligned_allocator<S>> buffer;
    if (static_cast<Eigen::Index>(buffer.size()) < need) buffer.resize(static_cast<size_t>(need));
    this->m_blockA = buffer.data();
    this->m_blockB = buffer.data() + a;
  }
};

// C (m×n, row-major, row stride ldc) += op(A)·op(B): A is m×k row-major (lda) or, with TA, its
// transpose stored k×m (lda); B is k×n row-major (ldb) or, with TB, stored n×k (ldb).
template <bool TA, bool TB, typename S>
void gemm_add(int m, int n, int k, const S* A, int lda, const S* B, int ldb, S* C, int ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  ThreadBlocking<S> blocking(m, n, k);
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, S, TA ? Eigen::ColMajor : Eigen::RowMajor, false, S,
                                                 TB ? Eigen::ColMajor : Eigen::RowMajor, false, Eigen::RowMajor,
                                                 1>::run(m, n, k, A, lda, B, ldb, C, 1, ldc, S(1), blocking);
}

constexpr double kNormEps = 1e-5;

// erf: fastmath for float (vectorisable, the same bits whatever the alignment), libm for double.
template <typename S>
inline S erf_(S x) {
  if constexpr (std::is_same_v<S, float>) return fastmath::erf(x);
  else return std::erf(x);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
template <typename S>
void encoder_forward(S* out, const int32_t* tokens, const S* tok_emb, const S* pos, int B, int T, int C) {
  const int N = B * T;
  parallel_for(N, N >= 256, [&](int n) {
    S* o = out + static_cast<int64_t>(n) * C;
    const S* e = tok_emb + static_cast<int64_t>(tokens[n]) * C;
    if (pos) {
      const S* p = pos + static_cast<int64_t>(n % T) * C;
      for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    } else {
      for (int c = 0; c < C; ++c) o[c] = e[c];
    }
  });
}

template <typename S>
void encoder_backward(S* dtok_emb, S* dpos, const S* dout, const int32_t* tokens, int B, int T, int C) {
  // d(out[n]) / d(tok_emb[tokens[n]]) = 1: scatter-add in row order (rows may share a token).
  const int N = B * T;
  for (int n = 0; n < N; ++n) {
    S* d = dtok_emb + static_cast<int64_t>(tokens[n]) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) d[c] += g[c];
  }
  if (!dpos) return;
  parallel_for(T, N >= 256, [&](int t) {
    S* d = dpos + static_cast<int64_t>(t) * C;
    for (int b = 0; b < B; ++b) {
      const S* g = dout + (static_cast<int64_t>(b) * T + t) * C;
      for (int c = 0; c < C; ++c) d[c] += g[c];
    }
  });
}

// ---------------------------------------------------------------------------------------------
template <typename S>
void layernorm_forward_eps(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, int N, int C,
                           double eps) {
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S m = fastmath::lane_sum<S>(C, [&](int64_t c) { return x[c]; }) / S(C);
    const S v = fastmath::lane_sum<S>(C, [&](int64_t c) { return (x[c] - m) * (x[c] - m); }) / S(C);
    const S s = S(1) / std::sqrt(v + S(eps));
    S* o = out + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  });
}

template <typename S>
void layernorm_forward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias, int N, int C) {
  layernorm_forward_eps(out, mean, rstd, inp, weight, bias, N, C, kNormEps);
}

template <typename S>
void layernorm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                        const S* mean, const S* rstd, int N, int C) {
  // out = xhat·w + b, xhat = (x − mean)·rstd:
  // dx = rstd·(w·dout − mean(w·dout) − xhat·mean(w·dout·xhat)).
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S m = mean[n], s = rstd[n];
    const S a = fastmath::lane_sum<S>(C, [&](int64_t c) { return weight[c] * g[c]; }) / S(C);
    const S b = fastmath::lane_sum<S>(C, [&](int64_t c) { return weight[c] * g[c] * (x[c] - m) * s; }) / S(C);
    S* dx = dinp + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) dx[c] += s * (weight[c] * g[c] - a - (x[c] - m) * s * b);
  });
  // dw += Σ_n dout·xhat, db += Σ_n dout: rows in order.
  for (int n = 0; n < N; ++n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S m = mean[n], s = rstd[n];
    for (int c = 0; c < C; ++c) {
      dweight[c] += g[c] * (x[c] - m) * s;
      dbias[c] += g[c];
    }
  }
}

template <typename S>
void rmsnorm_forward_eps(S* out, S* rstd, const S* inp, const S* weight, int N, int C, double eps) {
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S ss = fastmath::lane_sum<S>(C, [&](int64_t c) { return x[c] * x[c]; });
    const S s = S(1) / std::sqrt(ss / C + S(eps));
    S* o = out + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) o[c] = x[c] * s * weight[c];
    rstd[n] = s;
  });
}

template <typename S>
void rmsnorm_forward(S* out, S* rstd, const S* inp, const S* weight, int N, int C) {
  rmsnorm_forward_eps(out, rstd, inp, weight, N, C, kNormEps);
}

template <typename S>
void rmsnorm_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight, const S* rstd,
                      int N, int C) {
  // out = w·x·r, r = (mean(x²) + eps)^(−1/2): dx = r·w·dout − x·r³·mean(x·w·dout).
  parallel_for(N, N >= 256, [&](int n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S s = rstd[n];
    const S a = fastmath::lane_sum<S>(C, [&](int64_t c) { return x[c] * weight[c] * g[c]; }) / S(C);
    S* dx = dinp + static_cast<int64_t>(n) * C;
    for (int c = 0; c < C; ++c) dx[c] += s * weight[c] * g[c] - x[c] * s * s * s * a;
  });
  for (int n = 0; n < N; ++n) {
    const S* x = inp + static_cast<int64_t>(n) * C;
    const S* g = dout + static_cast<int64_t>(n) * C;
    const S s = rstd[n];
    for (int c = 0; c < C; ++c) dweight[c] += g[c] * x[c] * s;
  }
}

// ---------------------------------------------------------------------------------------------
template <typename S>
void matmul_forward(S* out, const S* inp, const S* weight, const S* bias, int N, int C, int OC) {
  const int rc = half_chunk(N, kMinRowChunk), nc = chunks(N, rc);
  const bool parallel = nc > 1 && static_cast<int64_t>(N) * C * OC >= kMinParallelWork;
  parallel_for(nc, parallel, [&](int i) {
    const int r0 = i * rc, rows = std::min(rc, N - r0);
    S* Y = out + static_cast<int64_t>(r0) * OC;
    if constexpr (kUseSgemm<S>) {  // y = b + x·Wᵀ: W (OC×C) read as the C×OC operand Wᵀ
      sgemm(rows, OC, C, {inp + static_cast<int64_t>(r0) * C, C, 1}, {weight, 1, C}, Y, OC,
            bias ? GemmInit::kRow : GemmInit::kZero, bias);
      return;
    }
    // start from the bias (or 0): the product then adds to it
    for (int r = 0; r < rows; ++r) {
      S* y = Y + static_cast<int64_t>(r) * OC;
      if (bias) std::copy(bias, bias + OC, y);
      else std::fill(y, y + OC, S(0));
    }
    gemm_add<false, true>(rows, OC, C, inp + static_cast<int64_t>(r0) * C, C, weight, C, Y, OC);
  });
}

template <typename S>
void matmul_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight, int N,
                     int C, int OC) {
  // out = inp·Wᵀ + b: dinp = dout·W, in row chunks.
  if (dinp) {
    const int rc = half_chunk(N, kMinRowChunk), nc = chunks(N, rc);
    const bool parallel = nc > 1 && static_cast<int64_t>(N) * C * OC >= kMinParallelWork;
    parallel_for(nc, parallel, [&](int i) {
      const int r0 = i * rc, rows = std::min(rc, N - r0);
      S* dX = dinp + static_cast<int64_t>(r0) * C;
      if constexpr (kUseSgemm<S>) {
        sgemm(rows, C, OC, {dout + static_cast<int64_t>(r0) * OC, OC, 1}, {weight, C, 1}, dX, C, GemmInit::kZero);
        return;
      }
      std::fill(dX, dX + static_cast<int64_t>(rows) * C, S(0));
      gemm_add<false, false>(rows, C, OC, dout + static_cast<int64_t>(r0) * OC, OC, weight, C, dX, C);
    });
  }
  // dW += doutᵀ·inp in chunks of input features (columns of dW and of inp: each chunk packs only its
  // columns of inp), and db += Σ_n dout in as many chunks of output features; each a full sum over rows.
  const int cc = half_chunk(C, kMinColChunk), nc = chunks(C, cc), bc = (OC + nc - 1) / nc;
  const bool parallel = nc > 1 && static_cast<int64_t>(N) * C * OC >= kMinParallelWork;
  parallel_for(nc, parallel, [&](int i) {
    const int c0 = i * cc, cols = std::min(cc, C - c0);
    if constexpr (kUseSgemm<S>)  // doutᵀ: element (o, n) of the OC×N operand is dout[n·OC + o]
      sgemm(OC, cols, N, {dout, 1, OC}, {inp + c0, C, 1}, dweight + c0, C, GemmInit::kAccumulate);
    else
      gemm_add<true, false>(OC, cols, N, dout, OC, inp + c0, C, dweight + c0, C);
    if (dbias) {
      const int o0 = i * bc, o1 = std::min(OC, o0 + bc);
      for (int n = 0; n < N; ++n) {
        const S* g = dout + static_cast<int64_t>(n) * OC;
        for (int o = o0; o < o1; ++o) dbias[o] += g[o];
      }
    }
  });
}

template <typename S>
void matmul_backward_add(S* dinp_sum, S* scratch, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                         int N, int C, int OC) {
  matmul_backward(scratch, dweight, dbias, dout, inp, weight, N, C, OC);
  const int64_t n = static_cast<int64_t>(N) * C;
  for (int64_t i = 0; i < n; ++i) dinp_sum[i] += scratch[i];
}

// ---------------------------------------------------------------------------------------------
namespace {
// Rotates each (x_2i, x_2i+1) of the q and k parts of one row by ±angle.
template <typename S>
void rotate_row(S* row, const S* cs, int C, int H, S sign) {
  const int hs = C / H, half = hs / 2;
  for (int part = 0; part < 2; ++part) {
    for (int h = 0; h < H; ++h) {
      S* x = row + part * C + h * hs;
      for (int i = 0; i < half; ++i) {
        const S c = cs[2 * i], s = sign * cs[2 * i + 1];
        const S a = x[2 * i], b = x[2 * i + 1];
        x[2 * i] = a * c - b * s;
        x[2 * i + 1] = a * s + b * c;
      }
    }
  }
}
}  // namespace

template <typename S>
void rope_forward(S* qkv, const S* cos_sin, int B, int T, int C, int H) {
  const int N = B * T, hs = C / H;
  parallel_for(N, N >= 256, [&](int n) {
    rotate_row(qkv + static_cast<int64_t>(n) * 3 * C, cos_sin + static_cast<int64_t>(n % T) * hs, C, H, S(1));
  });
}

template <typename S>
void rope_backward(S* dqkv, const S* cos_sin, int B, int T, int C, int H) {
  // y = R·x with R orthogonal: dx = Rᵀ·dy, the rotation by −angle.
  const int N = B * T, hs = C / H;
  parallel_for(N, N >= 256, [&](int n) {
    rotate_row(dqkv + static_cast<int64_t>(n) * 3 * C, cos_sin + static_cast<int64_t>(n % T) * hs, C, H, S(-1));
  });
}

// ---------------------------------------------------------------------------------------------
namespace {
constexpr int64_t kElemChunk = 4096;  // elements per chunk of an elementwise loop

}  // namespace

template <typename S>
void gelu_forward(S* out, const S* inp, int64_t n) {
  // gelu(x) = x·Φ(x) = ½·x·(1 + erf(x/√2)).
  const S r = S(1) / std::sqrt(S(2));
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) out[i] = S(0.5) * inp[i] * (S(1) + erf_(inp[i] * r));
  });
}

template <typename S>
void gelu_backward(S* dinp, const S* inp, const S* dout, int64_t n) {
  // gelu'(x) = Φ(x) + x·φ(x) = ½·(1 + erf(x/√2)) + x·exp(−x²/2)/√(2π).
  const S r = S(1) / std::sqrt(S(2));
  const S k = S(1) / std::sqrt(S(2) * S(M_PI));
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) {
      // The last multiply-add fused explicitly, as the compiler's contraction fused it in the scalar
      // loop that computed every earlier result: the vectorised loop and its scalar remainder then
      // agree bit for bit, and with those results.
      const S x = inp[i];
      dinp[i] = dout[i] * std::fma(x * k, exp_nonpositive_(S(-0.5) * x * x), S(0.5) * (S(1) + erf_(x * r)));
    }
  });
}

template <typename S>
void relu_forward(S* out, const S* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = inp[i] > S(0) ? inp[i] : S(0);
}

template <typename S>
void relu_backward(S* dinp, const S* inp, const S* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] = inp[i] > S(0) ? dout[i] : S(0);
}

template <typename S>
void residual_forward(S* out, const S* a, const S* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

// ---------------------------------------------------------------------------------------------
template <typename S>
void spline_forward(S* out, const S* inp, const S* values, int64_t n, const SplineShape& sp) {
  const SplineGrid<S> g(sp);
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) out[i] = g.value(values, g.at(inp[i]));
  });
}

template <typename S>
void spline_backward(S* dinp, S* dvalues, const S* dout, const S* inp, const S* values, int64_t n,
                     const SplineShape& sp) {
  // φ = θ_k + t·(θ_{k+1} − θ_k), t = u − k, u = (x+R)/h: dx = dout·(θ_{k+1} − θ_k)/h (0 if
  // clamped); dθ_k += dout·(1 − t), dθ_{k+1} += dout·t.
  const SplineGrid<S> g(sp);
  const int K = sp.keypoints;
  const int64_t nc = (n + kElemChunk - 1) / kElemChunk;
  double* partial = spline_partials(nc, K).data();
  parallel_for(nc, n >= 65536, [&](int64_t c) {
    double* pk = partial + c * K;
    const int64_t e = std::min(n, (c + 1) * kElemChunk);
    for (int64_t i = c * kElemChunk; i < e; ++i) {
      const SplineAt<S> a = g.at(inp[i]);
      const S d = dout[i];
      pk[a.k] += static_cast<double>(d * (S(1) - a.t));
      pk[a.k + 1] += static_cast<double>(d * a.t);
      dinp[i] = d * g.slope(values, a);
    }
  });
  add_partials(dvalues, partial, nc, K);
}

// ---------------------------------------------------------------------------------------------
template <typename S>
void crossentropy_forward_backward(S* losses, S* dlogits, const S* logits, const int32_t* targets, S scale,
                                   int N, int V) {
  parallel_for(N, N >= 256, [&](int n) {
    const S* z = logits + static_cast<int64_t>(n) * V;
    S* d = dlogits ? dlogits + static_cast<int64_t>(n) * V : nullptr;
    const int32_t y = targets[n];
    if (y < 0) {
      losses[n] = 0;
      if (d) std::fill(d, d + V, S(0));
      return;
    }
    S mx = z[0];
    for (int v = 1; v < V; ++v) mx = std::max(mx, z[v]);
    S sum = 0;
    for (int v = 0; v < V; ++v) sum += exp_nonpositive_(z[v] - mx);
    const S lse = mx + std::log(sum);
    losses[n] = lse - z[y];
    if (d) {
      // loss = lse(z) − z_y: dz = softmax(z) − onehot(y).
      for (int v = 0; v < V; ++v) d[v] = exp_nonpositive_(z[v] - lse) * scale;
      d[y] -= scale;
    }
  });
}

// ---------------------------------------------------------------------------------------------
#define SRBENCH_INSTANTIATE(S)                                                                             \
  template void encoder_forward<S>(S*, const int32_t*, const S*, const S*, int, int, int);                \
  template void encoder_backward<S>(S*, S*, const S*, const int32_t*, int, int, int);                     \
  template void layernorm_forward<S>(S*, S*, S*, const S*, const S*, const S*, int, int);                  \
  template void layernorm_forward_eps<S>(S*, S*, S*, const S*, const S*, const S*, int, int, double);      \
  template void layernorm_backward<S>(S*, S*, S*, const S*, const S*, const S*, const S*, const S*, int,   \
                                      int);                                                                \
  template void rmsnorm_forward<S>(S*, S*, const S*, const S*, int, int);                                  \
  template void rmsnorm_forward_eps<S>(S*, S*, const S*, const S*, int, int, double);                      \
  template void rmsnorm_backward<S>(S*, S*, const S*, const S*, const S*, const S*, int, int);             \
  template void matmul_forward<S>(S*, const S*, const S*, const S*, int, int, int);                        \
  template void matmul_backward<S>(S*, S*, S*, const S*, const S*, const S*, int, int, int);               \
  template void matmul_backward_add<S>(S*, S*, S*, S*, const S*, const S*, const S*, int, int, int);         \
  template void rope_forward<S>(S*, const S*, int, int, int, int);                                         \
  template void rope_backward<S>(S*, const S*, int, int, int, int);                                        \
  template void gelu_forward<S>(S*, const S*, int64_t);                                                    \
  template void gelu_backward<S>(S*, const S*, const S*, int64_t);                                         \
  template void relu_forward<S>(S*, const S*, int64_t);                                                    \
  template void relu_backward<S>(S*, const S*, const S*, int64_t);                                         \
  template void residual_forward<S>(S*, const S*, const S*, int64_t);                                      \
  template void spline_forward<S>(S*, const S*, const S*, int64_t, const SplineShape&);                    \
  template void spline_backward<S>(S*, S*, const S*, const S*, const S*, int64_t, const SplineShape&);     \
  template void crossentropy_forward_backward<S>(S*, S*, const S*, const int32_t*, S, int, int);

SRBENCH_INSTANTIATE(float)
SRBENCH_INSTANTIATE(double)

}  // namespace srbench::model
