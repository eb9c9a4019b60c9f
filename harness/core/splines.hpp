// The splines of a model as named tensors (harness.md: splines/<param name>), and whether a set
// of them fits a model config. Pure functions on configs and models: the suite stage checks a
// search's splines against its stage-2 models, the sweep checks a splines file, the run stage
// loads them.
#pragma once

#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "model/model.hpp"

namespace srbench::harness {

// The spline tensors of a config, in layout order, values empty: their names, keypoints,
// range and extrapolation.
std::vector<SplineTensor> spline_layout(const model::ModelConfig& cfg);

// The same with the model's current values.
std::vector<SplineTensor> model_splines(const model::Model& m);

// "" when `given` fits the config exactly (the same spline names, in any order, each with the
// config's keypoints, range and extrapolation); otherwise why not, naming the first
// difference.
std::string splines_mismatch(const std::vector<SplineTensor>& given, const model::ModelConfig& cfg);

// The control spline of `model.splines_randomise` (harness.md, "Spline searches"): for each tensor
// of `searched`, its deviation from `initial` (the same tensor as the model initialises it, e.g.
// GeLU's values) δ = searched − initial is written in the DCT-II basis, the sign of each of its
// coefficients is flipped with probability ½ (tasks::hash_words of `key` — the value of
// splines_randomise —, the run's seed, the tensor's index and the coefficient's), and initial + δ'
// is returned. The DCT-II vectors are the eigenvectors of the
// path graph's Laplacian, so ‖δ'‖, Σ (δ'_{k+1} − δ'_k)² and the second differences' energy
// ‖Lδ'‖² (reflective ends) equal those of δ exactly: as rough as the searched spline, in another
// shape. std::invalid_argument when a tensor of `searched` has no twin of the same size in
// `initial`.
std::vector<SplineTensor> randomise_splines(const std::vector<SplineTensor>& searched,
                                            const std::vector<SplineTensor>& initial, uint64_t key, uint64_t run_seed);

// Copies the values in; std::runtime_error (with splines_mismatch's reason) when they do not fit.
void set_model_splines(model::Model& m, const std::vector<SplineTensor>& splines);

}  // namespace srbench::harness
