// cycle_navigation (R; NNCH tasks/regular/cycle_navigation.py): a walk on a cycle.
//
// Input tape: n actions uniform over `-1 0 +1` (move left, stay, move right; NNCH 0, 1, 2);
// starting at 0, one blank scored with c{(Σ moves) mod cycle_length} (least non-negative).
// Vocabulary `-1 0 +1 _ c0 … c{cycle_length-1}`. Example (cycle_length 5):
// +1 -1 0 -1 -1 _ → -2 mod 5 → c3.
#include <cmath>

#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class CycleNavigationTask : public TapeTask {
 public:
  explicit CycleNavigationTask(int cycle_length) : TapeTask("cycle_navigation"), cycle_length_(cycle_length) {
    std::vector<std::string> positions;
    for (int c = 0; c < cycle_length; ++c) positions.push_back("c" + std::to_string(c));
    set_vocabulary({"-1", "0", "+1"}, positions);
  }
  int output_length(int) const override { return 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override { append_uniform(rng, n, 3, tape); }
  double input_space_size(int n) const override { return std::pow(3.0, n); }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    int64_t position = 0;
    for (const int32_t action : input) position += action - 1;  // ids 0, 1, 2 move by -1, 0, +1
    const int64_t c = ((position % cycle_length_) + cycle_length_) % cycle_length_;
    out.push_back(output_classes()[static_cast<size_t>(c)]);
  }

 private:
  int cycle_length_;
};

}  // namespace

TaskInfo cycle_navigation_info() {
  return {"cycle_navigation",
          "R: position after a walk of -1/0/+1 moves on a cycle (Delétang et al.)",
          {{"cycle_length", ParamType::Int, "5", "number of positions on the cycle, 2..1000 (NNCH: 5)"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<CycleNavigationTask>(static_cast<int>(p.integer_in("cycle_length", 2, 1000)));
          }};
}

}  // namespace srbench::tasks
