// Sums over a state's rows, one per column, kept in registers a block of columns at a time
// (internal to model/: the scans of delta_rule.cpp and gla_scan.cpp).
//
// A scan often accumulates, for every column j, a sum over the rows i of a matrix in the order of
// i (out_j = Σ_i a_i·X_ij). Done row by row, the running sums live in memory: a store and a load
// per row and column, a chain of store-to-load forwarding as long as the rows. Done a block of
// kCols columns at a time over all rows, the block's sums stay in a register. Every column's sum
// is the same additions in the same order either way; only independent columns are reordered, so
// the numbers do not change.
#pragma once

#include <type_traits>

namespace srbench::model {

constexpr int kCols = 16;

// kCols values as one GCC vector (one AVX-512 register of floats, two AVX2 ones): arithmetic on it
// is each element's scalar arithmetic (contraction off, as everywhere).
template <typename S>
struct ColsOf;
template <>
struct ColsOf<float> {
  typedef float type __attribute__((vector_size(kCols * sizeof(float))));
};
template <>
struct ColsOf<double> {
  typedef double type __attribute__((vector_size(kCols * sizeof(double))));
};
template <typename S>
using Cols = typename ColsOf<S>::type;

template <typename S>
inline Cols<S> load_cols(const S* p) {
  Cols<S> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <typename S>
inline void store_cols(S* p, Cols<S> v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// A sweep's body is written once, on a type X that is either a block of columns (Cols<S>) or one
// column (S); load_as / store_as read and write an X at a pointer, and for_columns runs the body
// on every full block of kCols columns of n, then on each column of the tail:
//   for_columns<S>(n, [&]<typename X>(int j0) { X acc = {}; ...; store_as(out + j0, acc); });
// A scalar times an X is the scalar times each of its elements, so both instances make the same
// additions in the same order per column.
template <typename X, typename S>
inline X load_as(const S* p) {
  if constexpr (std::is_same_v<X, S>) return *p;
  else return load_cols(p);
}
template <typename S, typename X>
inline void store_as(S* p, X v) {
  if constexpr (std::is_same_v<X, S>) *p = v;
  else store_cols(p, v);
}
template <typename S, typename Body>
inline void for_columns(int n, Body&& body) {
  int j0 = 0;
  for (; j0 + kCols <= n; j0 += kCols) body.template operator()<Cols<S>>(j0);
  for (; j0 < n; ++j0) body.template operator()<S>(j0);
}

}  // namespace srbench::model
