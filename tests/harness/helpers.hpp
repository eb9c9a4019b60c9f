// Helpers shared by the harness tests.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/splines.hpp"

namespace srbench::test {

// The ConfigError message for a suite `text` read as "s.yaml", as the commands report it (the
// suite parsed, then its splines files read), or "" if it validated.
inline std::string config_error_of(const std::string& text) {
  try {
    harness::Suite suite = harness::parse_suite(text, "s.yaml");
    harness::resolve_splines_files(suite);
  } catch (const harness::ConfigError& e) {
    return e.what();
  }
  return "";
}

// The suite file of run files `paths` (read in that order), with no splines and no transfer.
inline void write_suite_file_of(const std::string& out, const std::string& suite_yaml,
                                const std::vector<std::string>& paths) {
  std::vector<harness::RunFile> files;
  for (const auto& p : paths) files.push_back(harness::read_run_file_at(p));
  harness::write_suite_file(out, suite_yaml, files, {}, {});
}

}  // namespace srbench::test
