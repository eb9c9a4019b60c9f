#include "harness/suite.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "harness/results.hpp"
#include "harness/search.hpp"
#include "harness/trainer.hpp"
#include "model/error.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

ConfigError::ConfigError(const std::string& file, int line, const std::string& path, const std::string& message)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + (path.empty() ? "" : path + ": ") +
                         message),
      path_(path),
      line_(line) {}

std::string short_hash(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 12);
}

namespace {

const std::vector<std::string> kTopKeys = {"name", "seeds", "defaults", "tasks", "models", "grid", "searches"};
const std::vector<std::string> kSearchKeys = {"name",       "task",          "params",  "train", "model",
                                              "eval",       "population",    "arch_fraction", "stagger", "seed"};
// Keys of a `model:` section that are the harness's, not the model's (stage 2 of a spline search).
const std::vector<std::string> kStage2Keys = {"freeze_splines", "splines_from"};

// The keys a `model:` section accepts: ModelConfig's (spline settings dotted or as nested maps)
// and, where `stage2`, the harness's stage-2 keys.
std::vector<std::string> model_section_keys(bool stage2) {
  std::vector<std::string> keys = model::ModelConfig::keys();
  keys.push_back("mlp_spline");
  keys.push_back("attn_spline");
  if (stage2) keys.insert(keys.end(), kStage2Keys.begin(), kStage2Keys.end());
  return keys;
}
const std::vector<std::string> kDefaultsKeys = {"model", "train", "eval"};
const std::vector<std::string> kTaskKeys = {"task", "name", "params", "train", "eval", "model"};
const std::vector<std::string> kModelEntryKeys = {"name", "model", "train"};
const std::vector<std::string> kTrainKeys = {"steps", "batch", "lr", "warmup", "schedule", "weight_decay", "clip",
                                             "eval_every", "target_accuracy", "data_seed", "save_checkpoint",
                                             "spline_lr", "router_lr", "length", "examples"};
const std::vector<std::string> kEvalKeys = {"lengths", "examples", "val_examples", "shifts"};
const std::vector<std::string> kGridSections = {"model", "train", "eval", "params"};

// A value error inside one field; the caller adds the location.
struct FieldError {
  std::string message;
};

std::string format_double(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

int64_t as_int(const YAML::Node& n) {
  if (!n.IsScalar()) throw FieldError{"expected an integer, got " + describe(n)};
  const std::string& s = n.Scalar();
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || *end != '\0') throw FieldError{"expected an integer, got '" + s + "'"};
  return v;
}

double as_real(const YAML::Node& n) {
  if (!n.IsScalar()) throw FieldError{"expected a number, got " + describe(n)};
  const std::string& s = n.Scalar();
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || *end != '\0' || !std::isfinite(v))
    throw FieldError{"expected a number, got '" + s + "'"};
  return v;
}

bool as_bool(const YAML::Node& n) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "yes") return true;
    if (s == "false" || s == "False" || s == "no") return false;
  }
  throw FieldError{"expected true or false, got " + describe(n)};
}

std::string as_string(const YAML::Node& n) {
  if (!n.IsScalar()) throw FieldError{"expected a string, got " + describe(n)};
  return n.Scalar();
}

int64_t positive(int64_t v, const char* what = "must be at least 1") {
  if (v < 1) throw FieldError{std::to_string(v) + " " + what};
  return v;
}

// A YAML value as task-parameter text: scalars as written, lists as "[a, b]".
std::string param_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) {
    std::string s = "[";
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsScalar()) throw FieldError{"expected a scalar or a list of scalars"};
      s += (i ? ", " : "") + n[i].Scalar();
    }
    return s + "]";
  }
  throw FieldError{"expected a scalar or a list, got " + describe(n)};
}

// Where a resolved field was last set.
struct Loc {
  std::string path;
  int line = 0;
};

class Resolver {
 public:
  Resolver(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const Loc& loc, const std::string& message) const {
    throw ConfigError(file_, loc.line, loc.path, message);
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& path, const std::string& message) const {
    fail(Loc{path, line_of(n)}, message);
  }

  // Checks that `n` is a map whose keys are all in `allowed` (suggesting the nearest).
  void check_map(const YAML::Node& n, const std::string& path, const std::vector<std::string>& allowed) const {
    if (!n.IsMap()) fail(n, path, "expected a map, got " + describe(n));
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string msg = "unknown key '" + key + "'";
      const std::string near = tasks::closest_name(key, allowed);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      msg += "; valid keys:";
      for (size_t i = 0; i < allowed.size(); ++i) msg += (i ? ", " : " ") + allowed[i];
      fail(kv.first, join(path, key), msg);
    }
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  void apply_train(TrainConfig& t, const std::string& key, const YAML::Node& v, const Loc& loc,
                   std::map<std::string, Loc>& where) const {
    try {
      if (key == "steps") t.steps = positive(as_int(v));
      else if (key == "batch") t.batch = positive(as_int(v));
      else if (key == "lr") t.lr = positive_real(as_real(v));
      else if (key == "warmup") t.warmup = non_negative(as_int(v));
      else if (key == "schedule") {
        t.schedule = as_string(v);
        if (t.schedule != "cosine" && t.schedule != "linear" && t.schedule != "constant")
          throw FieldError{"'" + t.schedule + "' is not one of cosine, linear, constant"};
      } else if (key == "weight_decay") t.weight_decay = non_negative_real(as_real(v));
      else if (key == "clip") t.clip = non_negative_real(as_real(v));
      else if (key == "eval_every") t.eval_every = positive(as_int(v));
      else if (key == "target_accuracy") {
        t.target_accuracy = as_real(v);
        if (t.target_accuracy < 0 || t.target_accuracy > 1) throw FieldError{v.Scalar() + " is outside [0, 1]"};
      } else if (key == "data_seed") t.data_seed = static_cast<uint64_t>(non_negative(as_int(v)));
      else if (key == "save_checkpoint") t.save_checkpoint = as_bool(v);
      else if (key == "spline_lr") t.spline_lr = positive_real(as_real(v));
      else if (key == "router_lr") t.router_lr = positive_real(as_real(v));
      else if (key == "examples") t.examples = positive(as_int(v));
      else if (key == "length") {
        if (v.IsScalar()) {
          t.length_min = t.length_max = static_cast<int>(positive(as_int(v)));
        } else if (v.IsSequence() && v.size() == 2) {
          const int64_t lo = as_int(v[0]), hi = as_int(v[1]);
          if (lo < 1) throw FieldError{"the minimum length " + std::to_string(lo) + " is below 1"};
          if (lo > hi)
            throw FieldError{"the range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                             "] is inverted (expected [min, max] with min <= max)"};
          if (hi > 1'000'000) throw FieldError{"the maximum length " + std::to_string(hi) + " is above 1000000"};
          t.length_min = static_cast<int>(lo), t.length_max = static_cast<int>(hi);
        } else {
          throw FieldError{"expected [min, max] or a single length, got " + describe(v)};
        }
      }
    } catch (const FieldError& e) {
      fail(loc, e.message);
    }
    where["train." + key] = loc;
  }

  void apply_eval(EvalConfig& e, const std::string& key, const YAML::Node& v, const Loc& loc,
                  std::map<std::string, Loc>& where) const {
    try {
      if (key == "examples") e.examples = positive(as_int(v));
      else if (key == "val_examples") e.val_examples = positive(as_int(v));
      else if (key == "lengths") {
        if (!v.IsSequence() || v.size() == 0) throw FieldError{"expected a non-empty list of lengths"};
        e.lengths.clear();
        for (const auto& x : v) {
          const int64_t n = as_int(x);
          if (n < 1 || n > 1'000'000) throw FieldError{"length " + std::to_string(n) + " is outside 1..1000000"};
          e.lengths.push_back(static_cast<int>(n));
        }
      } else if (key == "shifts") {
        if (!v.IsSequence()) throw FieldError{"expected a list of maps of task parameters, got " + describe(v)};
        e.shifts.clear();
        for (size_t i = 0; i < v.size(); ++i) {
          const YAML::Node& m = v[i];
          if (!m.IsMap() || m.size() == 0)
            fail(Loc{loc.path + "[" + std::to_string(i) + "]", line_of(m)},
                 "expected a map of task parameters, e.g. {p1: 0.9}");
          Shift s;
          for (const auto& kv : m) {
            const std::string k = kv.first.Scalar();
            try {
              s.params[k] = param_text(kv.second);
            } catch (const FieldError& fe) {
              fail(Loc{loc.path + "[" + std::to_string(i) + "]." + k, line_of(kv.second)}, fe.message);
            }
            s.label += (s.label.empty() ? "" : ",") + k + "=" + s.params[k];
          }
          e.shifts.push_back(std::move(s));
          shift_locs_.push_back(Loc{loc.path + "[" + std::to_string(i) + "]", line_of(m)});
        }
      }
    } catch (const FieldError& fe) {
      fail(loc, fe.message);
    }
    where["eval." + key] = loc;
  }

  // A `model:` key of a run: the stage-2 keys go to the RunSpec, the rest to its ModelConfig.
  void apply_run_model(RunSpec& r, const std::string& key, const YAML::Node& v, const Loc& loc,
                       std::map<std::string, Loc>& where) const {
    if (key == "freeze_splines" || key == "splines_from") {
      try {
        if (key == "freeze_splines") {
          r.freeze_splines = as_bool(v);
        } else {
          r.splines_from = as_string(v);
          if (r.splines_from.empty()) throw FieldError{"must name a search of this suite or a splines file"};
        }
      } catch (const FieldError& e) {
        fail(loc, e.message);
      }
      where["model." + key] = loc;
      return;
    }
    apply_model(r.model, key, v, loc, where);
  }

  void apply_model(model::ModelConfig& m, const std::string& key, const YAML::Node& v, const Loc& loc,
                   std::map<std::string, Loc>& where) const {
    if (key == "mlp_spline" || key == "attn_spline") {  // a nested map of spline settings
      if (!v.IsMap()) fail(loc, "expected a map of spline settings, e.g. {keypoints: 32, range: 4}, got " + describe(v));
      std::vector<std::string> subs;
      for (const auto& k : model::ModelConfig::keys())
        if (k.rfind(key + ".", 0) == 0) subs.push_back(k.substr(key.size() + 1));
      for (const auto& kv : v) {
        const std::string sub = kv.first.Scalar();
        const Loc sub_loc{loc.path + "." + sub, line_of(kv.first)};
        if (std::find(subs.begin(), subs.end(), sub) == subs.end()) {
          std::string msg = "unknown key '" + sub + "' in " + key;
          const std::string near = tasks::closest_name(sub, subs);
          if (!near.empty()) msg += " (did you mean '" + near + "'?)";
          msg += "; valid keys:";
          for (size_t i = 0; i < subs.size(); ++i) msg += (i ? ", " : " ") + subs[i];
          fail(sub_loc, msg);
        }
        apply_model(m, key + "." + sub, kv.second, Loc{sub_loc.path, line_of(kv.second)}, where);
      }
      return;
    }
    if (std::find(model::ModelConfig::keys().begin(), model::ModelConfig::keys().end(), key) ==
            model::ModelConfig::keys().end() || key == "vocab") {
      std::vector<std::string> keys;
      for (const auto& k : model::ModelConfig::keys())
        if (k != "vocab") keys.push_back(k);
      std::string msg = key == "vocab" ? "the vocabulary size comes from the task and cannot be set"
                                       : "unknown model key '" + key + "'";
      const std::string near = key == "vocab" ? "" : tasks::closest_name(key, keys);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      if (key != "vocab") {
        msg += "; valid keys:";
        for (size_t i = 0; i < keys.size(); ++i) msg += (i ? ", " : " ") + keys[i];
      }
      fail(loc, msg);
    }
    if (!v.IsScalar()) fail(loc, "expected a scalar, got " + describe(v));
    try {
      m.set(key, v.Scalar());
    } catch (const model::ModelError& e) {
      fail(loc, strip_prefix(e.what(), "model." + key + ": "));
    }
    where["model." + key] = loc;
  }

  // A length the task accepts and whose sequences fit the model's max_len.
  void check_length(const tasks::Task& task, const std::string& task_name, int max_len, int n, const Loc& loc,
                    const std::string& what) const {
    try {
      task.check_length(n);
    } catch (const tasks::TaskError& e) {
      fail(loc, what + ": " + strip_prefix(e.what(), "task '" + task_name + "': "));
    }
    const int len = task.max_sequence_length(n);
    if (len > max_len)
      fail(loc, what + " " + std::to_string(n) + " makes sequences of up to " + std::to_string(len) +
                    " tokens, beyond the model's max_len " + std::to_string(max_len) +
                    " (raise model.max_len or shorten it)");
  }

  static std::string strip_prefix(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
  }

  mutable std::vector<Loc> shift_locs_;  // of the last eval.shifts applied

 private:
  static double positive_real(double v) {
    if (!(v > 0)) throw FieldError{format_double(v) + " must be above 0"};
    return v;
  }
  static double non_negative_real(double v) {
    if (v < 0) throw FieldError{format_double(v) + " must not be negative"};
    return v;
  }
  static int64_t non_negative(int64_t v) {
    if (v < 0) throw FieldError{std::to_string(v) + " must not be negative"};
    return v;
  }
  std::string file_;
};

// One (section, key) assignment of a grid axis or --set.
struct Assignment {
  std::string section, key;  // section: model | train | eval | params
  YAML::Node value;
  Loc loc;
};

std::string run_yaml(const RunSpec& r) {
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
  e << YAML::Key << "model" << YAML::Value << YAML::Load(r.model.to_yaml());
  const TrainConfig& t = r.train;
  e << YAML::Key << "train" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "steps" << YAML::Value << t.steps << YAML::Key << "batch" << YAML::Value << t.batch;
  e << YAML::Key << "lr" << YAML::Value << format_double(t.lr) << YAML::Key << "warmup" << YAML::Value << t.warmup;
  e << YAML::Key << "schedule" << YAML::Value << t.schedule;
  e << YAML::Key << "weight_decay" << YAML::Value << format_double(t.weight_decay);
  e << YAML::Key << "clip" << YAML::Value << format_double(t.clip);
  e << YAML::Key << "eval_every" << YAML::Value << t.eval_every;
  e << YAML::Key << "target_accuracy" << YAML::Value << format_double(t.target_accuracy);
  e << YAML::Key << "data_seed" << YAML::Value << t.data_seed;
  e << YAML::Key << "save_checkpoint" << YAML::Value << t.save_checkpoint;
  e << YAML::Key << "spline_lr" << YAML::Value << format_double(t.spline_lr);
  e << YAML::Key << "router_lr" << YAML::Value << format_double(t.router_lr);
  e << YAML::Key << "length" << YAML::Value << YAML::Flow << YAML::BeginSeq << t.length_min << t.length_max
    << YAML::EndSeq;
  e << YAML::Key << "examples" << YAML::Value << t.examples;
  e << YAML::EndMap;
  e << YAML::Key << "eval" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "lengths" << YAML::Value << YAML::Flow << r.eval.lengths;
  e << YAML::Key << "examples" << YAML::Value << r.eval.examples;
  e << YAML::Key << "val_examples" << YAML::Value << r.eval.val_examples;
  e << YAML::Key << "shifts" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : r.eval.shifts) {
    e << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : s.params) e << YAML::Key << k << YAML::Value << v;
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace

Suite load_suite(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, "", "cannot read the suite file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_suite(ss.str(), path, overrides);
}

namespace {

constexpr const char* kOverrideMark = "# srbench --set ";

// The overrides recorded in a suite text by an earlier sweep (see Suite::text).
std::vector<std::pair<std::string, std::string>> recorded_overrides(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(kOverrideMark, 0) != 0) continue;
    const std::string kv = line.substr(std::string(kOverrideMark).size());
    const auto eq = kv.find('=');
    if (eq != std::string::npos) out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

}  // namespace

Suite parse_suite(const std::string& text, const std::string& file,
                  const std::vector<std::pair<std::string, std::string>>& given_overrides) {
  // Overrides travel with the suite text, as trailing comment lines, so that a suite text stored
  // in results expands again to the same runs (merge, report).
  std::vector<std::pair<std::string, std::string>> overrides = recorded_overrides(text);
  std::string recorded_text = text;
  for (const auto& [k, v] : given_overrides) {
    if (!recorded_text.empty() && recorded_text.back() != '\n') recorded_text += "\n";
    recorded_text += kOverrideMark + k + "=" + v + "\n";
    overrides.emplace_back(k, v);
  }
  Resolver R(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, e.mark.line + 1, "", "not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) throw ConfigError(file, 1, "", "a suite is a YAML map with keys name, seeds, defaults, tasks, models, grid");
  R.check_map(root, "", kTopKeys);

  Suite suite;
  suite.file = file;
  suite.text = recorded_text;
  if (root["name"]) {
    try {
      suite.name = as_string(root["name"]);
    } catch (const FieldError& e) {
      R.fail(root["name"], "name", e.message);
    }
    const bool ok = !suite.name.empty() && std::all_of(suite.name.begin(), suite.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
    if (!ok) R.fail(root["name"], "name", "'" + suite.name + "' must be non-empty letters, digits, '-', '_' or '.'");
  } else {
    suite.name = std::filesystem::path(file).stem().string();
  }

  suite.seeds = {0};
  if (const YAML::Node s = root["seeds"]) {
    if (!s.IsSequence() || s.size() == 0) R.fail(s, "seeds", "expected a non-empty list of seeds, e.g. [0, 1, 2]");
    suite.seeds.clear();
    std::set<uint64_t> seen;
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string p = "seeds[" + std::to_string(i) + "]";
      int64_t v;
      try {
        v = as_int(s[i]);
      } catch (const FieldError& e) {
        R.fail(s[i], p, e.message);
      }
      if (v < 0) R.fail(s[i], p, std::to_string(v) + " must not be negative");
      if (!seen.insert(static_cast<uint64_t>(v)).second) R.fail(s[i], p, "seed " + std::to_string(v) + " is listed twice");
      suite.seeds.push_back(static_cast<uint64_t>(v));
    }
  }

  // ---- collect the layers: defaults, task entries, model entries, grid, --set
  const YAML::Node defaults = root["defaults"];
  if (defaults) {
    R.check_map(defaults, "defaults", kDefaultsKeys);
    if (defaults["model"]) R.check_map(defaults["model"], "defaults.model", model_section_keys(true));
    if (defaults["train"]) R.check_map(defaults["train"], "defaults.train", kTrainKeys);
    if (defaults["eval"]) R.check_map(defaults["eval"], "defaults.eval", kEvalKeys);
  }

  const YAML::Node task_list = root["tasks"];
  if (!task_list) throw ConfigError(file, 1, "tasks", "missing: a suite needs a list of task entries");
  if (!task_list.IsSequence() || task_list.size() == 0) R.fail(task_list, "tasks", "expected a non-empty list of task entries");
  std::map<std::string, int> task_count;
  for (size_t i = 0; i < task_list.size(); ++i) {
    const std::string p = "tasks[" + std::to_string(i) + "]";
    const YAML::Node& t = task_list[i];
    R.check_map(t, p, kTaskKeys);
    if (!t["task"]) R.fail(t, p, "missing key 'task'");
    std::string name;
    try {
      name = as_string(t["task"]);
    } catch (const FieldError& e) {
      R.fail(t["task"], p + ".task", e.message);
    }
    if (!tasks::find_task(name)) {
      try {
        tasks::make_task(name, {});
      } catch (const tasks::TaskError& e) {
        R.fail(t["task"], p + ".task", R.strip_prefix(e.what(), "task '" + name + "': "));
      }
    }
    task_count[name]++;
    if (t["params"] && !t["params"].IsMap()) R.fail(t["params"], p + ".params", "expected a map of task parameters");
    if (t["train"]) R.check_map(t["train"], p + ".train", kTrainKeys);
    if (t["eval"]) R.check_map(t["eval"], p + ".eval", kEvalKeys);
    if (t["model"]) R.check_map(t["model"], p + ".model", model_section_keys(true));
  }
  std::set<std::string> entry_names;
  std::vector<std::string> entries;
  for (size_t i = 0; i < task_list.size(); ++i) {
    const YAML::Node& t = task_list[i];
    const std::string p = "tasks[" + std::to_string(i) + "]";
    const std::string task = t["task"].Scalar();
    std::string entry = task;
    if (t["name"]) {
      try {
        entry = as_string(t["name"]);
      } catch (const FieldError& e) {
        R.fail(t["name"], p + ".name", e.message);
      }
    } else if (task_count[task] > 1) {
      // reported at the later of two entries of the task, where the clash arises
      size_t other = 0;
      while (other == i || task_list[other]["task"].Scalar() != task) ++other;
      const size_t second = std::max(i, other);
      R.fail(task_list[second], "tasks[" + std::to_string(second) + "]",
             "task '" + task + "' has several entries: give each a 'name'");
    }
    if (!entry_names.insert(entry).second)
      R.fail(t["name"] ? t["name"] : t, p + ".name", "entry name '" + entry + "' is used twice");
    entries.push_back(entry);
  }

  YAML::Node model_list = root["models"];
  if (model_list) {
    if (!model_list.IsSequence() || model_list.size() == 0) R.fail(model_list, "models", "expected a non-empty list of model entries");
  }
  std::vector<std::string> model_names;
  const size_t n_models = model_list ? model_list.size() : 1;
  for (size_t i = 0; i < n_models; ++i) {
    if (!model_list) {
      model_names.push_back("default");
      break;
    }
    const std::string p = "models[" + std::to_string(i) + "]";
    const YAML::Node& m = model_list[i];
    R.check_map(m, p, kModelEntryKeys);
    if (!m["name"]) R.fail(m, p, "missing key 'name'");
    std::string name;
    try {
      name = as_string(m["name"]);
    } catch (const FieldError& e) {
      R.fail(m["name"], p + ".name", e.message);
    }
    if (std::find(model_names.begin(), model_names.end(), name) != model_names.end())
      R.fail(m["name"], p + ".name", "model name '" + name + "' is used twice");
    model_names.push_back(name);
    if (m["model"]) R.check_map(m["model"], p + ".model", model_section_keys(true));
    if (m["train"]) R.check_map(m["train"], p + ".train", kTrainKeys);
  }

  // grid axes: "section.key": [values]
  std::vector<std::vector<Assignment>> axes;
  if (const YAML::Node g = root["grid"]) {
    if (!g.IsMap()) R.fail(g, "grid", "expected a map of field: [values], e.g. model.layers: [1, 2, 4]");
    for (const auto& kv : g) {
      const std::string field = kv.first.Scalar();
      const std::string p = "grid." + field;
      const auto dot = field.find('.');
      const std::string section = dot == std::string::npos ? "" : field.substr(0, dot);
      const std::string key = dot == std::string::npos ? field : field.substr(dot + 1);
      const std::vector<std::string>* keys = section == "model" ? &model::ModelConfig::keys()
                                             : section == "train" ? &kTrainKeys
                                             : section == "eval"  ? &kEvalKeys
                                                                  : nullptr;
      if (section != "params") {
        bool known = (keys && std::find(keys->begin(), keys->end(), key) != keys->end() && field != "model.vocab") ||
                     (section == "model" && std::find(kStage2Keys.begin(), kStage2Keys.end(), key) != kStage2Keys.end());
        if (!known) {
          std::vector<std::string> all;
          for (const auto& k : model::ModelConfig::keys())
            if (k != "vocab") all.push_back("model." + k);
          for (const auto& k : kTrainKeys) all.push_back("train." + k);
          for (const auto& k : kEvalKeys) all.push_back("eval." + k);
          std::string msg = "unknown grid field '" + field + "'";
          const std::string near = tasks::closest_name(field, all);
          if (!near.empty()) msg += " (did you mean '" + near + "'?)";
          R.fail(kv.first, p, msg + "; a grid field is model.KEY, train.KEY, eval.KEY or params.KEY");
        }
      }
      if (!kv.second.IsSequence() || kv.second.size() == 0)
        R.fail(kv.second, p, "expected a non-empty list of values");
      std::vector<Assignment> axis;
      for (size_t i = 0; i < kv.second.size(); ++i)
        axis.push_back({section, key, kv.second[i], Loc{p + "[" + std::to_string(i) + "]", line_of(kv.second[i])}});
      axes.push_back(std::move(axis));
    }
  }
  std::vector<Assignment> sets;
  for (const auto& [k, v] : overrides) {
    const auto dot = k.find('.');
    const std::string section = dot == std::string::npos ? "" : k.substr(0, dot);
    if (section != "model" && section != "train" && section != "eval" && section != "params")
      throw ConfigError("--set", 0, k, "expected model.KEY, train.KEY, eval.KEY or params.KEY");
    YAML::Node value;
    try {
      value = YAML::Load(v);
      if (!value.IsScalar() && !value.IsSequence() && !value.IsMap()) value = YAML::Node(v);
    } catch (const YAML::Exception&) {
      value = YAML::Node(v);  // not a YAML scalar (e.g. '*'): a plain string
    }
    sets.push_back({section, k.substr(dot + 1), value, Loc{"--set " + k, 0}});
  }

  // ---- expand: task entry × model entry × grid point × seed
  std::vector<std::vector<const Assignment*>> points = {{}};
  for (const auto& axis : axes) {
    std::vector<std::vector<const Assignment*>> next;
    for (const auto& pt : points)
      for (const auto& a : axis) {
        auto q = pt;
        q.push_back(&a);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }

  auto apply_section = [&](const YAML::Node& map, const std::string& path, const std::string& section, RunSpec& r,
                           std::map<std::string, Loc>& where) {
    if (!map) return;
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      const Loc loc{path + "." + key, line_of(kv.second)};
      if (section == "model") R.apply_run_model(r, key, kv.second, loc, where);
      else if (section == "train") R.apply_train(r.train, key, kv.second, loc, where);
      else if (section == "eval") {
        R.apply_eval(r.eval, key, kv.second, loc, where);
        if (key == "shifts") where["eval.shift_locs"] = loc;
      }
    }
  };

  auto apply_params = [&](const YAML::Node& map, const std::string& path, RunSpec& r, std::map<std::string, Loc>& where) {
    if (!map) return;
    for (const auto& kv : map) {
      const std::string k = kv.first.Scalar();
      try {
        r.params[k] = param_text(kv.second);
      } catch (const FieldError& e) {
        R.fail(kv.second, path + "." + k, e.message);
      }
      where["params." + k] = Loc{path + "." + k, line_of(kv.second)};
    }
  };
  // One grid-point or --set assignment.
  auto apply_assignment = [&](const Assignment& a, RunSpec& r, std::map<std::string, Loc>& where,
                              std::vector<Loc>& shift_locs) {
    if (a.section == "params") {
      try {
        r.params[a.key] = param_text(a.value);
      } catch (const FieldError& e) {
        R.fail(a.loc, e.message);
      }
      where["params." + a.key] = a.loc;
    } else if (a.section == "model") {
      R.apply_run_model(r, a.key, a.value, a.loc, where);
    } else if (a.section == "train") {
      if (std::find(kTrainKeys.begin(), kTrainKeys.end(), a.key) == kTrainKeys.end())
        R.fail(a.loc, "unknown train key '" + a.key + "'");
      R.apply_train(r.train, a.key, a.value, a.loc, where);
    } else {
      if (std::find(kEvalKeys.begin(), kEvalKeys.end(), a.key) == kEvalKeys.end())
        R.fail(a.loc, "unknown eval key '" + a.key + "'");
      R.apply_eval(r.eval, a.key, a.value, a.loc, where);
      if (a.key == "shifts") shift_locs = R.shift_locs_;
      R.shift_locs_.clear();
    }
  };

  // Builds a resolved config's task (an error names the offending parameter where it was set)
  // and validates its model with the task's vocabulary.
  using LocOf = std::function<Loc(const std::string&, const std::string&)>;
  auto make_task_and_model = [&](RunSpec& r, const LocOf& loc_of, const Loc& task_loc, const std::string& params_path,
                                 const std::string& model_path) {
    std::unique_ptr<tasks::Task> task;
    try {
      task = tasks::make_task(r.task, r.params, {r.train.data_seed});
    } catch (const tasks::TaskError& e) {
      R.fail(e.param().empty() ? task_loc : loc_of("params." + e.param(), params_path),
             R.strip_prefix(e.what(), "task '" + r.task + "': "));
    }
    r.model.vocab = task->vocab().size();
    try {
      r.model.validate();
    } catch (const model::ModelError& e) {
      const std::string msg = e.what();
      std::string key;
      if (msg.rfind("model.", 0) == 0) key = msg.substr(6, msg.find(':') - 6);
      R.fail(loc_of("model." + key, model_path), msg);
    }
    return task;
  };

  // ---- searches (stage 1): defaults → the search's own sections → --set; no grid
  if (const YAML::Node list = root["searches"]) {
    if (!list.IsSequence() || list.size() == 0) R.fail(list, "searches", "expected a non-empty list of searches");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string p = "searches[" + std::to_string(i) + "]";
      const YAML::Node& n = list[i];
      R.check_map(n, p, kSearchKeys);
      for (const char* required : {"name", "task"})
        if (!n[required]) R.fail(n, p, std::string("missing key '") + required + "'");
      SearchSpec sp;
      sp.index = i;
      try {
        sp.name = as_string(n["name"]);
        sp.task = as_string(n["task"]);
      } catch (const FieldError& e) {
        R.fail(n, p, e.message);
      }
      const bool ok = !sp.name.empty() && std::all_of(sp.name.begin(), sp.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
      if (!ok) R.fail(n["name"], p + ".name", "'" + sp.name + "' must be non-empty letters, digits, '-', '_' or '.' (it names a file)");
      for (const auto& other : suite.searches)
        if (other.name == sp.name) R.fail(n["name"], p + ".name", "search name '" + sp.name + "' is used twice");
      if (n["params"] && !n["params"].IsMap()) R.fail(n["params"], p + ".params", "expected a map of task parameters");
      if (n["train"]) R.check_map(n["train"], p + ".train", kTrainKeys);
      if (n["eval"]) R.check_map(n["eval"], p + ".eval", kEvalKeys);
      if (n["model"]) R.check_map(n["model"], p + ".model", model_section_keys(false));
      RunSpec base;
      std::map<std::string, Loc> where;
      std::vector<Loc> shift_locs;
      base.task = sp.task;
      if (defaults) {
        apply_section(defaults["model"], "defaults.model", "model", base, where);
        apply_section(defaults["train"], "defaults.train", "train", base, where);
        apply_section(defaults["eval"], "defaults.eval", "eval", base, where);
      }
      apply_params(n["params"], p + ".params", base, where);
      apply_section(n["model"], p + ".model", "model", base, where);
      apply_section(n["train"], p + ".train", "train", base, where);
      apply_section(n["eval"], p + ".eval", "eval", base, where);
      for (const auto& a : sets) apply_assignment(a, base, where, shift_locs);
      R.shift_locs_.clear();
      auto loc_of = [&](const std::string& field, const std::string& fallback) {
        const auto it = where.find(field);
        return it != where.end() ? it->second : Loc{fallback, line_of(n)};
      };
      auto field = [&](const char* key, const std::function<void(const YAML::Node&)>& read) {
        if (!n[key]) return;
        try {
          read(n[key]);
        } catch (const FieldError& e) {
          R.fail(n[key], p + "." + key, e.message);
        }
      };
      field("population", [&](const YAML::Node& v) { sp.population = positive(as_int(v)); });
      field("stagger", [&](const YAML::Node& v) { sp.stagger = as_bool(v); });
      field("seed", [&](const YAML::Node& v) {
        const int64_t seed = as_int(v);
        if (seed < 0) throw FieldError{std::to_string(seed) + " must not be negative"};
        sp.seed = static_cast<uint64_t>(seed);
      });
      if (n["arch_fraction"]) {
        try {
          sp.arch_fraction = as_real(n["arch_fraction"]);
        } catch (const FieldError& e) {
          R.fail(n["arch_fraction"], p + ".arch_fraction", e.message);
        }
        if (!(sp.arch_fraction > 0 && sp.arch_fraction < 1))
          R.fail(n["arch_fraction"], p + ".arch_fraction",
                 format_double(sp.arch_fraction) + " is outside (0, 1) (the share of the training data held out as D_arch)");
      }
      const auto task = make_task_and_model(base, loc_of, Loc{p + ".task", line_of(n["task"])}, p + ".params", p + ".model");
      if (!base.model.mlp_has_spline() && !base.model.attn_has_spline())
        R.fail(n["model"] ? n["model"] : n, p + ".model",
               "the searched model has no spline: set activation: spline and/or attention: spline-score | spline-kernel");
      const Loc length_loc = loc_of("train.length", p + ".train.length");
      R.check_length(*task, sp.task, base.model.max_len, base.train.length_min, length_loc, "training length");
      R.check_length(*task, sp.task, base.model.max_len, base.train.length_max, length_loc, "training length");
      if (base.train.examples > 0) {
        const auto n_arch = arch_examples(static_cast<uint64_t>(base.train.examples), sp.arch_fraction);
        if (n_arch < 1 || n_arch >= static_cast<uint64_t>(base.train.examples))
          R.fail(n["arch_fraction"] ? Loc{p + ".arch_fraction", line_of(n["arch_fraction"])} : loc_of("train.examples", p),
                 "arch_fraction " + format_double(sp.arch_fraction) + " of " + std::to_string(base.train.examples) +
                     " examples leaves D_arch or D_wts empty");
      }
      if (base.eval.lengths.empty()) base.eval.lengths = {base.train.length_max};
      sp.params = base.params, sp.model = base.model, sp.train = base.train, sp.eval = base.eval;
      base.entry = sp.name, base.seed = sp.seed;
      YAML::Emitter e;
      e << YAML::BeginMap << YAML::Key << "search" << YAML::Value << YAML::BeginMap;
      e << YAML::Key << "population" << YAML::Value << sp.population;
      e << YAML::Key << "arch_fraction" << YAML::Value << format_double(sp.arch_fraction);
      e << YAML::Key << "stagger" << YAML::Value << sp.stagger << YAML::EndMap << YAML::EndMap;
      sp.resolved_yaml = run_yaml(base) + e.c_str() + "\n";
      sp.id = short_hash(sp.resolved_yaml);
      suite.searches.push_back(std::move(sp));
    }
  }

  for (size_t ti = 0; ti < task_list.size(); ++ti) {
    const YAML::Node& t = task_list[ti];
    const std::string tp = "tasks[" + std::to_string(ti) + "]";
    for (size_t mi = 0; mi < n_models; ++mi) {
      const std::string mp = "models[" + std::to_string(mi) + "]";
      for (const auto& point : points) {
        RunSpec base;
        std::map<std::string, Loc> where;
        std::vector<Loc> shift_locs;
        base.task = t["task"].Scalar();
        base.entry = entries[ti];
        base.model_name = model_names[mi];
        if (defaults) {
          apply_section(defaults["model"], "defaults.model", "model", base, where);
          apply_section(defaults["train"], "defaults.train", "train", base, where);
          apply_section(defaults["eval"], "defaults.eval", "eval", base, where);
          if (defaults["eval"] && defaults["eval"]["shifts"]) shift_locs = R.shift_locs_;
          R.shift_locs_.clear();
        }
        apply_params(t["params"], tp + ".params", base, where);
        apply_section(t["model"], tp + ".model", "model", base, where);
        apply_section(t["train"], tp + ".train", "train", base, where);
        apply_section(t["eval"], tp + ".eval", "eval", base, where);
        if (t["eval"] && t["eval"]["shifts"]) shift_locs = R.shift_locs_;
        R.shift_locs_.clear();
        if (model_list) {
          apply_section(model_list[mi]["model"], mp + ".model", "model", base, where);
          apply_section(model_list[mi]["train"], mp + ".train", "train", base, where);
        }
        std::vector<const Assignment*> all = point;
        for (const auto& s : sets) all.push_back(&s);
        for (const Assignment* a : all) {
          apply_assignment(*a, base, where, shift_locs);
          if (a->loc.path.rfind("grid.", 0) == 0) {
            const std::string value = a->value.IsScalar() ? a->value.Scalar() : param_text(a->value);
            base.grid += (base.grid.empty() ? "" : " ") + a->section + "." + a->key + "=" + value;
          }
        }

        // ---- cross-field checks, each reported where the offending field was set
        auto loc_of = [&](const std::string& field, const std::string& fallback) {
          const auto it = where.find(field);
          return it != where.end() ? it->second : Loc{fallback, line_of(t)};
        };
        const auto task = make_task_and_model(base, loc_of, Loc{tp + ".task", line_of(t["task"])}, tp + ".params", mp);
        auto check_length = [&](int n, const Loc& loc, const std::string& what) {
          R.check_length(*task, base.task, base.model.max_len, n, loc, what);
        };
        const Loc length_loc = loc_of("train.length", tp + ".train.length");
        check_length(base.train.length_min, length_loc, "training length");
        check_length(base.train.length_max, length_loc, "training length");
        if (base.eval.lengths.empty()) base.eval.lengths = {base.train.length_max};
        const Loc lengths_loc = loc_of("eval.lengths", tp + ".eval.lengths");
        for (int n : base.eval.lengths) check_length(n, lengths_loc, "evaluation length");
        for (size_t si = 0; si < base.eval.shifts.size(); ++si) {
          const Loc sloc = si < shift_locs.size() ? shift_locs[si] : loc_of("eval.shifts", tp + ".eval.shifts");
          tasks::RawParams shifted = base.params;
          for (const auto& [k, v] : base.eval.shifts[si].params) shifted[k] = v;
          std::unique_ptr<tasks::Task> st;
          try {
            st = tasks::make_task(base.task, shifted, {base.train.data_seed});
          } catch (const tasks::TaskError& e) {
            R.fail(sloc, "shift: " + R.strip_prefix(e.what(), "task '" + base.task + "': "));
          }
          if (!(st->vocab() == task->vocab()))
            R.fail(sloc, "shift " + base.eval.shifts[si].label +
                             " changes the task's vocabulary; a shift may only change the input distribution");
        }

        std::string stage2_yaml;  // what the run's id must also depend on
        if (!base.splines_from.empty() || base.freeze_splines) {
          YAML::Emitter e;
          e << YAML::BeginMap << YAML::Key << "freeze_splines" << YAML::Value << base.freeze_splines;
          e << YAML::Key << "splines_from" << YAML::Value << base.splines_from;
          if (!base.splines_from.empty()) {
            const Loc sloc = loc_of("model.splines_from", mp + ".model.splines_from");
            std::vector<std::string> names;
            for (const auto& sp : suite.searches) {
              names.push_back(sp.name);
              if (sp.name == base.splines_from) base.search = static_cast<int>(sp.index);
            }
            std::string why;
            if (base.search >= 0) {
              const SearchSpec& sp = suite.searches[static_cast<size_t>(base.search)];
              std::vector<SplineTensor> shapes = spline_layout(sp.model);
              for (auto& st : shapes) st.values.assign(static_cast<size_t>(st.keypoints), 0.0f);
              why = splines_mismatch(shapes, base.model);
              if (!why.empty()) why = "the splines of search '" + sp.name + "' do not fit this model: " + why;
              e << YAML::Key << "search_config" << YAML::Value << YAML::Literal << sp.resolved_yaml;
            } else if (std::filesystem::is_regular_file(base.splines_from)) {
              try {
                const SplinesFile f = read_splines_file(base.splines_from);
                why = splines_mismatch(f.splines, base.model);
                if (!why.empty()) why = "splines file " + base.splines_from + " does not fit this model: " + why;
                std::string bytes;
                for (const auto& st : f.splines)
                  bytes += st.name + std::string(reinterpret_cast<const char*>(st.values.data()),
                                                 st.values.size() * sizeof(float));
                e << YAML::Key << "splines_hash" << YAML::Value << short_hash(bytes);
              } catch (const ResultsError& err) {
                why = err.what();
              }
              base.splines_path = base.splines_from;
            } else {
              why = "'" + base.splines_from + "' is neither a search of this suite nor an existing splines file";
              const std::string near = tasks::closest_name(base.splines_from, names);
              if (!near.empty()) why += " (did you mean '" + near + "'?)";
              if (!names.empty()) {
                why += "; searches:";
                for (size_t i = 0; i < names.size(); ++i) why += (i ? ", " : " ") + names[i];
              }
            }
            if (!why.empty()) R.fail(sloc, why);
          }
          e << YAML::EndMap;
          stage2_yaml = std::string(e.c_str()) + "\n";
        }

        for (uint64_t seed : suite.seeds) {
          RunSpec r = base;
          r.seed = seed;
          r.index = suite.runs.size();
          r.resolved_yaml = run_yaml(r) + stage2_yaml;
          r.id = short_hash(r.resolved_yaml);
          suite.runs.push_back(std::move(r));
        }
      }
    }
  }
  return suite;
}

}  // namespace srbench::harness
