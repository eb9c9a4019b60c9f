#include "tasks/parity.hpp"

namespace srbench::tasks {

ParityTask::ParityTask(double p1, OutputMode mode) : Task("parity"), p1_(p1), mode_(mode) {
  vocab_.add("0");
  vocab_.add("1");
  q0_ = vocab_.add("q0");
  vocab_.add("q1");
}

std::vector<int32_t> ParityTask::labels(const std::vector<int32_t>& inputs) const {
  std::vector<int32_t> out(inputs.size());
  int32_t state = 0;
  for (size_t t = 0; t < inputs.size(); ++t) {
    state ^= inputs[t];
    out[t] = q0_ + state;
  }
  return out;
}

void ParityTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> inputs(static_cast<size_t>(n));
  for (auto& x : inputs) x = rng.bernoulli(p1_) ? 1 : 0;
  format_automaton(mode_, inputs, labels(inputs), out);
}

TaskInfo parity_info() {
  return {"parity",
          "running parity of a bit string (cyclic group C2)",
          {{"p1", ParamType::Real, "0.5", "probability of a 1"}, output_param()},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<ParityTask>(p.probability("p1"), read_output_mode(p));
          }};
}

}  // namespace srbench::tasks
