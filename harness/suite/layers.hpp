// A run's config built layer by layer (harness.md): built-in defaults → defaults.* → the task
// entry → the model entry → the grid point → --set. Each value is read through its section's
// field table and recorded where it was set, so that a check made after all layers (a length
// beyond max_len, a shift that changes the vocabulary) names the place that set the value.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/core/specs.hpp"
#include "harness/suite/values.hpp"
#include "tasks/task.hpp"

namespace srbench::harness::suite {

// The keys each kind of section accepts.
const std::vector<std::string>& model_section_keys(bool stage2);  // ModelConfig's, spline maps, (stage-2 keys)
extern const std::vector<std::string> kStage2Keys;                // freeze_splines, splines_from
extern const std::vector<std::string> kPythonKeys;                // module, kwargs, device (arch: python)

// One (section, key) value of a grid axis or --set.
struct Assignment {
  std::string section, key;  // section: model | train | eval | params
  YAML::Node value;
  SourceLoc loc;
};

class Layers {
 public:
  Layers(const Reader& reader, RunSpec& run) : R_(reader), r_(run) {}

  // Every key of a `model:`, `train:` or `eval:` map (`section`), or of a `params:` map.
  void section(const YAML::Node& map, const std::string& path, const std::string& section);
  void params(const YAML::Node& map, const std::string& path);
  void assign(const Assignment& a);

  // Where `field` ("train.length", "eval.shifts[0]") was last set, or `fallback`.
  SourceLoc loc_of(const std::string& field, const SourceLoc& fallback) const;

  // The run's task (a parameter error is reported where the parameter was set), with the
  // model's vocabulary filled in from it and the model validated.
  std::unique_ptr<tasks::Task> resolve_task(const SourceLoc& task_loc, const std::string& params_path,
                                            const std::string& model_path, int entry_line);
  // The training lengths checked against the task and max_len, the evaluation lengths
  // defaulting to the training maximum; with `check_eval` also the evaluation lengths and the
  // shifts checked (a search uses neither).
  void check_lengths(const tasks::Task& task, const std::string& entry_path, int entry_line, bool check_eval);

  // recurrent.md, "Config keys": the model keys that do not apply under the run's (final) arch.
  // One set in the model entry itself (a path under `entry_path`, e.g. "models[1].model") is a
  // ConfigError naming the key, the entry (`entry_name`), the arch and the line; one inherited
  // (defaults, the task entry, a grid axis, --set) is dropped: reset to its default, so that it
  // is not in the resolved config. Returns the dropped keys as "key (where it was set)".
  // The stage-2 keys (freeze_splines, splines_from) do not apply under a recurrent arch.
  std::vector<std::string> drop_inapplicable(const std::string& entry_path, const std::string& entry_name);
  // Whether model key `key` applies under the run's arch (a stage-2 key: only without recurrence).
  bool model_key_applies(const std::string& key) const;

 private:
  void model_key(const std::string& key, const YAML::Node& v, const SourceLoc& loc);
  void train_key(const std::string& key, const YAML::Node& v, const SourceLoc& loc);
  void eval_key(const std::string& key, const YAML::Node& v, const SourceLoc& loc);
  void check_length(const tasks::Task& task, int n, const SourceLoc& loc, const std::string& what) const;

  const Reader& R_;
  RunSpec& r_;
  Where where_;
  std::vector<std::pair<std::string, SourceLoc>> model_history_;  // every model key set, in order
};

}  // namespace srbench::harness::suite
