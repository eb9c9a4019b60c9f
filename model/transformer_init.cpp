// model.md's init of the transformer (transformer.hpp), and the spline values' initial
// functions (model.hpp, spline_init_values).
#include <algorithm>
#include <cmath>
#include <string>

#include "model/model.hpp"
#include "model/init_random.hpp"
#include "model/transformer.hpp"

namespace srbench::model {

std::vector<double> spline_init_values(const SplineConfig& sc, SplineInit init) {
  const int K = sc.keypoints;
  const double R = sc.range, h = sc.step();
  std::vector<double> v(static_cast<size_t>(K));
  for (int k = 0; k < K; ++k) {
    const double x = -R + k * h;
    double y = 0;
    switch (init) {
      case SplineInit::Gelu: y = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); break;
      case SplineInit::Relu: y = x > 0 ? x : 0.0; break;
      case SplineInit::Identity: y = x; break;
      case SplineInit::Exp: y = std::exp(x); break;
      case SplineInit::Elu1: y = x > 0 ? x + 1.0 : std::exp(x); break;
      case SplineInit::Zero: y = 0.0; break;
    }
    v[static_cast<size_t>(k)] = y;
  }
  return v;
}

namespace {

// A LIMe router W_l (rows H, cols (l+1)·H), model.md: `uniform` U(−a, a) with a = √(3/fan_in),
// fan_in = cols, drawn row-major from `rng`'s uniforms; `identity` zeros. Then the current
// layer's block (the last H columns) is set to the identity.
template <typename S>
void init_router(S* x, int64_t rows, int64_t cols, bool uniform, InitRandom& rng) {
  const double a = std::sqrt(3.0 / static_cast<double>(cols));
  for (int64_t e = 0; e < rows * cols; ++e) x[e] = uniform ? static_cast<S>(a * (2.0 * rng.uniform() - 1.0)) : S(0);
  for (int64_t i = 0; i < rows; ++i) {
    S* row = x + i * cols + (cols - rows);
    std::fill(row, row + rows, S(0));
    row[i] = S(1);
  }
}

}  // namespace

template <typename S>
void Transformer<S>::init(S* params, uint64_t seed) const {
  // One generator, tensors in layout order (init_random.hpp).
  InitRandom rng(seed);
  const double std_resid = 0.02 / std::sqrt(2.0 * cfg_.layers);
  for (const auto& p : layout_.tensors()) {
    S* x = params + p.offset;
    const bool is_norm = ends_with(p.name, "ln1.weight") || ends_with(p.name, "ln2.weight") ||
                         p.name == "ln_f.weight";
    // Transformer-XL's u and v: not decayed like biases, but drawn N(0, 0.02) (chomsky.md §7.3)
    const bool is_relative_bias = ends_with(p.name, "attn.rel.u") || ends_with(p.name, "attn.rel.v");
    if (p.group == ParamGroup::Router) {
      init_router(x, p.shape[0], p.shape[1], cfg_.lime_init == "uniform", rng);
    } else if (p.spline != SplineSite::None) {  // deterministic: no random numbers drawn
      const auto v = p.spline == SplineSite::Mlp ? spline_init_values(cfg_.mlp_spline, cfg_.mlp_init())
                                                 : spline_init_values(cfg_.attn_spline, cfg_.attn_init());
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(v[i]);
    } else if (is_norm) {
      std::fill(x, x + p.size, S(1));
    } else if (!p.decay && !is_relative_bias) {  // biases
      std::fill(x, x + p.size, S(0));
    } else {
      const double sd = ends_with(p.name, "attn.o.weight") || ends_with(p.name, "mlp.proj.weight") ? std_resid : 0.02;
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(sd * rng.normal());
    }
  }
}

template <typename S>
void BasicModel<S>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), S(0));
}

template void Transformer<float>::init(float*, uint64_t) const;
template void Transformer<double>::init(double*, uint64_t) const;

}  // namespace srbench::model
