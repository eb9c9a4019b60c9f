#include "harness/suite/stored.hpp"

#include <yaml-cpp/yaml.h>

namespace srbench::harness {

std::string stored_suite_name(const std::string& suite_yaml) {
  try {
    const YAML::Node n = YAML::Load(suite_yaml);
    if (n.IsMap() && n["name"] && n["name"].IsScalar()) return n["name"].as<std::string>();
  } catch (const std::exception&) {
  }
  return "";
}

std::string stored_model_arch(const std::string& config_yaml) {
  try {
    const YAML::Node cfg = YAML::Load(config_yaml);
    if (cfg.IsMap() && cfg["model"] && cfg["model"].IsMap() && cfg["model"]["arch"])
      return cfg["model"]["arch"].as<std::string>();
  } catch (const YAML::Exception&) {
  }
  return "transformer";
}

}  // namespace srbench::harness
