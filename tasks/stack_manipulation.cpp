// stack_manipulation (DCF; NNCH tasks/dcf/stack_manipulation.py): run stack actions, write the
// final stack.
//
// Input tape (n ≥ 2): k uniform in 1..n-1, k uniform bits (the initial stack, bottom first),
// then n-k actions uniform over `pop push0 push1` (NNCH 2, 3, 4); `pop` on an empty stack does
// nothing. n = 1: one uniform bit b (a stack, no action). L_out = n + 1 blanks: the final stack
// top first, then `<eos>`, then null. Vocabulary `0 1 pop push0 push1 _ <eos>`. Examples:
//   0 1 1 0 push1 pop pop + 8 blanks → 1 1 0 <eos> · · · ·;
//   1 1 0 pop pop pop + 7 blanks → <eos> · · · · · ·.
#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

constexpr int32_t kZero = 0, kOne = 1, kPop = 2, kPush0 = 3, kPush1 = 4;  // input ids

class StackManipulationTask : public TapeTask {
 public:
  StackManipulationTask() : TapeTask("stack_manipulation") {
    set_vocabulary({"0", "1", "pop", "push0", "push1"}, {"0", "1", "<eos>"});
    eos_ = vocab_.id("<eos>");
  }
  int output_length(int input_length) const override { return input_length + 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    const int k = n == 1 ? 1 : static_cast<int>(rng.between(1, n - 1));
    append_uniform(rng, k, 2, tape);
    for (int t = k; t < n; ++t) tape.push_back(kPop + static_cast<int32_t>(rng.below(3)));
  }
  // The initial stack's bits push themselves, as push0 / push1 would.
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    std::vector<int32_t> stack;
    for (const int32_t x : input) {
      if (x == kPop) {
        if (!stack.empty()) stack.pop_back();
      } else {
        stack.push_back(x == kZero || x == kPush0 ? kZero : kOne);
      }
    }
    out.insert(out.end(), stack.rbegin(), stack.rend());
    out.push_back(eos_);
  }

 private:
  int32_t eos_;
};

}  // namespace

TaskInfo stack_manipulation_info() {
  return parameterless_task_info<StackManipulationTask>(
      "stack_manipulation", "DCF: a stack after pop/push actions, top first (Delétang et al.)");
}

}  // namespace srbench::tasks
