// The SwiGLU MLP (gated_mlp.hpp).
#include "model/gated_mlp.hpp"

#include "model/buffers.hpp"
#include "model/gates.hpp"
#include "model/layers.hpp"

namespace srbench::model {

template <typename S>
template <typename Self, typename F>
void GatedMlp<S>::buffers(Self& self, int64_t N, int d, int I, bool need_grads, F&& f) {
  f(self.gate_, N * I, Role::Saved), f(self.up_, N * I, Role::Saved), f(self.act_, N * I, Role::Saved);
  if (!need_grads) return;
  f(self.dact_, N * I, Role::Scratch), f(self.dgate_, N * I, Role::Scratch), f(self.dup_, N * I, Role::Scratch);
  f(self.du_, N * d, Role::Scratch);
}

template <typename S>
void GatedMlp<S>::reserve(int64_t N, int d, int I, bool need_grads) {
  buffers(*this, N, d, I, need_grads, GrowBuffer{});
}

template <typename S>
CallMemory GatedMlp<S>::memory(int64_t N, int d, int I, bool need_grads) const {
  CallMemory c;
  buffers(*this, N, d, I, need_grads, CountBuffer{&c});
  return c;
}

template <typename S>
void GatedMlp<S>::forward(S* out, const S* u, const GatedMlpWeights<S>& w, int N, int d, int I) {
  matmul_forward(gate_.data(), u, w.gate, static_cast<const S*>(nullptr), N, d, I);
  matmul_forward(up_.data(), u, w.up, static_cast<const S*>(nullptr), N, d, I);
  const int64_t n = static_cast<int64_t>(N) * I;
  for (int64_t i = 0; i < n; ++i) act_[i] = gates::silu(gate_[i]) * up_[i];
  matmul_forward(out, act_.data(), w.down, static_cast<const S*>(nullptr), N, I, d);
}

template <typename S>
void GatedMlp<S>::backward(S* du, const GatedMlpGrads<S>& g, const S* dout, const S* u, const GatedMlpWeights<S>& w,
                           int N, int d, int I) {
  matmul_backward(dact_.data(), g.down, static_cast<S*>(nullptr), dout, act_.data(), w.down, N, I, d);
  const int64_t n = static_cast<int64_t>(N) * I;
  for (int64_t i = 0; i < n; ++i) {
    dgate_[i] = dact_[i] * up_[i] * gates::silu_grad(gate_[i]);
    dup_[i] = dact_[i] * gates::silu(gate_[i]);
  }
  matmul_backward(du, g.gate, static_cast<S*>(nullptr), dgate_.data(), u, w.gate, N, d, I);
  matmul_backward(du_.data(), g.up, static_cast<S*>(nullptr), dup_.data(), u, w.up, N, d, I);
  const int64_t nd = static_cast<int64_t>(N) * d;
  for (int64_t i = 0; i < nd; ++i) du[i] += du_[i];
}

template class GatedMlp<float>;
template class GatedMlp<double>;

}  // namespace srbench::model
