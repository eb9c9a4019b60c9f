// Evaluation (harness.md, "What a run measures"): a model's loss and accuracies on a list of
// examples, and a run's final evaluation rows — every evaluation length of condition `id`, each
// shift at the lengths inside the training range, modadd's training pairs.
#pragma once

#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/core/specs.hpp"
#include "model/model.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

// Accuracy and loss of a model on a list of examples (forward only, batches of `batch`).
struct EvalScore {
  double loss = kNaN;       // mean cross-entropy over scored positions
  double token_acc = kNaN;  // over scored positions
  double seq_acc = kNaN;    // every scored position right (argmax)
  int64_t examples = 0, scored = 0;
};
EvalScore evaluate_examples(model::Model& m, const std::vector<tasks::Example>& examples, int batch = 64);

// The final evaluation of a run: appends its conditions (after "id") and rows to `r`.
void evaluate_run(model::Model& m, const tasks::Task& task, const RunSpec& spec, RunResult& r);

}  // namespace srbench::harness
