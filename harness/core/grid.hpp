// A run's grid point as written in RunSpec::grid and RunResult::grid: "model.layers=2 train.lr=0.001".
#pragma once

#include <string>
#include <vector>

namespace srbench::harness {

// The "key=value" items of a grid string, in order.
std::vector<std::string> grid_items(const std::string& grid);
// The key of one item ("train.lr" of "train.lr=0.001").
std::string grid_key(const std::string& item);
// The grid string without the items whose key is in `axes` (the axes pooled with the seeds).
std::string grid_without(const std::string& grid, const std::vector<std::string>& axes);

}  // namespace srbench::harness
