// The suggestion in an error message for a misspelt name: "unknown key 'stpes' (did you mean
// 'steps'?)". One rule for the task parameters, the suite's keys, the model's values and the
// command names.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace srbench {

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
// adjacent characters ("stpes" is one edit from "steps").
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `name` by edit distance (the first of equals), or "" when none is
// plausibly meant: at most a third of the longer name differs, one edit at least.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace srbench
