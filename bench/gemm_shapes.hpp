// What bench_model (our kernel, model/sgemm) and bench_eigen (Eigen's product with its own vector
// code) both time: the 512³ product of the GEMM rate and the linear layers' products of S, M and
// L (performance.md). One list, so that the two columns of `--shapes` are the same products.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace srbench::bench {

constexpr int kGemmN = 512;

// One row chunk of a configuration's linear layer (half of batch × T rows, at least 256).
struct GemmShape {
  const char* name;
  int rows, in, out;
};
inline const GemmShape kGemmShapes[] = {
    {"S qkv", 512, 64, 192},   {"S fc1", 512, 64, 256},   {"S fc2", 512, 256, 64},
    {"M qkv", 1024, 128, 384}, {"M o", 1024, 128, 128},   {"M fc1", 1024, 128, 512},
    {"M fc2", 1024, 512, 128}, {"L fc1", 1024, 256, 1024}, {"L fc2", 1024, 1024, 256}};

// GFLOP/s of a kGemmN³ product, one thread: the median of 15 after 3 warm-up products.
template <typename F>
double gemm_gflops(F&& product) {
  const double n = kGemmN;
  std::vector<double> rates;
  for (int r = 0; r < 18; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    product();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= 3) rates.push_back(2.0 * n * n * n / std::chrono::duration<double>(t1 - t0).count() * 1e-9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// GFLOP/s of one of a shape's products (flops = 2·rows·in·out), the best of 7 × 5.
template <typename F>
double shape_gflops(const GemmShape& sh, F&& product) {
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) product();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 5);
  }
  return 2.0 * sh.rows * sh.in * sh.out / best * 1e-9;
}

// A shape's row-major operands, x (rows × in), W (out × in) and dY (rows × out) drawn from
// N(0, 1), and the products' outputs y, dX and dW.
struct ShapeOperands {
  std::vector<float> x, w, dy, y, dx, dw;
};

// The table of `--shapes`: a header naming the kernel, then per shape the GFLOP/s of its three
// products (y = x·Wᵀ, dX = dY·W, dW += dYᵀ·X) as rates(shape, operands) returns them.
template <typename F>
void print_shape_table(const char* kernel, F&& rates) {
  std::mt19937 gen(1);
  std::normal_distribution<float> nd;
  std::printf("GFLOP/s, 1 thread, best of 7 x 5 products: %s\n", kernel);
  std::printf("%-7s%7s%5s%5s %10s %10s %13s\n", "shape", "rows", "in", "out", "y = x.W^T", "dX = dY.W", "dW += dY^T.X");
  for (const GemmShape& sh : kGemmShapes) {
    const size_t N = sh.rows, K = sh.in, OC = sh.out;
    ShapeOperands o{std::vector<float>(N * K), std::vector<float>(OC * K), std::vector<float>(N * OC),
                    std::vector<float>(N * OC), std::vector<float>(N * K), std::vector<float>(OC * K)};
    for (auto* v : {&o.x, &o.w, &o.dy})
      for (float& e : *v) e = nd(gen);
    const std::array<double, 3> r = rates(sh, o);
    std::printf("%-7s%7d%5d%5d %10.0f %10.0f %13.0f\n", sh.name, sh.rows, sh.in, sh.out, r[0], r[1], r[2]);
  }
}

}  // namespace srbench::bench
