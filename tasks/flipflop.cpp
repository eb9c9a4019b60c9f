#include "tasks/flipflop.hpp"

namespace srbench::tasks {

FlipFlopTask::FlipFlopTask(int values, double p_write, OutputMode mode)
    : Task("flipflop"), values_(values), p_write_(p_write), mode_(mode) {
  vocab_.add("r");
  for (int v = 1; v <= values; ++v) vocab_.add("w" + std::to_string(v));
  q0_ = vocab_.size();
  for (int v = 0; v <= values; ++v) vocab_.add("q" + std::to_string(v));
}

std::vector<int32_t> FlipFlopTask::labels(const std::vector<int32_t>& inputs) const {
  std::vector<int32_t> out(inputs.size());
  int32_t state = 0;  // nothing written yet
  for (size_t t = 0; t < inputs.size(); ++t) {
    if (inputs[t] != 0) state = inputs[t];  // w_v has id v
    out[t] = q0_ + state;
  }
  return out;
}

void FlipFlopTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> inputs(static_cast<size_t>(n));
  for (auto& x : inputs) x = rng.bernoulli(p_write_) ? static_cast<int32_t>(rng.between(1, values_)) : 0;
  format_automaton(mode_, inputs, labels(inputs), out);
}

TaskInfo flipflop_info() {
  return {"flipflop",
          "remember the last value written; reads keep it",
          {{"values", ParamType::Int, "2", "number of distinct values written, 1..64"},
           {"p_write", ParamType::Real, "0.5", "probability that a symbol is a write"},
           output_param()},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<FlipFlopTask>(static_cast<int>(p.integer_in("values", 1, 64)),
                                                  p.probability("p_write"), read_output_mode(p));
          }};
}

}  // namespace srbench::tasks
