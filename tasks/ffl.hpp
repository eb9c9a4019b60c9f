// ffl: the flip-flop language (Liu et al., NeurIPS 2023).
//
// n >= 2 (instruction, bit) pairs, 2n tokens over `w r i 0 1`. The first instruction is `w`, the
// last `r`; the n-2 between are iid: `i` with prob p_i, `w` and `r` with (1-p_i)/2 each. The bit
// after `w` (write) or `i` (ignore) is uniform; the bit after `r` (read) equals the last bit
// written (`i` writes nothing). Scored: at every `r` the target is the bit that follows.
// Example: w 1 i 0 r 1 w 0 r 0 → targets · · · · 1 · · · 0 · (· = not scored).
#pragma once

#include "tasks/task.hpp"

namespace srbench::tasks {

class FflTask : public Task {
 public:
  explicit FflTask(double p_i);
  void check_length(int n) const override;  // n >= 2
  int max_sequence_length(int n) const override { return 2 * n; }

  // Token ids.
  static constexpr int32_t kW = 0, kR = 1, kI = 2, kZero = 3, kOne = 4;

  // Appends the example for `instructions` (kW/kR/kI) and the bits drawn with them (0/1): the
  // bit of a `w` or `i` is its drawn bit; the bit of an `r` is the last written bit, its drawn
  // entry ignored. Throws std::invalid_argument if an `r` precedes every `w`.
  void format(const std::vector<int32_t>& instructions, const std::vector<int>& bits, Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  double p_i_;
};

TaskInfo ffl_info();

}  // namespace srbench::tasks
