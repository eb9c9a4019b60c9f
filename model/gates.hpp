// SiLU and softplus with their derivatives, for the linear-recurrent mixers (internal to model/):
// σ from recurrent_kernels.hpp and softplus from fastmath in float (the same bits in a vectorised
// loop and its remainder, on every machine), libm in double (the tests' reference precision).
// Always inlined: a call per element keeps the mixers' elementwise loops from being vectorised
// (softplus alone had been 15% of a mamba step).
#pragma once

#include <cmath>
#include <type_traits>

#include "model/fastmath.hpp"
#include "model/recurrent_kernels.hpp"

namespace srbench::model::gates {

using recurrent::sigmoid_;

template <typename S>
[[gnu::always_inline]] inline S silu(S v) {
  return v * sigmoid_(v);
}
// d SiLU / dv = σ(v)·(1 + v·(1 − σ(v)))
template <typename S>
[[gnu::always_inline]] inline S silu_grad(S v) {
  const S s = sigmoid_(v);
  return s * (S(1) + v * (S(1) - s));
}
// softplus(v) = log(1 + e^v), v for v > 20 (PyTorch's threshold); its derivative σ(v) (1 above 20).
template <typename S>
[[gnu::always_inline]] inline S softplus(S v) {
  if constexpr (std::is_same_v<S, float>) return fastmath::softplus(v);
  else return v > S(20) ? v : std::log1p(std::exp(v));
}
template <typename S>
[[gnu::always_inline]] inline S softplus_grad(S v) {
  return v > S(20) ? S(1) : sigmoid_(v);
}

}  // namespace srbench::model::gates
