// The `searches:` of a suite (spline-search.md, stage 1): each resolved as a run would be —
// defaults, then the search's own sections, then --set (no grid) — plus its population,
// arch_fraction, stagger and seed.
#pragma once

#include <functional>

#include "harness/core/specs.hpp"
#include "harness/suite/layers.hpp"

namespace srbench::harness::suite {

std::vector<SearchSpec> read_searches(const Reader& R, const YAML::Node& list,
                                      const std::function<void(Layers&)>& apply_defaults,
                                      const std::vector<Assignment>& sets);

// "" when the splines a search learns fit `cfg` (a stage-2 model); otherwise why not.
std::string search_splines_mismatch(const SearchSpec& search, const model::ModelConfig& cfg);

}  // namespace srbench::harness::suite
