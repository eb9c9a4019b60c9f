// Helpers shared by the harness tests.
#pragma once

#include <string>

#include "harness/suite.hpp"

namespace srbench::test {

// The ConfigError message for a suite `text` read as "s.yaml", or "" if it validated.
inline std::string config_error_of(const std::string& text) {
  try {
    harness::parse_suite(text, "s.yaml");
  } catch (const harness::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace srbench::test
