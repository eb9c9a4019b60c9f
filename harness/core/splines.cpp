#include "harness/core/splines.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "model/params.hpp"
#include "tasks/rng.hpp"

namespace srbench::harness {

std::vector<SplineTensor> spline_layout(const model::ModelConfig& cfg) {
  std::vector<SplineTensor> out;
  const model::ParamLayout layout(cfg);
  for (const auto& p : layout.tensors()) {
    if (p.spline == model::SplineSite::None) continue;
    const model::SplineConfig& sc = p.spline == model::SplineSite::Mlp ? cfg.mlp_spline : cfg.attn_spline;
    SplineTensor t;
    t.name = p.name;
    t.keypoints = sc.keypoints;
    t.range = sc.range;
    t.extrapolate = model::to_string(sc.extrapolate);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<SplineTensor> model_splines(const model::Model& m) {
  std::vector<SplineTensor> out = spline_layout(m.config());
  for (auto& t : out) {
    const auto v = m.param(t.name);
    t.values.assign(v.begin(), v.end());
  }
  return out;
}

std::string splines_mismatch(const std::vector<SplineTensor>& given, const model::ModelConfig& cfg) {
  const std::vector<SplineTensor> want = spline_layout(cfg);
  auto names = [](const std::vector<SplineTensor>& v) {
    std::string s;
    for (const auto& t : v) s += (s.empty() ? "" : ", ") + t.name;
    return s.empty() ? std::string("none") : s;
  };
  if (want.empty()) return "the model has no splines (set activation: spline or a spline attention)";
  for (const auto& g : given) {
    bool known = false;
    for (const auto& w : want) known = known || w.name == g.name;
    if (!known) return "it holds the splines " + names(given) + " but the model has " + names(want);
  }
  for (const auto& w : want) {
    const SplineTensor* found = nullptr;
    for (const auto& g : given)
      if (g.name == w.name) found = &g;
    if (!found) return "it holds the splines " + names(given) + " but the model has " + names(want);
    const SplineTensor& g = *found;
    if (g.keypoints != w.keypoints || static_cast<int64_t>(g.values.size()) != w.keypoints)
      return g.name + " has " + std::to_string(g.values.size()) + " keypoints but the model's has " +
             std::to_string(w.keypoints);
    if (g.range != w.range)
      return g.name + " has range " + std::to_string(g.range) + " but the model's has range " + std::to_string(w.range);
    if (g.extrapolate != w.extrapolate)
      return g.name + " extrapolates '" + g.extrapolate + "' but the model's '" + w.extrapolate + "'";
  }
  return "";
}

std::vector<SplineTensor> randomise_splines(const std::vector<SplineTensor>& searched,
                                            const std::vector<SplineTensor>& initial, uint64_t key, uint64_t run_seed) {
  std::vector<SplineTensor> out = searched;
  for (size_t i = 0; i < out.size(); ++i) {
    SplineTensor& t = out[i];
    const auto twin = std::find_if(initial.begin(), initial.end(), [&](const SplineTensor& x) { return x.name == t.name; });
    if (twin == initial.end() || twin->values.size() != t.values.size())
      throw std::invalid_argument("randomise_splines: " + t.name + " has no initial values of its size");
    const size_t K = t.values.size();
    if (K == 0) continue;
    // orthonormal DCT-II of δ, signs flipped, inverse (DCT-III), in double
    std::vector<double> delta(K), coef(K, 0.0);
    for (size_t k = 0; k < K; ++k) delta[k] = static_cast<double>(t.values[k]) - static_cast<double>(twin->values[k]);
    auto basis = [K](size_t j, size_t k) {
      const double a = j == 0 ? std::sqrt(1.0 / static_cast<double>(K)) : std::sqrt(2.0 / static_cast<double>(K));
      return a * std::cos(std::numbers::pi * static_cast<double>(j) * (static_cast<double>(k) + 0.5) / static_cast<double>(K));
    };
    for (size_t j = 0; j < K; ++j) {
      for (size_t k = 0; k < K; ++k) coef[j] += basis(j, k) * delta[k];
      if (tasks::hash_words({key, run_seed, i, j}) & 1) coef[j] = -coef[j];
    }
    for (size_t k = 0; k < K; ++k) {
      double d = 0;
      for (size_t j = 0; j < K; ++j) d += basis(j, k) * coef[j];
      t.values[k] = static_cast<float>(static_cast<double>(twin->values[k]) + d);
    }
  }
  return out;
}

void set_model_splines(model::Model& m, const std::vector<SplineTensor>& splines) {
  const std::string why = splines_mismatch(splines, m.config());
  if (!why.empty()) throw std::runtime_error(why);
  for (const auto& t : splines) {
    auto v = m.param(t.name);
    std::copy(t.values.begin(), t.values.end(), v.begin());
  }
}

}  // namespace srbench::harness
