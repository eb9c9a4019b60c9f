// duplicate_string (CS; NNCH tasks/cs/duplicate_string.py): write the input twice.
//
// Input tape: n uniform symbols of `0 … {V-1}`; L_out = 2n blanks, all scored: x x.
// Example (V = 2): 1 0 1 + 6 blanks → 1 0 1 1 0 1.
#include "tasks/chomsky.hpp"
#include "tasks/symbol_string.hpp"

namespace srbench::tasks {

namespace {

class DuplicateStringTask : public SymbolStringTask {
 public:
  explicit DuplicateStringTask(int vocab_size) : SymbolStringTask("duplicate_string", vocab_size) {}
  int output_length(int input_length) const override { return 2 * input_length; }

 protected:
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    out.insert(out.end(), input.begin(), input.end());
    out.insert(out.end(), input.begin(), input.end());
  }
};

}  // namespace

TaskInfo duplicate_string_info() {
  return symbol_string_task_info<DuplicateStringTask>(
      "duplicate_string", "CS: write the input string twice (Delétang et al.)", "2");
}

}  // namespace srbench::tasks
