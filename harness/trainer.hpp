// One run, start to finish: build the task and the model from a resolved RunSpec, train with
// periodic validation, evaluate at every length and condition, derive the metrics.
//
// Data (harness.md, "Seeds"): the run seed drives initialisation, the training examples drawn
// from the unbounded generator and the batch order; data_seed drives the finite training set,
// modadd's split, the validation set and the evaluation sets, so every seed is judged on the
// same examples.
#pragma once

#include <memory>

#include "harness/run_result.hpp"
#include "harness/suite.hpp"
#include "model/model.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

// Right-padded batches of examples (padding: token 0, target −1).
struct Batch {
  int B = 0, T = 0;
  std::vector<int32_t> tokens, targets;  // [B,T]
  int64_t real_tokens = 0;               // non-padding positions
  void assemble(const std::vector<tasks::Example>& examples);
};

// Training example k of a run (k = step·batch + b): from the unbounded generator (the `train`
// stream under the run seed, its length drawn from the training range by hash(seed, k)), or
// from a finite set of `train.examples` examples (the `train` stream under data_seed), visited
// epoch by epoch in an order shuffled by hash(run seed, epoch).
//
// A spline search (spline-search.md) splits the training data into D_wts and D_arch: with a
// finite set of N examples, D_arch is its last round(arch_fraction·N) examples and D_wts the
// rest, each part visited epoch by epoch in its own shuffled order; with the unbounded
// generator, D_wts is the `train` stream and D_arch the `train-arch` stream (both under the run
// seed, lengths drawn apart).
enum class DataPart { All, Weights, Arch };
// How many of a finite set's n examples form D_arch: round(arch_fraction·n).
uint64_t arch_examples(uint64_t n, double arch_fraction);

class TrainingData {
 public:
  // task and spec must outlive this; arch_fraction is used by the Weights and Arch parts.
  TrainingData(const tasks::Task& task, const RunSpec& spec, DataPart part = DataPart::All, double arch_fraction = 0);
  // `source`, if given, receives where the example came from: its index in the finite set, or
  // its index k in the stream.
  void example(uint64_t k, tasks::Example& out, uint64_t* source = nullptr);

 private:
  const tasks::Task& task_;
  const RunSpec& spec_;
  DataPart part_;
  std::vector<tasks::Example> finite_;
  std::vector<uint64_t> pool_;   // the finite-set indices of this part
  std::vector<uint64_t> order_;  // positions into pool_ for the current epoch
  uint64_t epoch_ = 0;
};

// The fixed validation set of a run (harness.md): the first n examples of the `eval` stream
// under data_seed (far indices), lengths drawn from the training range.
std::vector<tasks::Example> validation_set(const tasks::Task& task, const TrainConfig& train, size_t n);

// Accuracy and loss of a model on a list of examples (forward only, batches of `batch`).
struct EvalScore {
  double loss = kNaN;       // mean cross-entropy over scored positions
  double token_acc = kNaN;  // over scored positions
  double seq_acc = kNaN;    // every scored position right (argmax)
  int64_t examples = 0, scored = 0;
};
EvalScore evaluate_examples(model::Model& m, const std::vector<tasks::Example>& examples, int batch = 64);

// Trains and evaluates one run. Never throws for a failing run: the status says `failed` (with
// the message) or `diverged`. If `trained` is given, it receives the final model.
RunResult run_training(const RunSpec& spec, std::unique_ptr<model::Model>* trained = nullptr);

}  // namespace srbench::harness
