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

// Copies the values in; std::runtime_error (with splines_mismatch's reason) when they do not fit.
void set_model_splines(model::Model& m, const std::vector<SplineTensor>& splines);

}  // namespace srbench::harness
