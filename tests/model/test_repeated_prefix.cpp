// A causal transformer whose positions are only relative (rope, alibi, none, relative) computes the same
// vector at every position of a leading run of identical tokens: each attention output is a
// weighted mean of equal values, and the rest acts per position. So it gives `x x x ...` one
// prediction at every position of the run, which caps its accuracy on tasks whose state changes
// along such a run (parity's `1 1`, dyck depth's `( (`; docs/results.md, "Plateaus explained").
// Absolute positions (learned, sinusoidal) break the tie. Checked on a trained-looking (random)
// model in float64, so that "equal" means equal to rounding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "helpers.hpp"

using namespace srbench;

namespace {

// The largest difference between the logits at position 0 and those at positions 1..run-1 of a
// row that starts with `run` copies of one token and continues with other tokens.
double spread_over_run(model::Position pos, int run) {
  model::ModelConfig c = test::tiny_config(pos, model::Norm::Layer, model::Activation::Gelu);
  c.layers = 3;
  model::BasicModel<double> m(c);
  m.init(11);
  const int T = 8;
  std::vector<int32_t> tokens(T, 3), targets(T, -1);
  for (int t = run; t < T; ++t) tokens[t] = t % 2 == 0 ? 1 : 2;
  m.forward(tokens.data(), targets.data(), 1, T);
  const double* L = m.logits();
  double worst = 0;
  for (int t = 1; t < run; ++t)
    for (int v = 0; v < c.vocab; ++v) worst = std::max(worst, std::abs(L[t * c.vocab + v] - L[v]));
  return worst;
}

}  // namespace

TEST_CASE("relative positions: a leading run of one token gets one prediction at every position",
          "[relative][model][positions]") {
  for (const model::Position pos :
       {model::Position::Rope, model::Position::Alibi, model::Position::None, model::Position::Relative}) {
    INFO("position " << static_cast<int>(pos));
    CHECK(spread_over_run(pos, 5) < 1e-12);
  }
}

TEST_CASE("absolute positions: the same run gets different predictions", "[model][positions]") {
  for (const model::Position pos : {model::Position::Learned, model::Position::Sinusoidal}) {
    INFO("position " << static_cast<int>(pos));
    CHECK(spread_over_run(pos, 5) > 1e-4);
  }
}
