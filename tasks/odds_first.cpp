// odds_first (CS; NNCH tasks/cs/odds_first.py): the symbols at odd positions, then those at even
// positions.
//
// Input tape: n uniform symbols of `0 … {V-1}`; L_out = n blanks, all scored:
// x_1 x_3 x_5 … then x_0 x_2 x_4 … (0-based; NNCH's code `[1::2]` then `[::2]`, not the reverse
// order of its docstring). Example (V = 2): 0 0 1 1 0 1 0 1 + 8 blanks → 0 1 1 1 0 1 0 0.
#include "tasks/chomsky.hpp"
#include "tasks/symbol_string.hpp"

namespace srbench::tasks {

namespace {

class OddsFirstTask : public SymbolStringTask {
 public:
  explicit OddsFirstTask(int vocab_size) : SymbolStringTask("odds_first", vocab_size) {}
  int output_length(int input_length) const override { return input_length; }

 protected:
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    for (size_t t = 1; t < input.size(); t += 2) out.push_back(input[t]);
    for (size_t t = 0; t < input.size(); t += 2) out.push_back(input[t]);
  }
};

}  // namespace

TaskInfo odds_first_info() {
  return symbol_string_task_info<OddsFirstTask>(
      "odds_first", "CS: the odd-position symbols, then the even-position ones (Delétang et al.)", "2");
}

}  // namespace srbench::tasks
