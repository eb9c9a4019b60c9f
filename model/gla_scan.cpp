// The gated linear attention recurrence (gla_scan.hpp): forward, and backward through one chunk of
// recomputed states at a time.
#include "model/gla_scan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/buffers.hpp"
#include "model/column_block.hpp"
#include "model/lane_dots.hpp"
#include "model/parallel.hpp"

namespace srbench::model {
namespace {

int chunks_of(int T) { return (T + GlaScan<float>::kChunk - 1) / GlaScan<float>::kChunk; }

// One step of one (sequence, head), transposed state (row j = column j of S): cur_j = α_j prev_j +
// k_j v. cur may be prev (in place). With `o` (not null) also o = S_t q, summed over the rows in
// order, a block of columns at a time in registers (column_block.hpp).
template <typename S>
inline void step(S* cur, const S* prev, const S* __restrict k, const S* __restrict v, const S* __restrict alpha,
                 int K, int V, S* __restrict o = nullptr, const S* __restrict q = nullptr) {
  if (!o) {
    for (int j = 0; j < K; ++j) {
      const S* p = prev + static_cast<int64_t>(j) * V;
      S* c = cur + static_cast<int64_t>(j) * V;
      const S a = alpha ? alpha[j] : S(1), kj = k[j];
      for (int i = 0; i < V; ++i) c[i] = a * p[i] + kj * v[i];
    }
    return;
  }
  for_columns<S>(V, [&]<typename X>(int i0) {
    X acc = {};
    const X vb = load_as<X>(v + i0);
    for (int j = 0; j < K; ++j) {
      const int64_t at = static_cast<int64_t>(j) * V + i0;
      const S a = alpha ? alpha[j] : S(1), kj = k[j];
      const X c = a * load_as<X>(prev + at) + kj * vb;
      store_as(cur + at, c);
      acc += q[j] * c;
    }
    store_as(o + i0, acc);
  });
}

// ∂S_t += dout K^−½ qᵀ (s = dout·K^−½), then dv = ∂S_t k, summed over the rows in order, a block
// of columns at a time in registers.
template <typename S>
inline void update_backward(int K, int V, S* __restrict ds, const S* __restrict q, const S* __restrict k,
                            const S* __restrict s, S* __restrict dv) {
  for_columns<S>(V, [&]<typename X>(int i0) {
    X acc = {};
    const X sb = load_as<X>(s + i0);
    for (int j = 0; j < K; ++j) {
      const int64_t at = static_cast<int64_t>(j) * V + i0;
      const X dj = load_as<X>(ds + at) + q[j] * sb;
      store_as(ds + at, dj);
      acc += k[j] * dj;
    }
    store_as(dv + i0, acc);
  });
}

// Pairs of (sequence, head) worth a parallel region.
bool parallel_pairs(const GlaDims& m) {
  return m.B * m.H > 1 && static_cast<int64_t>(m.B) * m.H * m.T * m.K * m.V >= (1 << 15);
}

}  // namespace

template <typename S>
template <typename Self, typename F>
void GlaScan<S>::buffers(Self& self, const GlaDims& m, bool need_grads, F&& f) {
  const int64_t P = static_cast<int64_t>(m.B) * m.H, KV = static_cast<int64_t>(m.K) * m.V;
  f(self.saved_, P * chunks_of(m.T) * KV, Role::Saved);
  f(self.run_, P * KV, Role::Saved);
  if (!need_grads) return;
  f(self.states_, P * kChunk * KV, Role::Scratch);
  f(self.ds_, P * KV, Role::Scratch);
  f(self.vecs_, P * m.V, Role::Scratch);
}

template <typename S>
void GlaScan<S>::reserve(const GlaDims& m, bool need_grads) {
  buffers(*this, m, need_grads, GrowBuffer{});
}

template <typename S>
CallMemory GlaScan<S>::memory(const GlaDims& m, bool need_grads) const {
  CallMemory c;
  buffers(*this, m, need_grads, CountBuffer{&c});
  return c;
}

template <typename S>
void GlaScan<S>::forward(S* o, const S* q, const S* k, const S* v, const S* alpha, const GlaDims& m) {
  const int T = m.T, H = m.H, K = m.K, V = m.V, C = chunks_of(T);
  const int64_t HK = static_cast<int64_t>(H) * K, HV = static_cast<int64_t>(H) * V, KV = static_cast<int64_t>(K) * V;
  const S scale = S(1) / std::sqrt(static_cast<S>(K));
  parallel_for(m.B * H, parallel_pairs(m), [&](int p) {
    const int b = p / H, h = p % H;
    S* st = &run_[static_cast<int64_t>(p) * KV];
    std::fill(st, st + KV, S(0));
    for (int t = 0; t < T; ++t) {
      if (t % kChunk == 0) std::memcpy(&saved_[(static_cast<int64_t>(p) * C + t / kChunk) * KV], st, sizeof(S) * KV);
      const int64_t row = static_cast<int64_t>(b) * T + t;
      const int64_t ok = row * HK + static_cast<int64_t>(h) * K, ov = row * HV + static_cast<int64_t>(h) * V;
      step(st, st, k + ok, v + ov, alpha ? alpha + ok : nullptr, K, V, o + ov, q + ok);
      for (int i = 0; i < V; ++i) o[ov + i] *= scale;
    }
  });
}

template <typename S>
void GlaScan<S>::backward(S* dq, S* dk, S* dv, S* dalpha, const S* dout, const S* q, const S* k, const S* v,
                          const S* alpha, const GlaDims& m) {
  const int T = m.T, H = m.H, K = m.K, V = m.V, C = chunks_of(T);
  const int64_t HK = static_cast<int64_t>(H) * K, HV = static_cast<int64_t>(H) * V, KV = static_cast<int64_t>(K) * V;
  const S scale = S(1) / std::sqrt(static_cast<S>(K));
  parallel_for(m.B * H, parallel_pairs(m), [&](int p) {
    const int b = p / H, h = p % H;
    S* st = &states_[static_cast<int64_t>(p) * kChunk * KV];  // S_t of the chunk's positions
    S* ds = &ds_[static_cast<int64_t>(p) * KV];                // ∂loss/∂S_t (transposed, as S)
    S* scaled = &vecs_[static_cast<int64_t>(p) * V];           // dout·K^−½
    std::fill(ds, ds + KV, S(0));
    for (int c = C - 1; c >= 0; --c) {
      const int t0 = c * kChunk, t1 = std::min(T, t0 + kChunk);
      const S* start = &saved_[(static_cast<int64_t>(p) * C + c) * KV];
      for (int t = t0; t < t1; ++t) {  // the chunk's states again, as forward computed them
        const int64_t row = static_cast<int64_t>(b) * T + t;
        const int64_t ok = row * HK + static_cast<int64_t>(h) * K, ov = row * HV + static_cast<int64_t>(h) * V;
        step(st + (t - t0) * KV, t == t0 ? start : st + (t - t0 - 1) * KV, k + ok, v + ov,
             alpha ? alpha + ok : nullptr, K, V);
      }
      for (int t = t1 - 1; t >= t0; --t) {
        const int64_t row = static_cast<int64_t>(b) * T + t;
        const int64_t ok = row * HK + static_cast<int64_t>(h) * K, ov = row * HV + static_cast<int64_t>(h) * V;
        const S* cur = st + (t - t0) * KV;
        const S* prev = t == t0 ? start : st + (t - t0 - 1) * KV;
        // o = S_t q K^−½: ∂q_j = Σ_i S_t,ij dout_i K^−½, ∂S_t += dout K^−½ qᵀ
        for (int i = 0; i < V; ++i) scaled[i] = dout[ov + i] * scale;
        fastmath::lane_dots<S>(K, V, cur, V, scaled, 0, dq + ok);  // ∂q_j = S_t,·j · dout K^−½, every j
        // S_t = S_{t−1} diag(α) + v kᵀ: ∂v = ∂S_t k, ∂k_j = ∂S_t,·j · v, ∂α_j = ∂S_t,·j · S_{t−1},·j,
        // ∂S_{t−1},·j = α_j ∂S_t,·j (the dot products of all j at once, between the update and the decay)
        update_backward(K, V, ds, q + ok, k + ok, scaled, dv + ov);
        fastmath::lane_dots<S>(K, V, ds, V, v + ov, 0, dk + ok);
        if (alpha) {
          fastmath::lane_dots<S>(K, V, ds, V, prev, V, dalpha + ok);
          for (int j = 0; j < K; ++j) {
            S* dj = ds + static_cast<int64_t>(j) * V;
            const S a = alpha[ok + j];
            for (int i = 0; i < V; ++i) dj[i] *= a;
          }
        }
      }
    }
  });
}

template class GlaScan<float>;
template class GlaScan<double>;

}  // namespace srbench::model
