// reverse_string (DCF; NNCH tasks/dcf/reverse_string.py): write the input reversed.
//
// Input tape: n uniform symbols of `0 … {V-1}`; L_out = n blanks, all scored: x_{n-1} … x_0.
// Example (V = 2): 0 1 1 0 1 0 + 6 blanks → 0 1 0 1 1 0.
#include "tasks/chomsky.hpp"
#include "tasks/symbol_string.hpp"

namespace srbench::tasks {

namespace {

class ReverseStringTask : public SymbolStringTask {
 public:
  explicit ReverseStringTask(int vocab_size) : SymbolStringTask("reverse_string", vocab_size) {}
  int output_length(int input_length) const override { return input_length; }

 protected:
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    out.insert(out.end(), input.rbegin(), input.rend());
  }
};

}  // namespace

TaskInfo reverse_string_info() {
  return symbol_string_task_info<ReverseStringTask>(
      "reverse_string", "DCF: write the input string reversed (Delétang et al.)", "2");
}

}  // namespace srbench::tasks
