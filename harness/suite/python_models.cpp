#include "harness/suite/python_models.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "common/process.hpp"

namespace srbench::harness::suite {

namespace {

// Prints where module argv[1] would be imported from, without running it (importlib's
// find_spec imports the parent packages of a dotted name, not the module itself).
constexpr const char* kFindModule = R"(import importlib.util, sys
try:
    spec = importlib.util.find_spec(sys.argv[1])
    origin = spec.origin if spec is not None else None
except Exception as e:
    origin = None
print("\nsrbench-module-origin:" + (origin or ""))
)";

constexpr const char* kOriginMark = "srbench-module-origin:";

}  // namespace

std::string python_model_yaml(const RunSpec& r) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "arch" << YAML::Value << "python";
  e << YAML::Key << "vocab" << YAML::Value << r.model.vocab;
  e << YAML::Key << "max_len" << YAML::Value << r.model.max_len;
  e << YAML::Key << "module" << YAML::Value << r.python.module;
  e << YAML::Key << "kwargs" << YAML::Value << YAML::Flow << YAML::Load(r.python.kwargs);
  e << YAML::Key << "device" << YAML::Value << r.python.device;
  e << YAML::Key << "source" << YAML::Value << r.python.source;
  e << YAML::EndMap;
  return e.c_str();
}

std::string PythonSources::source(const std::string& module_path) {
  const std::string module = module_path.substr(0, module_path.find(':'));
  const auto it = cache_.find(module);
  if (it != cache_.end()) return it->second;
  std::string out = "unresolved";
  try {
    const ProcessResult p = run_process({python_, "-c", kFindModule, module});
    const auto at = p.out.rfind(kOriginMark);
    if (p.exited_ok() && at != std::string::npos) {
      std::string origin = p.out.substr(at + std::string(kOriginMark).size());
      while (!origin.empty() && (origin.back() == '\n' || origin.back() == '\r')) origin.pop_back();
      std::ifstream f(origin, std::ios::binary);
      if (!origin.empty() && f) {
        std::ostringstream text;
        text << f.rdbuf();
        out = short_hash(text.str());
      }
    }
  } catch (const std::exception&) {  // no such interpreter: the run fails when it starts, saying so
  }
  cache_[module] = out;
  return out;
}

}  // namespace srbench::harness::suite
