// One run, start to finish (the run stage): build the task and the model from a resolved
// RunSpec, train with periodic validation, evaluate at every length and condition, derive the
// metrics, take the diagnostics. Reads no files: a stage-2 run's splines come in the spec.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/core/specs.hpp"
#include "harness/run/data.hpp"
#include "model/model.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

// A uniform guess's token accuracy for a task without a tape layout (RunResult::chance): one over
// the number of distinct targets at the scored positions of the validation set (NaN when nothing
// is scored).
double uniform_guess_accuracy(const std::vector<tasks::Example>& val);

// Trains and evaluates one run. Never throws for a failing run: the status says `failed` (with
// the message) or `diverged`. If `trained` is given, it receives the final model; `observe`, if
// given, sees every training batch as it goes into a step (the Python module's check that its
// training_stream is the trainer's).
using BatchObserver = std::function<void(int64_t step, const Batch& batch)>;
RunResult run_training(const RunSpec& spec, std::unique_ptr<model::Model>* trained = nullptr,
                       const BatchObserver& observe = {});

}  // namespace srbench::harness
