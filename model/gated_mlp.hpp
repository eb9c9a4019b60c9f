// The SwiGLU MLP of DeltaNet and GLA blocks (linear-rnn.md: fla's `GatedMLP` with
// `hidden_act: swish`), forward and backward (internal to model/). Input u and output (N, d):
//
//   out = W_down (SiLU(W_gate u) ⊙ (W_up u))     gate_proj, up_proj (I, d); down_proj (d, I); no biases
#pragma once

#include <cstdint>
#include <vector>

#include "model/memory.hpp"

namespace srbench::model {

template <typename S>
struct GatedMlpWeights {
  const S *gate, *up, *down;
};
template <typename S>
struct GatedMlpGrads {
  S *gate, *up, *down;
};

template <typename S>
class GatedMlp {
 public:
  // N rows of width d, hidden width I.
  void reserve(int64_t N, int d, int I, bool need_grads);
  CallMemory memory(int64_t N, int d, int I, bool need_grads) const;
  void forward(S* out, const S* u, const GatedMlpWeights<S>& w, int N, int d, int I);
  // du (N, d) overwritten; g += the weights' gradients.
  void backward(S* du, const GatedMlpGrads<S>& g, const S* dout, const S* u, const GatedMlpWeights<S>& w, int N,
                int d, int I);

 private:
  template <typename Self, typename F>
  static void buffers(Self& self, int64_t N, int d, int I, bool need_grads, F&& f);
  std::vector<S> gate_, up_, act_;        // (N, I): W_gate u, W_up u, SiLU(gate) ⊙ up
  std::vector<S> dact_, dgate_, dup_, du_;  // backward: (N, I) × 3, (N, d)
};

}  // namespace srbench::model
