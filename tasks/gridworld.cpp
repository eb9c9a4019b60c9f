#include "tasks/gridworld.hpp"

namespace srbench::tasks {

GridWorldTask::GridWorldTask(int cells, double p_right, OutputMode mode)
    : Task("gridworld"), cells_(cells), p_right_(p_right), mode_(mode) {
  vocab_.add("L");
  vocab_.add("R");
  c0_ = vocab_.size();
  for (int c = 0; c < cells; ++c) vocab_.add("c" + std::to_string(c));
}

std::vector<int32_t> GridWorldTask::labels(const std::vector<int32_t>& inputs) const {
  std::vector<int32_t> out(inputs.size());
  int32_t cell = 0;
  for (size_t t = 0; t < inputs.size(); ++t) {
    if (inputs[t] == 1) {
      if (cell < cells_ - 1) ++cell;
    } else if (cell > 0) {
      --cell;
    }
    out[t] = c0_ + cell;
  }
  return out;
}

void GridWorldTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> inputs(static_cast<size_t>(n));
  for (auto& x : inputs) x = rng.bernoulli(p_right_) ? 1 : 0;
  format_automaton(mode_, inputs, labels(inputs), out);
}

TaskInfo gridworld_info() {
  return {"gridworld",
          "walk left/right on a line of cells, clamped at both ends",
          {{"cells", ParamType::Int, "9", "number of cells, 2..1024"},
           {"p_right", ParamType::Real, "0.5", "probability of a move right (R)"},
           output_param()},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<GridWorldTask>(static_cast<int>(p.integer_in("cells", 2, 1024)),
                                                   p.probability("p_right"), read_output_mode(p));
          }};
}

}  // namespace srbench::tasks
