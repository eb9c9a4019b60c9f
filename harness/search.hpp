// Spline searches (spline-search.md): the splines of a model as named tensors, their
// compatibility with a model config, and stage 1 — M models with their own weights sharing one
// set of splines, weights trained on D_wts, splines on D_arch.
//
//   SearchResult s = run_search(suite.searches[0]);
//   write_splines_file(path, s, suite.text);            // results.hpp
//   set_model_splines(model, read_splines_file(path).splines);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/run_result.hpp"
#include "harness/suite.hpp"
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

// One model of a search.
struct SearchModelResult {
  uint64_t seed = 0;
  int64_t start_step = 0;            // 0, or m·steps/(M+1) under stagger
  std::vector<CurvePoint> curve;     // at the model's own steps (eval_every, …, and the last)
  double final_val_acc = kNaN;       // val_acc of the last curve point
};

struct SearchResult {
  std::string name, task, config_yaml;  // config_yaml: the search's resolved YAML
  int64_t population = 0;
  std::string status = "ok";            // ok | diverged | failed
  std::string message;
  double wall_s = 0;
  std::vector<SplineTensor> splines;    // the learned (shared) splines
  std::vector<SearchModelResult> models;
};

// What a search step used, for tests: before each weights update (kind Weights: model m's own
// D_wts batch) and each spline-gradient pass (kind Arch: model m's D_arch batch), the examples
// of the batch (TrainingData's source indices) and the spline values the model holds.
struct SearchEvent {
  enum Kind { Weights, Arch } kind = Weights;
  int64_t step = 0;   // the search's step
  int model = 0;
  std::vector<uint64_t> examples;
  std::vector<float> splines;
};
using SearchObserver = std::function<void(const SearchEvent&)>;

// Runs a search (stage 1). Every step s, for each model m with start_m <= s in order: a
// weights-only AdamW step on its own D_wts batch (its schedule over its own steps − start_m);
// then each such model's D_arch batch loss is backpropagated, the M spline gradients are summed
// (in model order) and drive ONE AdamW step of the shared splines (spline_lr, no weight decay,
// clipped by train.clip, the schedule over the search's steps); the new values go to every
// model. Deterministic from the seeds. Never throws for a failing search: status says why. If
// `trained` is given it receives the M final models.
SearchResult run_search(const SearchSpec& spec, const SearchObserver& observe = {},
                        std::vector<model::Model>* trained = nullptr);

}  // namespace srbench::harness
