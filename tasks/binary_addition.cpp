// binary_addition (CS; NNCH tasks/cs/binary_addition.py): add two binary numbers.
//
// Input tape: the operands of tasks/binary_operands.hpp with `+` (n = 1: `0`; n = 2: one number
// v in 0..2, no `+`), least significant digit first. L_out = n + 1 blanks: x + y (or v) least
// significant digit first without leading zeros (`0` for 0), then `<eos>`, then null.
// Vocabulary `0 1 + _ <eos>`. Examples: 0 0 1 + 0 1 1 0 1 (4 + 22) + 10 blanks →
// 0 1 0 1 1 <eos> · · · · (26);  0 1 _ _ _ (n = 2, v = 2) → 0 1 <eos>.
#include "tasks/binary_operands.hpp"
#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class BinaryAdditionTask : public TapeTask {
 public:
  BinaryAdditionTask() : TapeTask("binary_addition") {
    set_vocabulary({"0", "1", "+"}, {"0", "1", "<eos>"});
    plus_ = vocab_.id("+");
    eos_ = vocab_.id("<eos>");
  }
  int output_length(int input_length) const override { return input_length + 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    append_binary_operands(rng, n, plus_, tape);
  }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    const BinaryOperands o = read_binary_operands(input, plus_);
    const std::vector<int32_t> sum = (o.x + o.y).bits_le();
    out.insert(out.end(), sum.begin(), sum.end());
    out.push_back(eos_);
  }

 private:
  int32_t plus_, eos_;
};

}  // namespace

TaskInfo binary_addition_info() {
  return parameterless_task_info<BinaryAdditionTask>(
      "binary_addition", "CS: sum of two binary numbers, least significant first (Delétang et al.)");
}

}  // namespace srbench::tasks
