#include "harness/core/grid.hpp"

#include <algorithm>
#include <sstream>

namespace srbench::harness {

std::vector<std::string> grid_items(const std::string& grid) {
  std::vector<std::string> out;
  std::istringstream in(grid);
  for (std::string item; in >> item;) out.push_back(item);
  return out;
}

std::string grid_key(const std::string& item) { return item.substr(0, item.find('=')); }

std::string grid_without(const std::string& grid, const std::vector<std::string>& axes) {
  std::string out;
  for (const auto& item : grid_items(grid))
    if (std::find(axes.begin(), axes.end(), grid_key(item)) == axes.end()) out += (out.empty() ? "" : " ") + item;
  return out;
}

}  // namespace srbench::harness
