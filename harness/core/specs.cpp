#include "harness/core/specs.hpp"

#include "common/version.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace srbench::harness {

ConfigError::ConfigError(const std::string& file, int line, const std::string& path, const std::string& message)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + (path.empty() ? "" : path + ": ") +
                         message),
      path_(path),
      line_(line) {}

RunResult result_of(const RunSpec& spec) {
  RunResult r;
  r.run_id = spec.id, r.task = spec.task, r.entry = spec.entry, r.model = spec.model_name, r.grid = spec.grid;
  r.seed = spec.seed;
  r.config_yaml = spec.resolved_yaml;
  r.build = srbench::build_description();
  return r;
}

std::string short_hash(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 12);
}

std::string arch_name(const RunSpec& r) { return r.python.on ? "python" : model::to_string(r.model.arch); }

bool Suite::has_python_models() const {
  for (const auto& r : runs)
    if (r.python.on) return true;
  return false;
}

std::string python_interpreter(const Suite& suite) {
  if (!suite.python.empty()) return suite.python;
  const char* env = std::getenv("SRBENCH_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

uint64_t arch_examples(uint64_t n, double arch_fraction) {
  return static_cast<uint64_t>(std::llround(arch_fraction * static_cast<double>(n)));
}

}  // namespace srbench::harness
