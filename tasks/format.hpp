// Printing examples by token name: one JSON object a line (the `sample --format jsonl` form of
// harness.md) or aligned text for a person.
#pragma once

#include <string>

#include "tasks/task.hpp"

namespace srbench::tasks {

// {"task": "parity", "n": 4, "tokens": ["1","0","1","1"], "targets": ["q1","q1","q0","q1"],
//  "input_length": 4} (targets null where not scored; input_length = Example::input_length).
// No trailing newline.
std::string example_jsonl(const Task& task, int n, const Example& ex);

// Tokens above their targets, column-aligned, wrapped at `width` characters; unscored targets
// are shown as "·". Every line ends in a newline.
std::string example_text(const Task& task, const Example& ex, size_t width = 100);

// A JSON string literal (quotes included) for any byte string.
std::string json_quote(const std::string& s);

}  // namespace srbench::tasks
