// The SwiGLU MLP (model/gated_mlp.hpp) against its equation computed directly, and its backward
// against central finite differences on every weight and input element.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "model/gated_mlp.hpp"

using srbench::model::GatedMlp;

TEST_CASE("gated mlp: forward equals W_down (SiLU(W_gate u) * W_up u); backward equals finite differences",
          "[deltanet][gradients]") {
  const int N = 7, d = 5, I = 6;
  std::mt19937 gen(3);
  std::normal_distribution<double> n01;
  auto fill = [&](int64_t n, double s) {
    std::vector<double> v(n);
    for (auto& e : v) e = s * n01(gen);
    return v;
  };
  std::vector<double> gate = fill(I * d, 0.8), up = fill(I * d, 0.8), down = fill(d * I, 0.6), u = fill(N * d, 1.0),
                      wts = fill(N * d, 1.0);
  GatedMlp<double> mlp;
  mlp.reserve(N, d, I, true);
  std::vector<double> out(N * d);
  auto run = [&] {
    mlp.forward(out.data(), u.data(), {gate.data(), up.data(), down.data()}, N, d, I);
    double s = 0;
    for (int i = 0; i < N * d; ++i) s += out[i] * wts[i];
    return s;
  };
  run();
  double largest = 0, worst = 0;
  for (int r = 0; r < N; ++r)
    for (int o = 0; o < d; ++o) {
      double y = 0;
      for (int h = 0; h < I; ++h) {
        double a = 0, b = 0;
        for (int c = 0; c < d; ++c) a += gate[h * d + c] * u[r * d + c], b += up[h * d + c] * u[r * d + c];
        y += down[o * I + h] * (a / (1 + std::exp(-a))) * b;
      }
      worst = std::max(worst, std::abs(y - out[r * d + o])), largest = std::max(largest, std::abs(y));
    }
  CHECK(largest > 0.1);
  CHECK(worst <= 1e-13 * largest);
  std::vector<double> dg(gate.size()), dup(up.size()), dd(down.size()), du(u.size());
  mlp.backward(du.data(), {dg.data(), dup.data(), dd.data()}, wts.data(), u.data(), {gate.data(), up.data(), down.data()},
               N, d, I);
  const double h = 1e-6;
  for (auto [x, g] : {std::pair{&gate, &dg}, {&up, &dup}, {&down, &dd}, {&u, &du}})
    for (size_t i = 0; i < x->size(); ++i) {
      const double x0 = (*x)[i];
      (*x)[i] = x0 + h;
      const double plus = run();
      (*x)[i] = x0 - h;
      const double minus = run();
      (*x)[i] = x0;
      const double fd = (plus - minus) / (2 * h);
      CHECK(std::abs((*g)[i] - fd) <= 1e-7 + 1e-6 * std::abs(fd));
    }
}
