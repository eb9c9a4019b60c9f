// Spline searches, stage 1 (spline-search.md): M models with their own weights sharing one set
// of splines, weights trained on D_wts, splines on D_arch. The splines as named tensors and
// their fit to a model: harness/core/splines.hpp.
//
//   SearchResult s = run_search(suite.searches[0]);
//   write_splines_file(path, s, suite.text);            // harness/results/results.hpp
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/core/specs.hpp"
#include "model/model.hpp"

namespace srbench::harness {

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
