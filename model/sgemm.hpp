// sgemm (internal to model/): the float32 matrix product of the linear layers, a register-blocked
// kernel for the thin shapes of small transformers (inner dimension 64–512, a few thousand rows).
//
// Every element is one chain of fused multiply-adds in the order of the inner index,
//     c = init;  for p = 0 … k−1:  c = fma(A(i,p), B(p,j), c)
// whatever the blocking, the vector width or the number of threads: the result equals
// sgemm_reference() bit for bit (tested), and does not depend on how a caller splits the product.
#pragma once

#include <cstdint>

namespace srbench::model {

// A general strided operand: element (i, p) is at data[i·row_stride + p·col_stride].
struct StridedOperand {
  const float* data;
  int64_t row_stride, col_stride;
};

// Where each element's chain starts: the current C (accumulate), zero, or a row vector init[j].
enum class GemmInit { kAccumulate, kZero, kRow };

// C (m×n, row-major, row stride ldc) = init + A·B, A m×k, B k×n (both StridedOperand).
// `row` is the row vector of GemmInit::kRow (n values), else unused. With a_lower the caller
// promises A(i, p) = 0 for p > i (a causal attention matrix): sgemm then skips whole register
// tiles of those zeros, which leaves every sum unchanged.
void sgemm(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc, GemmInit init,
           const float* row = nullptr, bool a_lower = false);

// The same products as plain loops (the specification of sgemm, and its test reference).
void sgemm_reference(int m, int n, int k, StridedOperand A, StridedOperand B, float* C, int64_t ldc,
                     GemmInit init, const float* row = nullptr);

// The kernel model/sgemm.cpp was compiled with, the one sgemm runs: AVX-512, AVX2 + FMA, or the
// plain loops of sgemm_reference. A test of a vector kernel asserts that it is the one built.
enum class SgemmKernel { kReference, kAvx2, kAvx512 };
SgemmKernel sgemm_kernel();
inline const char* to_string(SgemmKernel k) {
  switch (k) {
    case SgemmKernel::kReference: return "reference";
    case SgemmKernel::kAvx2: return "avx2";
    case SgemmKernel::kAvx512: return "avx512";
  }
  return "?";
}

// True when sgemm runs the vector kernel (the target has AVX-512, or AVX2 with FMA); otherwise sgemm
// is the plain loop, and callers use Eigen's product instead.
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
inline constexpr bool kSgemmVectorised = true;
#else
inline constexpr bool kSgemmVectorised = false;
#endif

}  // namespace srbench::model
