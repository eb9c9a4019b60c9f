// The suite stage: a suite's YAML file (harness.md, "A suite") validated key by key and expanded
// into plain run and search specs (harness/core/specs.hpp). It reads nothing but the suite text:
// a run whose splines come from a file gets its id once the sweep has read that file
// (complete_run, called by harness/sweep/splines.hpp).
//
//   Suite s = load_suite("configs/quickstart.yaml", {{"train.steps", "100"}});
//
// Nothing runs until the whole suite has validated: every error (ConfigError) names the file,
// line and YAML path, and for a misspelt key the nearest valid one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/core/specs.hpp"

namespace srbench::harness {

// Reads and validates a suite; `overrides` are --set KEY=VALUE pairs (KEY `model.X`, `train.X`,
// `eval.X` or `params.X`), applied to every run after everything else. Throws ConfigError.
Suite load_suite(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides = {});
Suite parse_suite(const std::string& text, const std::string& file,
                  const std::vector<std::pair<std::string, std::string>>& overrides = {});

// The resolved YAML of a run without its stage-2 part: task, entry, model entry, grid, seed,
// params, and the model, train and eval sections written by their field tables.
std::string run_yaml(const RunSpec& r);
// The same with another model section (YAML text of a map): an external model's run (the Python
// module's `arch: external`).
std::string run_yaml(const RunSpec& r, const std::string& model_yaml);

// Sets a run's resolved_yaml (run_yaml + its stage-2 settings, if any) and id. A run whose
// splines come from a file needs `splines_hash`, the hash of the file's spline values.
void complete_run(RunSpec& r, const Suite& suite, const std::string& splines_hash = "");

}  // namespace srbench::harness
