// compute_sqrt (CS; NNCH tasks/cs/compute_sqrt.py): the integer square root of a binary number.
//
// Input tape: v uniform in 1..2^n-1 as exactly n binary digits, most significant first.
// L_out = ⌈n/2⌉ blanks, all scored: ⌊√v⌋ as exactly ⌈n/2⌉ digits, most significant first
// (leading zeros kept). Vocabulary `0 1 _`. Examples: 1 0 0 1 0 1 _ _ _ (37) → 1 1 0 (6);
// 0 0 0 0 1 1 1 (7) + 4 blanks → 0 0 1 0 (2).
#include <cmath>

#include "tasks/binary_operands.hpp"
#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class ComputeSqrtTask : public TapeTask {
 public:
  ComputeSqrtTask() : TapeTask("compute_sqrt") { set_vocabulary({"0", "1"}, {"0", "1"}); }
  int output_length(int input_length) const override { return (input_length + 1) / 2; }
  double input_space_size(int n) const override { return std::pow(2.0, n) - 1; }  // v in 1..2^n − 1

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    append_nonzero_bits(rng, n, tape);  // a uniform nonzero digit string, read as most significant first
  }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    const std::vector<int32_t> little_endian(input.rbegin(), input.rend());
    const size_t width = static_cast<size_t>(output_length(static_cast<int>(input.size())));
    const std::vector<int32_t> root = Natural::from_bits_le(little_endian).isqrt().bits_le(width);
    out.insert(out.end(), root.rbegin(), root.rend());
  }
};

}  // namespace

TaskInfo compute_sqrt_info() {
  return parameterless_task_info<ComputeSqrtTask>(
      "compute_sqrt", "CS: integer square root of a binary number, most significant first (Delétang et al.)");
}

}  // namespace srbench::tasks
