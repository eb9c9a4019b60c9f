// Output modes shared by the state-tracking tasks (parity, modcount, flipflop, dyck top/depth,
// permutation, quaternion, gridworld), after Liu et al. (ICLR 2023).
//
// Such a task reads input symbols x_0..x_{n-1}; q_t is the state label after x_0..x_t.
//   states:     tokens x_0..x_{n-1};               targets q_0..q_{n-1}
//   final:      tokens x_0..x_{n-1};               only the last position is scored, with q_{n-1}
//   scratchpad: tokens x_0 q_0 x_1 q_1 … (2n);     target q_t at x_t; state positions unscored
#pragma once

#include <vector>

#include "tasks/task.hpp"

namespace srbench::tasks {

enum class OutputMode { States, Final, Scratchpad };

// The `output` parameter: states | final | scratchpad (default states).
ParamSpec output_param();
OutputMode read_output_mode(const ParamReader& params);

inline int automaton_max_sequence_length(OutputMode mode, int n) {
  return mode == OutputMode::Scratchpad ? 2 * n : n;
}

// Appends the example for inputs and labels (vocabulary ids, equal lengths) to `out`.
void format_automaton(OutputMode mode, const std::vector<int32_t>& inputs,
                      const std::vector<int32_t>& labels, Example& out);

}  // namespace srbench::tasks
