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

// The token sequences of the training examples a run drew, as 64-bit hashes: add() while
// training, then seal() once (sorted, unique), then contains().
class SeenSet {
 public:
  static uint64_t hash(const std::vector<int32_t>& tokens);
  void add(const std::vector<int32_t>& tokens) { hashes_.push_back(hash(tokens)); }
  void seal();
  bool contains(const std::vector<int32_t>& tokens) const;
  size_t size() const { return hashes_.size(); }

 private:
  std::vector<uint64_t> hashes_;
};

// Accuracy and loss of a model on a list of examples (forward only, batches of `batch`).
struct EvalScore {
  double loss = kNaN;       // mean cross-entropy over scored positions
  double token_acc = kNaN;  // over scored positions
  double seq_acc = kNaN;    // every scored position right (argmax)
  int64_t examples = 0, scored = 0;
  double seen_frac = kNaN;           // with a SeenSet: the fraction of examples in it
  std::vector<double> position_acc;  // per position of the longest example; NaN where none scores
};
EvalScore evaluate_examples(model::Model& m, const std::vector<tasks::Example>& examples, int batch = 64,
                            const SeenSet* seen = nullptr);

// The final evaluation of a run: appends its conditions (after "id") and rows to `r`; `seen`
// (sealed), if given, gives each row's seen_frac.
void evaluate_run(model::Model& m, const tasks::Task& task, const RunSpec& spec, RunResult& r,
                  const SeenSet* seen = nullptr);

}  // namespace srbench::harness
