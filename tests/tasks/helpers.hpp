// Shared helpers for task tests: token names of an example, and default parameters that make
// every registered task buildable (text needs a file).
#pragma once

#include <string>
#include <vector>

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

}  // namespace srbench::test
