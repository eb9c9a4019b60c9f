// parity_check (R; NNCH tasks/regular/parity_check.py): the parity of the number of 1s.
//
// Input tape: n uniform bits `0 1`; one blank, scored with c{(number of 1s) mod 2}.
// Vocabulary `0 1 _ c0 c1`. Example: 1 0 1 1 0 _ → three 1s → c1.
#include <cmath>

#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class ParityCheckTask : public TapeTask {
 public:
  ParityCheckTask() : TapeTask("parity_check") { set_vocabulary({"0", "1"}, {"c0", "c1"}); }
  int output_length(int) const override { return 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override { append_uniform(rng, n, 2, tape); }
  double input_space_size(int n) const override { return std::pow(2.0, n); }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    int32_t ones = 0;
    for (const int32_t x : input) ones += x;  // `1` has id 1
    out.push_back(output_classes()[static_cast<size_t>(ones % 2)]);
  }
};

}  // namespace

TaskInfo parity_check_info() {
  return parameterless_task_info<ParityCheckTask>(
      "parity_check", "R: parity of the number of 1s in a bit string (Delétang et al.)");
}

}  // namespace srbench::tasks
