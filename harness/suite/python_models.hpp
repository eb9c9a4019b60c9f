// `arch: python` in the suite stage (docs/python.md, "Python models in a suite"): a Python
// model's section of the resolved config, and the hash of the file that defines its factory,
// which the run's id includes (so that editing the model gives new runs).
#pragma once

#include <map>
#include <string>

#include "harness/core/specs.hpp"

namespace srbench::harness::suite {

// The model section of a Python model's resolved config (YAML text of a map): arch: python,
// vocab, max_len, module, kwargs, device, source.
std::string python_model_yaml(const RunSpec& r);

// The hashes of the module files of a suite's Python models, found as the suite's interpreter
// would import them (from the current folder, then PYTHONPATH, then its own path): one
// interpreter call per module, the first time it is asked for.
class PythonSources {
 public:
  explicit PythonSources(std::string python) : python_(std::move(python)) {}
  // short_hash of the text of the file that defines module `module_path` ("pkg.mod:factory");
  // "unresolved" when the interpreter cannot find it (the run then fails when it starts, saying
  // why, and `sweep --dry-run` reports it at the `module:` line).
  std::string source(const std::string& module_path);

 private:
  std::string python_;
  std::map<std::string, std::string> cache_;
};

}  // namespace srbench::harness::suite
