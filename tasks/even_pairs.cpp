// even_pairs (R; NNCH tasks/regular/even_pairs.py): is the number of changes 01 / 10 even?
//
// Input tape: n uniform bits `0 1`; one blank, scored with c{(number of t < n-1 with
// x_t ≠ x_{t+1}) mod 2} — equivalently c1 iff x_0 ≠ x_{n-1} (n = 1 gives c0).
// Vocabulary `0 1 _ c0 c1`. Example: 0 0 1 1 1 0 _ → two changes → c0.
#include <cmath>

#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class EvenPairsTask : public TapeTask {
 public:
  EvenPairsTask() : TapeTask("even_pairs") { set_vocabulary({"0", "1"}, {"c0", "c1"}); }
  int output_length(int) const override { return 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override { append_uniform(rng, n, 2, tape); }
  double input_space_size(int n) const override { return std::pow(2.0, n); }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    size_t changes = 0;
    for (size_t t = 0; t + 1 < input.size(); ++t) changes += input[t] != input[t + 1];
    out.push_back(output_classes()[changes % 2]);
  }
};

}  // namespace

TaskInfo even_pairs_info() {
  return parameterless_task_info<EvenPairsTask>(
      "even_pairs", "R: parity of the number of adjacent unequal bit pairs (Delétang et al.)");
}

}  // namespace srbench::tasks
