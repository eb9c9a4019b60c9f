// gridworld: a walk on a line of cells, clamped at both ends.
//
// Inputs `L R` (`R` with probability p_right); labels `c0..c{cells-1}`; start in cell 0 before
// the first move; q_t = the cell after moves x_0..x_t, never below 0 or above cells-1.
// Example (cells = 3, states): L R R R L → c0 c1 c2 c2 c1.
#pragma once

#include <cmath>

#include "tasks/automaton.hpp"

namespace srbench::tasks {

class GridWorldTask : public Task {
 public:
  GridWorldTask(int cells, double p_right, OutputMode mode);
  int max_sequence_length(int n) const override { return automaton_max_sequence_length(mode_, n); }
  // State label ids (`c0..c{cells-1}`) after each move (input ids: `L` = 0, `R` = 1).
  std::vector<int32_t> labels(const std::vector<int32_t>& inputs) const;
  double input_space_size(int n) const override { return p_right_ > 0 && p_right_ < 1 ? std::pow(2.0, n) : 1.0; }

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int cells_;
  double p_right_;
  OutputMode mode_;
  int32_t c0_;
};

TaskInfo gridworld_info();

}  // namespace srbench::tasks
