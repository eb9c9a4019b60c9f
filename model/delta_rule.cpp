// The delta rule's scan (delta_rule.hpp): forward, and backward through one chunk of recomputed
// states at a time.
#include "model/delta_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/buffers.hpp"
#include "model/lane_dots.hpp"
#include "model/parallel.hpp"

namespace srbench::model {
namespace {

int chunks_of(int T) { return (T + DeltaRule<float>::kChunk - 1) / DeltaRule<float>::kChunk; }

// One step of one (sequence, head): row i of prev → row i of cur, cur_i = α prev_i + (β u_i) k with
// u_i = v_i − α (prev_i · k); w (K) and u (K) receive prev·k and u. cur may be prev (in place):
// every row's prev_i · k is taken (all at once, fastmath::lane_dots) before any row changes.
template <typename S>
inline void step(S* cur, const S* prev, S* __restrict w, S* __restrict u, const S* __restrict k,
                 const S* __restrict v, S beta, S alpha, int K) {
  fastmath::lane_dots<S>(K, K, prev, K, k, 0, w);
  for (int i = 0; i < K; ++i) {
    const S* p = prev + static_cast<int64_t>(i) * K;
    S* c = cur + static_cast<int64_t>(i) * K;
    u[i] = v[i] - alpha * w[i];
    const S bu = beta * u[i];
    for (int j = 0; j < K; ++j) c[j] = alpha * p[j] + bu * k[j];
  }
}

// Pairs of (sequence, head) worth a parallel region.
bool parallel_pairs(const DeltaDims& m) {
  return m.B * m.H > 1 && static_cast<int64_t>(m.B) * m.H * m.T * m.K * m.K >= (1 << 15);
}

}  // namespace

template <typename S>
template <typename Self, typename F>
void DeltaRule<S>::buffers(Self& self, const DeltaDims& m, bool need_grads, F&& f) {
  const int64_t P = static_cast<int64_t>(m.B) * m.H, KK = static_cast<int64_t>(m.K) * m.K;
  f(self.saved_, P * chunks_of(m.T) * KK, Role::Saved);
  f(self.run_, P * KK, Role::Saved);
  f(self.fvecs_, P * 2 * m.K, Role::Scratch);
  if (!need_grads) return;
  f(self.states_, P * kChunk * KK, Role::Scratch);
  f(self.ds_, P * KK, Role::Scratch);
  f(self.vecs_, P * 6 * m.K, Role::Scratch);
}

template <typename S>
void DeltaRule<S>::reserve(const DeltaDims& m, bool need_grads) {
  buffers(*this, m, need_grads, GrowBuffer{});
}

template <typename S>
CallMemory DeltaRule<S>::memory(const DeltaDims& m, bool need_grads) const {
  CallMemory c;
  buffers(*this, m, need_grads, CountBuffer{&c});
  return c;
}

template <typename S>
void DeltaRule<S>::forward(S* o, const S* q, const S* k, const S* v, const S* beta, const S* alpha,
                           const DeltaDims& m) {
  const int T = m.T, H = m.H, K = m.K, C = chunks_of(T);
  const int64_t HK = static_cast<int64_t>(H) * K, KK = static_cast<int64_t>(K) * K;
  const S scale = S(1) / std::sqrt(static_cast<S>(K));
  parallel_for(m.B * H, parallel_pairs(m), [&](int p) {
    const int b = p / H, h = p % H;
    S* st = &run_[static_cast<int64_t>(p) * KK];
    S* w = &fvecs_[static_cast<int64_t>(p) * 2 * K];  // S_{t−1} k
    S* u = w + K;                                      // v − α w
    std::fill(st, st + KK, S(0));
    for (int t = 0; t < T; ++t) {
      if (t % kChunk == 0) std::memcpy(&saved_[(static_cast<int64_t>(p) * C + t / kChunk) * KK], st, sizeof(S) * KK);
      const int64_t row = static_cast<int64_t>(b) * T + t, off = row * HK + static_cast<int64_t>(h) * K;
      step(st, st, w, u, k + off, v + off, beta[row * H + h], alpha ? alpha[row * H + h] : S(1), K);
      fastmath::lane_dots<S>(K, K, st, K, q + off, 0, o + off);  // the read-out of the updated rows
      for (int i = 0; i < K; ++i) o[off + i] *= scale;
    }
  });
}

template <typename S>
void DeltaRule<S>::backward(S* dq, S* dk, S* dv, S* dbeta, S* dalpha, const S* dout, const S* q, const S* k,
                            const S* v, const S* beta, const S* alpha, const DeltaDims& m) {
  const int T = m.T, H = m.H, K = m.K, C = chunks_of(T);
  const int64_t HK = static_cast<int64_t>(H) * K, KK = static_cast<int64_t>(K) * K;
  const S scale = S(1) / std::sqrt(static_cast<S>(K));
  parallel_for(m.B * H, parallel_pairs(m), [&](int p) {
    const int b = p / H, h = p % H;
    S* st = &states_[static_cast<int64_t>(p) * kChunk * KK];  // S_t of the chunk's positions
    S* ds = &ds_[static_cast<int64_t>(p) * KK];                // ∂loss/∂S_t
    S* w = &vecs_[static_cast<int64_t>(p) * 6 * K];            // S_{t−1} k
    S* u = w + K;                                                // v − α w
    S* g = u + K;                                                // ∂loss/∂q, then ∂loss/∂k
    S* scaled = g + K;                                           // dout·K^−½
    S* dsk = scaled + K;                                         // ∂S_t k
    S* dsp = dsk + K;                                            // Σ_j ∂S_t,ij S_{t−1},ij
    std::fill(ds, ds + KK, S(0));
    for (int c = C - 1; c >= 0; --c) {
      const int t0 = c * kChunk, t1 = std::min(T, t0 + kChunk);
      const S* start = &saved_[(static_cast<int64_t>(p) * C + c) * KK];
      for (int t = t0; t < t1; ++t) {  // the chunk's states again, as forward computed them
        const int64_t row = static_cast<int64_t>(b) * T + t, off = row * HK + static_cast<int64_t>(h) * K;
        step(st + (t - t0) * KK, t == t0 ? start : st + (t - t0 - 1) * KK, w, u, k + off, v + off, beta[row * H + h],
             alpha ? alpha[row * H + h] : S(1), K);
      }
      for (int t = t1 - 1; t >= t0; --t) {
        const int64_t row = static_cast<int64_t>(b) * T + t, off = row * HK + static_cast<int64_t>(h) * K;
        const S* cur = st + (t - t0) * KK;
        const S* prev = t == t0 ? start : st + (t - t0 - 1) * KK;
        const S* kt = k + off;
        const S bt = beta[row * H + h], at = alpha ? alpha[row * H + h] : S(1);
        // o = S_t q K^−½: ∂q = S_tᵀ dout K^−½ (rows in order), ∂S_t += dout K^−½ qᵀ
        for (int i = 0; i < K; ++i) scaled[i] = dout[off + i] * scale;
        std::fill(g, g + K, S(0));
        for (int i = 0; i < K; ++i) {
          const S* ci = cur + static_cast<int64_t>(i) * K;
          S* di = ds + static_cast<int64_t>(i) * K;
          const S si = scaled[i];
          for (int j = 0; j < K; ++j) g[j] += ci[j] * si;
          for (int j = 0; j < K; ++j) di[j] += si * q[off + j];
        }
        std::copy(g, g + K, dq + off);
        // S_t = α S_{t−1} + β u kᵀ, u = v − α S_{t−1} k
        fastmath::lane_dots<S>(K, K, prev, K, kt, 0, w);
        for (int i = 0; i < K; ++i) u[i] = v[off + i] - at * w[i];
        fastmath::lane_dots<S>(K, K, ds, K, kt, 0, dsk);  // every row's, before any row of ∂S changes
        if (alpha) fastmath::lane_dots<S>(K, K, ds, K, prev, K, dsp);
        std::fill(g, g + K, S(0));
        S d_beta = 0, d_alpha = 0;
        for (int i = 0; i < K; ++i) {
          S* di = ds + static_cast<int64_t>(i) * K;
          const S* pi = prev + static_cast<int64_t>(i) * K;
          const S r = dsk[i];                  // (∂S_t k)_i
          const S sp = alpha ? dsp[i] : S(0);  // Σ_j ∂S_t,ij S_{t−1},ij
          const S du = bt * r;
          const S dw = -at * du;
          d_beta += u[i] * r;
          d_alpha += sp - du * w[i];
          dv[off + i] = du;
          const S bu = bt * u[i];
          for (int j = 0; j < K; ++j) g[j] += bu * di[j] + dw * pi[j];
          for (int j = 0; j < K; ++j) di[j] = at * di[j] + dw * kt[j];
        }
        std::copy(g, g + K, dk + off);
        dbeta[row * H + h] = d_beta;
        if (alpha) dalpha[row * H + h] = d_alpha;
      }
    }
  });
}

template class DeltaRule<float>;
template class DeltaRule<double>;

}  // namespace srbench::model
