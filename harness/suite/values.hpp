// Reading a suite's YAML values: typed scalars with messages that say what was expected, maps
// checked against their valid keys (with the nearest one for a misspelling), and where in the
// file each value was written.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/core/specs.hpp"

namespace srbench::harness::suite {

// A value error inside one field; the caller adds the location.
struct FieldError {
  std::string message;
};

// Where each resolved field ("train.lr", "eval.shifts[1]", "params.p1") was last set.
using Where = std::map<std::string, SourceLoc>;

int line_of(const YAML::Node& n);  // 1-based; 0 = unknown
// "'x'", "a list", "a map", "nothing"
std::string describe(const YAML::Node& n);
std::string format_double(double v);  // the shortest text that reads back as v

// Typed scalars; FieldError otherwise.
int64_t as_int(const YAML::Node& n);
double as_real(const YAML::Node& n);
bool as_bool(const YAML::Node& n);
std::string as_string(const YAML::Node& n);
// A YAML value as task-parameter text: scalars as written, lists as "[a, b]".
std::string param_text(const YAML::Node& n);

int64_t positive(int64_t v);              // >= 1
int64_t non_negative(int64_t v);          // >= 0
double positive_real(double v);           // > 0
double non_negative_real(double v);       // >= 0

// "a.b" (or "b" when path is empty).
std::string join(const std::string& path, const std::string& key);
std::string strip_prefix(const std::string& s, const std::string& prefix);
// "unknown key 'x' (did you mean 'y'?); valid keys: a, b" (`what`: "key", "model key", …;
// `in`: " in mlp_spline" after the key).
std::string unknown_key_message(const std::string& key, const std::vector<std::string>& valid,
                                const std::string& what = "key", const std::string& in = "");

// Errors name the suite file, the line and the YAML path.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  SourceLoc at(const YAML::Node& n, const std::string& path) const { return {file_, path, line_of(n)}; }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& path, const std::string& message) const {
    at(n, path).fail(message);
  }
  // `n` must be a map whose keys are all in `allowed`.
  void check_map(const YAML::Node& n, const std::string& path, const std::vector<std::string>& allowed) const;
  // The entry's `name` (or `key`): non-empty letters, digits, '-', '_' or '.' (it names a file).
  std::string file_name(const YAML::Node& n, const std::string& path, const std::string& extra = "") const;

 private:
  std::string file_;
};

}  // namespace srbench::harness::suite
