// The examples of a run (harness.md, "Seeds"): the run seed drives the training examples drawn
// from the unbounded generator and the batch order; data_seed drives the finite training set,
// modadd's split, the validation set and the evaluation sets, so every seed is judged on the
// same examples.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/specs.hpp"
#include "common/rows.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

// Right-padded batches of examples (padding: token 0, target −1), with each row's own length and
// input-tape length (RowLengths: a bidirectional model masks the padding, a Tape-RNN jumps
// by the input length).
struct Batch {
  int B = 0, T = 0;
  std::vector<int32_t> tokens, targets;  // [B,T]
  std::vector<int32_t> lengths, input_lengths;  // [B]
  int64_t real_tokens = 0;               // non-padding positions
  void assemble(const std::vector<tasks::Example>& examples);
  RowLengths rows() const { return {lengths.data(), input_lengths.data()}; }
};

// Training example k of a run (k = step·batch + b): from the unbounded generator (the `train`
// stream under the run seed, its length drawn from the training range by hash(seed, k)), or
// from a finite set of `train.examples` examples (the `train` stream under data_seed), visited
// epoch by epoch in an order shuffled by hash(run seed, epoch). With `train.length_per: batch`
// (unbounded generator only), the length is drawn once per step s = k / batch, by hash(seed, s):
// every example of a batch has the same length (NNCH's training, chomsky.md §7.1).
//
// A spline search (spline-search.md) splits the training data into D_wts and D_arch: with a
// finite set of N examples, D_arch is its last round(arch_fraction·N) examples and D_wts the
// rest, each part visited epoch by epoch in its own shuffled order; with the unbounded
// generator, D_wts is the `train` stream and D_arch the `train-arch` stream (both under the run
// seed, lengths drawn apart).
enum class DataPart { All, Weights, Arch };

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

// An evaluation set: examples 0..n−1 of `stream` under data_seed, all of length `length`.
std::vector<tasks::Example> evaluation_set(const tasks::Task& task, uint64_t data_seed, tasks::Stream stream,
                                           int length, int64_t n);

}  // namespace srbench::harness
