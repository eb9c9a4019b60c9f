// Where a stage-2 run's splines come from (spline-search.md), resolved by the sweep stage: a
// splines file named by `splines_from` is read when the suite is expanded for a command (its
// values complete the run's id), a search's splines file once the search has finished.
#pragma once

#include <string>

#include "harness/core/specs.hpp"

namespace srbench::harness {

// Reads the splines file of every run whose splines_from is a file: checks that it fits the
// run's model (ConfigError at splines_from's place in the suite otherwise), puts its splines
// and task into the run, and completes the run's id. Every command that expands a suite for
// runs calls it after load_suite.
void resolve_splines_files(Suite& suite);

// The splines of a finished search's file, put into a run (ResultsError when the file does not
// read cleanly).
void take_search_splines(RunSpec& run, const std::string& splines_file);

}  // namespace srbench::harness
