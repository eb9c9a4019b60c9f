// modadd: modular arithmetic on a finite training set (the grokking setting).
//
// Tokens `0..{p-1}`, the op (`+`, `-` or `*`), `=`. An example is `a op b =` (4 tokens); only `=`
// is scored, with (a op b) mod p, non-negative. All p² pairs (a, b), listed in order a·p + b, are
// shuffled once with the data seed: the first ⌊f·p²⌋ are the training pairs, the rest held out.
// Streams `train` and `train-arch` draw a uniform training pair, `eval` a uniform held-out pair.
// n is ignored. Example (p = 97, op `-`): 3 - 5 = → 95.
#pragma once

#include <span>
#include <vector>

#include "tasks/task.hpp"

namespace srbench::tasks {

enum class ModOp { Add, Subtract, Multiply };

struct ModPair {
  int32_t a, b;
  bool operator==(const ModPair&) const = default;
};

class ModAddTask : public Task {
 public:
  // The split's shuffle draws from Rng(hash_words({data_seed, kSplitTag})) ("modadd" in ASCII).
  static constexpr uint64_t kSplitTag = 0x6d6f64616464ULL;

  // p prime (2..2000), 0 < train_fraction < 1 with both sets non-empty (checked by the builder).
  ModAddTask(int p, ModOp op, double train_fraction, uint64_t data_seed);

  void check_length(int) const override {}  // any n: examples ignore it
  int max_sequence_length(int) const override { return 4; }
  bool uses_length() const override { return false; }

  // (a op b) mod p, in 0..p-1.
  int32_t apply(int32_t a, int32_t b) const;
  // Appends `a op b =` with its label at `=`.
  void format(ModPair pair, Example& out) const;

  // The shuffled pairs: the first ⌊f·p²⌋ for training, the rest held out.
  std::span<const ModPair> train_pairs() const { return std::span(pairs_).first(train_size_); }
  std::span<const ModPair> heldout_pairs() const { return std::span(pairs_).subspan(train_size_); }

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int p_;
  ModOp op_;
  int32_t op_token_, equals_token_;
  std::vector<ModPair> pairs_;  // all p² pairs, shuffled once
  size_t train_size_;
};

TaskInfo modadd_info();

}  // namespace srbench::tasks
