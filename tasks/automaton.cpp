#include "tasks/automaton.hpp"

namespace srbench::tasks {

ParamSpec output_param() {
  return {"output", ParamType::Choice, "states",
          "states: label every input; final: only the last; scratchpad: inputs interleaved with states",
          {"states", "final", "scratchpad"}};
}

OutputMode read_output_mode(const ParamReader& params) {
  const std::string s = params.string("output");
  if (s == "final") return OutputMode::Final;
  if (s == "scratchpad") return OutputMode::Scratchpad;
  return OutputMode::States;
}

void format_automaton(OutputMode mode, const std::vector<int32_t>& inputs,
                      const std::vector<int32_t>& labels, Example& out) {
  const size_t n = inputs.size();
  for (size_t t = 0; t < n; ++t) {
    switch (mode) {
      case OutputMode::States: out.push(inputs[t], labels[t]); break;
      case OutputMode::Final: out.push(inputs[t], t + 1 == n ? labels[t] : kNotScored); break;
      case OutputMode::Scratchpad:
        out.push(inputs[t], labels[t]);
        out.push(labels[t], kNotScored);
        break;
    }
  }
}

}  // namespace srbench::tasks
