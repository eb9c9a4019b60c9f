// The resolved YAML text of a run: what its id hashes. The keys, their order and the form of
// every value are part of every id; the sections come from the field tables, where a key added
// later is written only when it differs from its default (Field::omit), so existing runs keep
// their ids (docs/architecture.md, "Add a key").
#include <yaml-cpp/yaml.h>

#include "harness/suite/fields.hpp"
#include "harness/suite/python_models.hpp"
#include "harness/suite/suite.hpp"

namespace srbench::harness {

std::string run_yaml(const RunSpec& r) {
  return run_yaml(r, r.python.on ? suite::python_model_yaml(r) : r.model.to_yaml());
}

std::string run_yaml(const RunSpec& r, const std::string& model_yaml) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "task" << YAML::Value << r.task;
  e << YAML::Key << "entry" << YAML::Value << r.entry;
  e << YAML::Key << "model_entry" << YAML::Value << r.model_name;
  e << YAML::Key << "grid" << YAML::Value << r.grid;
  e << YAML::Key << "seed" << YAML::Value << r.seed;
  e << YAML::Key << "params" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : r.params) e << YAML::Key << k << YAML::Value << v;
  e << YAML::EndMap;
  e << YAML::Key << "model" << YAML::Value << YAML::Load(model_yaml);
  e << YAML::Key << "train" << YAML::Value << YAML::BeginMap;
  write_fields(suite::train_fields(), r.train, e);
  e << YAML::EndMap;
  e << YAML::Key << "eval" << YAML::Value << YAML::BeginMap;
  write_fields(suite::eval_fields(), r.eval, e);
  e << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

void complete_run(RunSpec& r, const Suite& suite, const std::string& splines_hash) {
  std::string stage2;  // what the run's id must also depend on
  if (!r.splines_from.empty() || r.freeze_splines) {
    YAML::Emitter e;
    e << YAML::BeginMap << YAML::Key << "freeze_splines" << YAML::Value << r.freeze_splines;
    e << YAML::Key << "splines_from" << YAML::Value << r.splines_from;
    if (r.search >= 0)
      e << YAML::Key << "search_config" << YAML::Value << YAML::Literal
        << suite.searches.at(static_cast<size_t>(r.search)).resolved_yaml;
    else if (!r.splines_from.empty())
      e << YAML::Key << "splines_hash" << YAML::Value << splines_hash;
    if (r.splines_randomise >= 0)  // written only when set: runs without it keep their ids
      e << YAML::Key << "splines_randomise" << YAML::Value << r.splines_randomise;
    e << YAML::EndMap;
    stage2 = std::string(e.c_str()) + "\n";
  }
  r.resolved_yaml = run_yaml(r) + stage2;
  r.id = short_hash(r.resolved_yaml);
}

}  // namespace srbench::harness
