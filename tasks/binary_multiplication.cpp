// binary_multiplication (CS; NNCH tasks/cs/binary_multiplication.py): multiply two binary numbers.
//
// Input tape: the operands of tasks/binary_operands.hpp with `*`, least significant digit first.
// L_out = n blanks (x·y < 2^(n-1) fits with its `<eos>`): x·y least significant digit first
// without leading zeros, then `<eos>`, then null. NNCH's fixed small-n outputs are kept: n = 1
// (tape `0`) gives `<eos>` alone; n = 2 (one number, no `*`) gives `0 <eos>` whatever the number.
// Vocabulary `0 1 * _ <eos>`. Examples: 0 0 1 * 0 1 1 0 1 (4 · 22) + 9 blanks →
// 0 0 0 1 1 0 1 <eos> · (88);  1 0 _ _ → 0 <eos>.
#include "tasks/binary_operands.hpp"
#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class BinaryMultiplicationTask : public TapeTask {
 public:
  BinaryMultiplicationTask() : TapeTask("binary_multiplication") {
    set_vocabulary({"0", "1", "*"}, {"0", "1", "<eos>"});
    times_ = vocab_.id("*");
    eos_ = vocab_.id("<eos>");
  }
  int output_length(int input_length) const override { return input_length; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    append_binary_operands(rng, n, times_, tape);
  }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    const BinaryOperands o = read_binary_operands(input, times_);
    if (o.has_operator) {
      const std::vector<int32_t> product = (o.x * o.y).bits_le();
      out.insert(out.end(), product.begin(), product.end());
    } else if (input.size() == 2) {
      out.push_back(0);
    }
    out.push_back(eos_);
  }

 private:
  int32_t times_, eos_;
};

}  // namespace

TaskInfo binary_multiplication_info() {
  return parameterless_task_info<BinaryMultiplicationTask>(
      "binary_multiplication", "CS: product of two binary numbers, least significant first (Delétang et al.)");
}

}  // namespace srbench::tasks
