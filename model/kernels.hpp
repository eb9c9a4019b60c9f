// What the kernels of layers.cpp and attention.cpp share (internal to model/): strided views,
// the choice of product (sgemm or Eigen's), the parallel threshold, exp for softmax, and the
// spline's grid with its per-chunk gradient sums.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "model/eigen_views.hpp"
#include "model/fastmath.hpp"
#include "model/layers.hpp"
#include "model/sgemm.hpp"

namespace srbench::model {

// A row-major matrix view whose rows are `stride` apart (a column slice of a wider matrix).
template <typename S>
using StridedR = Eigen::Map<MatR<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using StridedRC = Eigen::Map<const MatR<S>, 0, Eigen::OuterStride<>>;

// Below this many multiply-adds a loop runs on one thread (a parallel region costs more); the
// chunks and hence the results are the same either way.
constexpr int64_t kMinParallelWork = 1 << 16;

// The float products of the linear layers and of attention run on sgemm's kernel where the
// target has one (its results do not depend on how a product is split); double products (the
// gradient checks) and other targets on Eigen's.
template <typename S>
constexpr bool kUseSgemm = std::is_same_v<S, float> && kSgemmVectorised;

// General products of row-major operands (Eigen maps or blocks of them): Out = A·B, A·Bᵀ, Aᵀ·B,
// or with `accumulate` Out += them. Float on sgemm (each element one chain in index order, the same
// on every machine), double on Eigen's.
template <typename MO, typename MA, typename MB>
void product_ab(MO&& Out, const MA& A, const MB& B, bool accumulate = false) {
  using S = typename std::decay_t<MO>::Scalar;
  if constexpr (kUseSgemm<S>)
    sgemm(static_cast<int>(Out.rows()), static_cast<int>(Out.cols()), static_cast<int>(A.cols()),
          {A.data(), A.outerStride(), 1}, {B.data(), B.outerStride(), 1}, Out.data(), Out.outerStride(),
          accumulate ? GemmInit::kAccumulate : GemmInit::kZero);
  else if (accumulate)
    Out.noalias() += A * B;
  else
    Out.noalias() = A * B;
}
template <typename MO, typename MA, typename MB>
void product_abt(MO&& Out, const MA& A, const MB& B, bool accumulate = false) {
  using S = typename std::decay_t<MO>::Scalar;
  if constexpr (kUseSgemm<S>)
    sgemm(static_cast<int>(Out.rows()), static_cast<int>(Out.cols()), static_cast<int>(A.cols()),
          {A.data(), A.outerStride(), 1}, {B.data(), 1, B.outerStride()}, Out.data(), Out.outerStride(),
          accumulate ? GemmInit::kAccumulate : GemmInit::kZero);
  else if (accumulate)
    Out.noalias() += A * B.transpose();
  else
    Out.noalias() = A * B.transpose();
}
template <typename MO, typename MA, typename MB>
void product_atb(MO&& Out, const MA& A, const MB& B, bool accumulate = false) {
  using S = typename std::decay_t<MO>::Scalar;
  if constexpr (kUseSgemm<S>)
    sgemm(static_cast<int>(Out.rows()), static_cast<int>(Out.cols()), static_cast<int>(A.rows()),
          {A.data(), 1, A.outerStride()}, {B.data(), B.outerStride(), 1}, Out.data(), Out.outerStride(),
          accumulate ? GemmInit::kAccumulate : GemmInit::kZero);
  else if (accumulate)
    Out.noalias() += A.transpose() * B;
  else
    Out.noalias() = A.transpose() * B;
}

// exp of arguments <= 0 (softmax, GeLU', the loss): fastmath for float (vectorisable, the same
// bits whatever the alignment), libm for double.
template <typename S>
inline S exp_nonpositive_(S x) {
  if constexpr (std::is_same_v<S, float>) return fastmath::exp_nonpositive(x);
  else return std::exp(x);
}

// Where x falls on the spline: segment k, offset t = u − k (in [0, 1] inside the range; beyond
// it under linear extrapolation), and whether u was clamped (constant extrapolation).
template <typename S>
struct SplineAt {
  int k;
  S t;
  bool clamped;
};

template <typename S>
struct SplineGrid {
  S R, h;
  int K;
  bool linear;
  explicit SplineGrid(const SplineShape& sp)
      : R(static_cast<S>(sp.range)), h(static_cast<S>(2.0 * sp.range / (sp.keypoints - 1))), K(sp.keypoints),
        linear(sp.linear) {}

  SplineAt<S> at(S x) const {
    S u = (x + R) / h;
    bool clamped = false;
    if (!linear) {  // written so that a NaN stays NaN (and propagates)
      if (u < S(0)) u = S(0), clamped = true;
      else if (u > S(K - 1)) u = S(K - 1), clamped = true;
    }
    S f = std::floor(u);
    f = f >= S(0) ? f : S(0);           // NaN → 0: never an index out of range
    f = f <= S(K - 2) ? f : S(K - 2);
    return {static_cast<int>(f), u - f, clamped};
  }
  S value(const S* theta, const SplineAt<S>& a) const { return theta[a.k] + a.t * (theta[a.k + 1] - theta[a.k]); }
  S slope(const S* theta, const SplineAt<S>& a) const {
    return a.clamped ? S(0) : (theta[a.k + 1] - theta[a.k]) / h;
  }
};

// Per-chunk partial sums of the spline values' gradient: rows of K doubles, added to dvalues in
// row order (so the result does not depend on which thread computed which row).
inline std::vector<double>& spline_partials(int64_t rows, int K) {
  thread_local std::vector<double> p;
  const size_t need = static_cast<size_t>(rows) * static_cast<size_t>(K);
  if (p.size() < need) p.resize(need);
  std::fill(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(need), 0.0);
  return p;
}

template <typename S>
void add_partials(S* dvalues, const double* partial, int64_t rows, int K) {
  for (int k = 0; k < K; ++k) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += partial[r * K + k];
    dvalues[k] += static_cast<S>(s);
  }
}

}  // namespace srbench::model
