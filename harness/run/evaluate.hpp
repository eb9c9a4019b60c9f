// Evaluation (harness.md, "What a run measures"): a model's loss and accuracies on a list of
// examples, and a run's final evaluation rows — every evaluation length of condition `id`, each
// shift at the lengths inside the training range, modadd's training pairs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/core/specs.hpp"
#include "harness/run/data.hpp"
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

// What a model gives for one batch: logits [B,T,V] (row-major, `vocab` V) or predictions [B,T],
// and the cross-entropy summed over the batch's scored positions where it is known (else NaN).
// The pointers stay valid until the next call.
struct BatchOutput {
  const float* logits = nullptr;
  int vocab = 0;
  const int32_t* predictions = nullptr;
  double loss_sum = kNaN;
};
// Any model as the evaluation sees it: a batch in, its outputs out. The built-in model's is
// model_scorer(m); the Python module wraps a callable.
using BatchScorer = std::function<BatchOutput(const Batch&)>;
BatchScorer model_scorer(model::Model& m);

// Accuracy and loss of a model on a list of examples (forward only, batches of `batch`).
struct EvalScore {
  double loss = kNaN;       // mean cross-entropy over scored positions
  double token_acc = kNaN;  // over scored positions
  double seq_acc = kNaN;    // every scored position right (argmax)
  int64_t examples = 0, scored = 0;
  double seen_frac = kNaN;           // with a SeenSet: the fraction of examples in it
  std::vector<double> position_acc;  // per position of the longest example; NaN where none scores
};
// `wrong`, if given, is called for every example with a scored position predicted wrong: its index
// in `examples` and the predictions at each of its positions (kNotScored where not scored).
using WrongExample = std::function<void(size_t index, const std::vector<int32_t>& predictions)>;
EvalScore evaluate_examples(const BatchScorer& score, const std::vector<tasks::Example>& examples, int batch = 64,
                            const SeenSet* seen = nullptr, const WrongExample& wrong = {});
inline EvalScore evaluate_examples(model::Model& m, const std::vector<tasks::Example>& examples, int batch = 64,
                                   const SeenSet* seen = nullptr, const WrongExample& wrong = {}) {
  return evaluate_examples(model_scorer(m), examples, batch, seen, wrong);
}

// The final evaluation of a run: appends its conditions (after "id") and rows to `r`; `seen`
// (sealed), if given, gives each row's seen_frac; `progress`, if given, is called after each row
// with the rows done and the rows in all (the Python module's progress bar).
using EvalProgress = std::function<void(size_t done, size_t total)>;
void evaluate_run(const BatchScorer& score, const tasks::Task& task, const RunSpec& spec, RunResult& r,
                  const SeenSet* seen = nullptr, int batch = 64, const EvalProgress& progress = {});
inline void evaluate_run(model::Model& m, const tasks::Task& task, const RunSpec& spec, RunResult& r,
                         const SeenSet* seen = nullptr) {
  evaluate_run(model_scorer(m), task, spec, r, seen);
}

}  // namespace srbench::harness
