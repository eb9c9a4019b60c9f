// Shared helpers for task tests: token names of an example, and default parameters that make
// every registered task buildable (text needs a file).
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tasks/automaton.hpp"
#include "tasks/task.hpp"

namespace srbench::test {

// Names of the tokens, and of the targets ("" where not scored).
inline std::vector<std::string> token_names(const tasks::Task& t, const tasks::Example& ex) {
  std::vector<std::string> out;
  for (auto id : ex.tokens) out.push_back(t.vocab().name(id));
  return out;
}
inline std::vector<std::string> target_names(const tasks::Task& t, const tasks::Example& ex) {
  std::vector<std::string> out;
  for (auto id : ex.targets) out.push_back(id == tasks::kNotScored ? "" : t.vocab().name(id));
  return out;
}

// A small text file inside the source tree, for building `text` with defaults.
inline std::string sample_text_path() { return std::string(SRBENCH_SOURCE_DIR) + "/LICENSE"; }

// Parameters under which every registered task builds (only `text` needs one).
inline tasks::RawParams buildable_params(const std::string& task) {
  if (task == "text") return {{"path", sample_text_path()}};
  return {};
}

// The output mode named "states", "final" or "scratchpad".
inline tasks::OutputMode mode_of(const std::string& mode) {
  return mode == "final" ? tasks::OutputMode::Final
         : mode == "scratchpad" ? tasks::OutputMode::Scratchpad
                                : tasks::OutputMode::States;
}

// The example a state-tracking task gives in `mode` for the inputs named, labelled by the
// task's own deterministic labels(inputs).
template <class AutomatonTask>
tasks::Example automaton_example(const AutomatonTask& task, const std::string& mode,
                                 const std::vector<std::string>& inputs) {
  std::vector<int32_t> ids;
  for (const auto& x : inputs) ids.push_back(task.vocab().id(x));
  tasks::Example ex;
  tasks::format_automaton(mode_of(mode), ids, task.labels(ids), ex);
  return ex;
}

// The layout of a state-tracking example of n inputs in `mode` (tasks/automaton.hpp's
// format_automaton): input t is token t·stride, stride 2 under scratchpad (token 2t+1 its state,
// not scored), else 1. state_inputs checks the lengths (n·stride tokens and targets) and returns
// the inputs; check_state_targets checks that the target of input t is states[t] (under final
// the last input's alone, the others not scored), and under scratchpad token 2t+1 too.
inline std::vector<std::string> state_inputs(const std::vector<std::string>& tok, const std::vector<std::string>& tgt,
                                             const std::string& mode, int n) {
  const size_t stride = mode == "scratchpad" ? 2 : 1;
  REQUIRE(tok.size() == stride * static_cast<size_t>(n));
  REQUIRE(tgt.size() == tok.size());
  std::vector<std::string> inputs;
  for (int t = 0; t < n; ++t) inputs.push_back(tok[t * stride]);
  return inputs;
}
inline void check_state_targets(const std::vector<std::string>& tok, const std::vector<std::string>& tgt,
                                const std::string& mode, const std::vector<std::string>& states) {
  const size_t n = states.size(), stride = mode == "scratchpad" ? 2 : 1;
  REQUIRE(tgt.size() == stride * n);
  for (size_t t = 0; t < n; ++t) {
    INFO("input " << t << " of " << n << ", " << mode);
    const std::string& q = states[t];
    if (mode == "final") {
      CHECK(tgt[t] == (t == n - 1 ? q : ""));
    } else {
      CHECK(tgt[t * stride] == q);
    }
    if (mode == "scratchpad") CHECK((tok[t * 2 + 1] == q && tgt[t * 2 + 1].empty()));
  }
}

// Building `task` with `params` must fail with a TaskError that names the task and `param`.
inline void check_task_error(const std::string& task, const tasks::RawParams& params, const std::string& param) {
  INFO("params naming " << param);
  try {
    tasks::make_task(task, params);
    FAIL("accepted");
  } catch (const tasks::TaskError& e) {
    INFO(e.what());
    CHECK(e.task() == task);
    CHECK(e.param() == param);
  }
}

}  // namespace srbench::test
