#include "harness/suite/stored.hpp"

#include <yaml-cpp/yaml.h>

#include "harness/core/specs.hpp"

namespace srbench::harness {

std::string stored_suite_name(const std::string& suite_yaml) {
  try {
    const YAML::Node n = YAML::Load(suite_yaml);
    if (n.IsMap() && n["name"] && n["name"].IsScalar()) return n["name"].as<std::string>();
  } catch (const std::exception&) {
  }
  return "";
}

namespace {

// `section.key` of a run's resolved config as text; `absent` when it is not there or the config does not parse.
std::string stored_config_key(const std::string& config_yaml, const char* section, const char* key,
                              const std::string& absent) {
  try {
    const YAML::Node cfg = YAML::Load(config_yaml);
    if (cfg.IsMap() && cfg[section] && cfg[section].IsMap() && cfg[section][key])
      return cfg[section][key].as<std::string>();
  } catch (const YAML::Exception&) {
  }
  return absent;
}

}  // namespace

std::string stored_model_arch(const std::string& config_yaml) {
  return stored_config_key(config_yaml, "model", "arch", "transformer");
}

std::string stored_fit_metric(const std::string& config_yaml) {
  return stored_config_key(config_yaml, "train", "fit_metric", "seq_acc");
}

double stored_target_accuracy(const std::string& config_yaml) {
  const double fallback = TrainConfig{}.target_accuracy;  // the key's default
  try {
    return std::stod(stored_config_key(config_yaml, "train", "target_accuracy", std::to_string(fallback)));
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace srbench::harness
