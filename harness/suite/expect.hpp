// A suite's `expect:` list (harness.md, "Claims the suite checks itself"): each entry read and
// checked against the expanded suite — its task entry, model entry, metric, length, condition
// and `over` axes must exist — so that a claim the suite cannot evaluate is a ConfigError at
// load time (sweep, --dry-run), located at its file and line.
#pragma once

#include <yaml-cpp/yaml.h>

#include <vector>

#include "harness/core/specs.hpp"
#include "harness/suite/values.hpp"

namespace srbench::harness::suite {

// `list` is the suite's `expect:` node; `suite` is expanded (its runs are read, not changed).
std::vector<Expectation> read_expectations(const Reader& R, const YAML::Node& list, const Suite& suite);

}  // namespace srbench::harness::suite
