// The reference GEMM rate of performance.md: Eigen's float product with Eigen's own vector code,
// as a user of Eigen gets it. srbench itself is built with EIGEN_DONT_VECTORIZE (CMakeLists.txt:
// Eigen's packet reductions sum in an order that follows the vector width), which makes Eigen's
// products scalar — 8–11 GFLOP/s on an AVX-512 core instead of about 200 — so this program is
// built in its own directory without that definition and links nothing of srbench's.
//
//   bench_eigen --gemm     gflops= of a 512×512×512 product, one thread (median of 15)
//   bench_eigen --shapes   the linear layers' products of S, M and L (forward, input gradient,
//                          weight gradient), GFLOP/s; bench_model --shapes times them on sgemm
#ifdef EIGEN_DONT_VECTORIZE
#error "bench_eigen must be built with Eigen's vector code (bench/eigen/CMakeLists.txt)"
#endif

// GCC 12's false -Wmaybe-uninitialized warnings inside Eigen's AVX-512 product code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <Eigen/Core>
#if defined(__SSE2__) && !defined(EIGEN_VECTORIZE)
#error "Eigen is not using its vector code here: the rate would be its scalar product's"
#endif

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/gemm_shapes.hpp"

namespace {

using srbench::bench::GemmShape;

void print_gemm_rate() {
  const int n = srbench::bench::kGemmN;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  const double eigen = srbench::bench::gemm_gflops([&] { c.noalias() = a * b; });
  std::fprintf(stderr, "%g\n", c(0, 0));  // keep the product
  std::printf("%s\ngflops=%.2f\n", Eigen::SimdInstructionSetsInUse(), eigen);
}

void print_shapes() {
  using MatR = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Map = Eigen::Map<MatR>;
  using srbench::bench::ShapeOperands;
  const std::string kernel = std::string("Eigen (") + Eigen::SimdInstructionSetsInUse() + ")";
  srbench::bench::print_shape_table(kernel.c_str(), [](const GemmShape& sh, ShapeOperands& o) {
    const int N = sh.rows, K = sh.in, OC = sh.out;
    Map X(o.x.data(), N, K), W(o.w.data(), OC, K), Y(o.y.data(), N, OC), DY(o.dy.data(), N, OC),
        DX(o.dx.data(), N, K), DW(o.dw.data(), OC, K);
    return std::array<double, 3>{srbench::bench::shape_gflops(sh, [&] { Y.noalias() = X * W.transpose(); }),
                                 srbench::bench::shape_gflops(sh, [&] { DX.noalias() = DY * W; }),
                                 srbench::bench::shape_gflops(sh, [&] { DW.noalias() += DY.transpose() * X; })};
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && !std::strcmp(argv[1], "--gemm")) {
    print_gemm_rate();
    return 0;
  }
  if (argc == 2 && !std::strcmp(argv[1], "--shapes")) {
    print_shapes();
    return 0;
  }
  std::fprintf(stderr, "usage: bench_eigen --gemm | --shapes\n");
  return 2;
}
