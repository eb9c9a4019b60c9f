// The delta rule's scan (delta_rule.hpp): forward, and backward through one chunk of recomputed
// states at a time.
#include "model/delta_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/buffers.hpp"
#include "model/column_block.hpp"
#include "model/lane_dots.hpp"
#include "model/parallel.hpp"

namespace srbench::model {
namespace {

int chunks_of(int T) { return (T + DeltaRule<float>::kChunk - 1) / DeltaRule<float>::kChunk; }

// One step of one (sequence, head): row i of prev → row i of cur, cur_i = α prev_i + (β u_i) k with
// u_i = v_i − α (prev_i · k); w (K) and u (K) receive prev·k and u. cur may be prev (in place):
// every row's prev_i · k is taken (all at once, fastmath::lane_dots) before any row changes.
// Without a gate (Gated false) α is 1 and its products are left out: 1·x is x exactly, so the
// numbers are the same as with α = 1.
template <bool Gated, typename S>
inline void step(S* cur, const S* prev, S* __restrict w, S* __restrict u, const S* __restrict k,
                 const S* __restrict v, S beta, S alpha, int K) {
  fastmath::lane_dots<S>(K, K, prev, K, k, 0, w);
  for (int i = 0; i < K; ++i) {
    const S* p = prev + static_cast<int64_t>(i) * K;
    S* c = cur + static_cast<int64_t>(i) * K;
    u[i] = Gated ? v[i] - alpha * w[i] : v[i] - w[i];
    const S bu = beta * u[i];
    if constexpr (Gated)
      for (int j = 0; j < K; ++j) c[j] = alpha * p[j] + bu * k[j];
    else
      for (int j = 0; j < K; ++j) c[j] = p[j] + bu * k[j];
  }
}

// The backward's two sweeps over a state's rows accumulate a sum per column over the rows, in the
// order of the rows: column_block.hpp keeps a block of those sums in registers.

// ∂q and ∂S of the read-out o = S c (c = q·K^−½ already scaled into s = dout·K^−½):
// out[j] = Σ_i s_i·cur_ij (in the order of i), and ∂S_ij += s_i·q_j.
template <typename S>
void readout_backward(int K, const S* __restrict cur, const S* __restrict s, const S* __restrict q, S* __restrict ds,
                      S* __restrict out) {
  for_columns<S>(K, [&]<typename X>(int j0) {
    X acc = {};
    const X qj = load_as<X>(q + j0);
    for (int i = 0; i < K; ++i) {
      const int64_t at = static_cast<int64_t>(i) * K + j0;
      const S si = s[i];
      acc += load_as<X>(cur + at) * si;
      store_as(ds + at, load_as<X>(ds + at) + si * qj);
    }
    store_as(out + j0, acc);
  });
}

// ∂k of S_t = α S_{t−1} + β u kᵀ and ∂S_{t−1}: out[j] = Σ_i (bu_i·∂S_ij + dw_i·prev_ij) (in the
// order of i), then ∂S_ij = α ∂S_ij + dw_i·k_j (without a gate α is 1 and left out).
template <bool Gated, typename S>
void update_backward(int K, S* __restrict ds, const S* __restrict prev, const S* __restrict k, const S* __restrict bu,
                     const S* __restrict dw, S alpha, S* __restrict out) {
  for_columns<S>(K, [&]<typename X>(int j0) {
    X acc = {};
    const X kj = load_as<X>(k + j0);
    for (int i = 0; i < K; ++i) {
      const int64_t at = static_cast<int64_t>(i) * K + j0;
      const S a = bu[i], b = dw[i];
      const X di = load_as<X>(ds + at);
      acc += a * di + b * load_as<X>(prev + at);
      if constexpr (Gated)
        store_as(ds + at, alpha * di + b * kj);
      else
        store_as(ds + at, di + b * kj);
    }
    store_as(out + j0, acc);
  });
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
  f(self.vecs_, P * (2 * kChunk + 5) * m.K, Role::Scratch);
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
void DeltaRule<S>::forward(S* o, const S* q, const S* k, const S* v, const S* beta, const S* alpha, const DeltaDims& m) {
  if (alpha)
    forward_impl<true>(o, q, k, v, beta, alpha, m);
  else
    forward_impl<false>(o, q, k, v, beta, alpha, m);
}

template <typename S>
template <bool Gated>
void DeltaRule<S>::forward_impl(S* o, const S* q, const S* k, const S* v, const S* beta, const S* alpha,
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
      step<Gated>(st, st, w, u, k + off, v + off, beta[row * H + h], Gated ? alpha[row * H + h] : S(1), K);
      fastmath::lane_dots<S>(K, K, st, K, q + off, 0, o + off);  // the read-out of the updated rows
      for (int i = 0; i < K; ++i) o[off + i] *= scale;
    }
  });
}

template <typename S>
void DeltaRule<S>::backward(S* dq, S* dk, S* dv, S* dbeta, S* dalpha, const S* dout, const S* q, const S* k,
                            const S* v, const S* beta, const S* alpha, const DeltaDims& m) {
  if (alpha)
    backward_impl<true>(dq, dk, dv, dbeta, dalpha, dout, q, k, v, beta, alpha, m);
  else
    backward_impl<false>(dq, dk, dv, dbeta, dalpha, dout, q, k, v, beta, alpha, m);
}

template <typename S>
template <bool Gated>
void DeltaRule<S>::backward_impl(S* dq, S* dk, S* dv, S* dbeta, S* dalpha, const S* dout, const S* q, const S* k,
                                 const S* v, const S* beta, const S* alpha, const DeltaDims& m) {
  const int T = m.T, H = m.H, K = m.K, C = chunks_of(T);
  const int64_t HK = static_cast<int64_t>(H) * K, KK = static_cast<int64_t>(K) * K;
  const S scale = S(1) / std::sqrt(static_cast<S>(K));
  parallel_for(m.B * H, parallel_pairs(m), [&](int p) {
    const int b = p / H, h = p % H;
    S* st = &states_[static_cast<int64_t>(p) * kChunk * KK];  // S_t of the chunk's positions
    S* ds = &ds_[static_cast<int64_t>(p) * KK];                // ∂loss/∂S_t
    S* wu = &vecs_[static_cast<int64_t>(p) * (2 * kChunk + 5) * K];  // per position of the chunk: w = S_{t−1} k, u = v − α w
    S* scaled = wu + 2 * kChunk * K;                                  // dout·K^−½
    S* dsk = scaled + K;                                              // ∂S_t k
    S* dsp = dsk + K;                                                 // Σ_j ∂S_t,ij S_{t−1},ij
    S* bu = dsp + K;                                                  // β u
    S* dw = bu + K;                                                   // ∂loss/∂w
    std::fill(ds, ds + KK, S(0));
    for (int c = C - 1; c >= 0; --c) {
      const int t0 = c * kChunk, t1 = std::min(T, t0 + kChunk);
      const S* start = &saved_[(static_cast<int64_t>(p) * C + c) * KK];
      for (int t = t0; t < t1; ++t) {  // the chunk's states again, as forward computed them, with w and u
        const int64_t row = static_cast<int64_t>(b) * T + t, off = row * HK + static_cast<int64_t>(h) * K;
        S* w = wu + 2 * (t - t0) * K;
        step<Gated>(st + (t - t0) * KK, t == t0 ? start : st + (t - t0 - 1) * KK, w, w + K, k + off, v + off,
                    beta[row * H + h], Gated ? alpha[row * H + h] : S(1), K);
      }
      for (int t = t1 - 1; t >= t0; --t) {
        const int64_t row = static_cast<int64_t>(b) * T + t, off = row * HK + static_cast<int64_t>(h) * K;
        const S* cur = st + (t - t0) * KK;
        const S* prev = t == t0 ? start : st + (t - t0 - 1) * KK;
        const S* kt = k + off;
        const S* w = wu + 2 * (t - t0) * K;  // S_{t−1} k
        const S* u = w + K;                  // v − α w
        const S bt = beta[row * H + h], at = Gated ? alpha[row * H + h] : S(1);
        // o = S_t q K^−½: ∂q = S_tᵀ dout K^−½ (rows in order), ∂S_t += dout K^−½ qᵀ
        for (int i = 0; i < K; ++i) scaled[i] = dout[off + i] * scale;
        readout_backward(K, cur, scaled, q + off, ds, dq + off);
        // S_t = α S_{t−1} + β u kᵀ, u = v − α S_{t−1} k
        fastmath::lane_dots<S>(K, K, ds, K, kt, 0, dsk);  // every row's, before any row of ∂S changes
        if constexpr (Gated) fastmath::lane_dots<S>(K, K, ds, K, prev, K, dsp);
        S d_beta = 0, d_alpha = 0;
        for (int i = 0; i < K; ++i) {
          const S r = dsk[i];  // (∂S_t k)_i
          const S du = bt * r;
          dw[i] = Gated ? -at * du : -du;
          d_beta += u[i] * r;
          if constexpr (Gated) d_alpha += dsp[i] - du * w[i];  // dsp_i = Σ_j ∂S_t,ij S_{t−1},ij
          dv[off + i] = du;
          bu[i] = bt * u[i];
        }
        update_backward<Gated>(K, ds, prev, kt, bu, dw, at, dk + off);
        dbeta[row * H + h] = d_beta;
        if constexpr (Gated) dalpha[row * H + h] = d_alpha;
      }
    }
  });
}

template class DeltaRule<float>;
template class DeltaRule<double>;

}  // namespace srbench::model
