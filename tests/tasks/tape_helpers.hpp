// Helpers for the tests of the tape-layout (Chomsky-hierarchy) tasks: build a task, format a
// given input tape by token names, and read the targets on the blanks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tasks/tape.hpp"
#include "tests/tasks/helpers.hpp"

namespace srbench::test {

using Names = std::vector<std::string>;

// The task, which must be a TapeTask.
inline std::unique_ptr<tasks::TapeTask> make_tape_task(const std::string& name, const tasks::RawParams& params = {}) {
  auto task = tasks::make_task(name, params);
  auto* tape = dynamic_cast<tasks::TapeTask*>(task.get());
  REQUIRE(tape != nullptr);
  task.release();
  return std::unique_ptr<tasks::TapeTask>(tape);
}

inline std::vector<int32_t> ids_of(const tasks::Task& task, const Names& names) {
  std::vector<int32_t> ids;
  for (const auto& name : names) ids.push_back(task.vocab().id(name));
  return ids;
}

// The example whose input tape is `input` (by name).
inline tasks::Example tape_example(const tasks::TapeTask& task, const Names& input) {
  tasks::Example ex;
  task.format(ids_of(task, input), ex);
  return ex;
}

// The input tape of an example by name (the tokens before the first blank).
inline Names input_tape(const tasks::Task& task, const tasks::Example& ex) {
  const Names tokens = token_names(task, ex);
  return Names(tokens.begin(), tokens.begin() + ex.input_length);
}

// Targets on the blanks after the input tape ("" where null).
inline Names blank_targets(const tasks::Task& task, const tasks::Example& ex) {
  const Names all = target_names(task, ex);
  return Names(all.begin() + ex.input_length, all.end());
}

// The targets the task writes on the blanks after `input` (by name), checking the layout: the
// tape, then output_length blanks `_`, targets null on the tape, input_length = the tape's length.
inline Names worked_example(const tasks::TapeTask& task, const Names& input) {
  const tasks::Example ex = tape_example(task, input);
  const Names tokens = token_names(task, ex), targets = target_names(task, ex);
  const size_t L = input.size(), L_out = static_cast<size_t>(task.output_length(static_cast<int>(L)));
  REQUIRE(ex.input_length == static_cast<int32_t>(L));
  REQUIRE(tokens.size() == L + L_out);
  CHECK(Names(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(L)) == input);
  CHECK(Names(tokens.begin() + static_cast<ptrdiff_t>(L), tokens.end()) == Names(L_out, "_"));
  CHECK(Names(targets.begin(), targets.begin() + static_cast<ptrdiff_t>(L)) == Names(L, ""));
  return blank_targets(task, ex);
}

// Building `task` with `params` fails naming the task and `param`, and the message says why.
inline void check_bad_param(const std::string& task, const tasks::RawParams& params, const std::string& param,
                            const std::string& says) {
  check_task_error(task, params, param);
  CHECK_THROWS_WITH(tasks::make_task(task, params), Catch::Contains(says));
}

}  // namespace srbench::test
