// add: multi-digit addition in base 2..10.
//
// Tokens: digits `0..{base-1}`, `+ = <eos>`. An example is `a + b = c <eos>`: a and b have
// exactly n digits (with mixed_lengths each has a uniform length in 1..n), uniform, the most
// significant digit nonzero whenever the operand has more than one digit; c = a + b without
// leading zeros (0 is written `0`). With little_endian all three are written least-significant
// digit first. Next-token targets from `=`: at `=` the first written digit of c, ..., at c's last
// digit `<eos>`; everything else is not scored. Lengths vary: at most 3n + 4 tokens.
// Example (base 10, little-endian): 12 + 99 = 111 → 2 1 + 9 9 = 1 1 1 <eos>.
#pragma once

#include "tasks/task.hpp"

namespace srbench::tasks {

// a + b for digit vectors least-significant first, without leading zeros ({0} for zero).
std::vector<int> add_digits(const std::vector<int>& a, const std::vector<int>& b, int base);

class AddTask : public Task {
 public:
  AddTask(int base, bool little_endian, bool mixed_lengths);
  int max_sequence_length(int n) const override { return 3 * n + 4; }

  int32_t digit(int d) const { return d; }  // digit d has token id d
  int32_t plus() const { return plus_; }
  int32_t equals() const { return equals_; }
  int32_t eos() const { return eos_; }
  // Appends the example for operands a and b (digits least-significant first).
  void format(const std::vector<int>& a, const std::vector<int>& b, Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  // The digits of `number` (least-significant first) in written order, as token ids.
  std::vector<int32_t> written(const std::vector<int>& number) const;
  // A uniform operand of `length` digits, least-significant first; the top digit is nonzero
  // when length > 1.
  std::vector<int> draw_operand(Rng& rng, int length) const;

  int base_;
  bool little_endian_;
  bool mixed_lengths_;
  int32_t plus_, equals_, eos_;
};

TaskInfo add_info();

}  // namespace srbench::tasks
