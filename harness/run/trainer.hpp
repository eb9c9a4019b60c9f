// One run, start to finish (the run stage): build the task and the model from a resolved
// RunSpec, train with periodic validation, evaluate at every length and condition, derive the
// metrics, take the diagnostics. Reads no files: a stage-2 run's splines come in the spec.
#pragma once

#include <functional>
#include <memory>

#include "harness/core/records.hpp"
#include "harness/core/specs.hpp"
#include "harness/run/data.hpp"
#include "model/model.hpp"

namespace srbench::harness {

// Trains and evaluates one run. Never throws for a failing run: the status says `failed` (with
// the message) or `diverged`. If `trained` is given, it receives the final model; `observe`, if
// given, sees every training batch as it goes into a step (the Python module's check that its
// training_stream is the trainer's).
using BatchObserver = std::function<void(int64_t step, const Batch& batch)>;
RunResult run_training(const RunSpec& spec, std::unique_ptr<model::Model>* trained = nullptr,
                       const BatchObserver& observe = {});

}  // namespace srbench::harness
