// parse_suite: the top level of a suite — its name, seeds, task entries, model entries, grid
// and --set overrides — and the expansion into runs (task entry × model entry × grid point ×
// seed). Searches: searches.cpp; one run's layers and checks: layers.cpp.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/suggest.hpp"
#include "harness/suite/expect.hpp"
#include "harness/suite/fields.hpp"
#include "harness/suite/layers.hpp"
#include "harness/suite/python_models.hpp"
#include "harness/suite/searches.hpp"
#include "harness/suite/suite.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

using namespace suite;

namespace {

const std::vector<std::string> kTopKeys = {"name", "seeds", "python", "defaults", "tasks", "models", "grid", "searches", "expect"};
const std::vector<std::string> kDefaultsKeys = {"model", "train", "eval"};
const std::vector<std::string> kTaskKeys = {"task", "name", "params", "train", "eval", "model"};
const std::vector<std::string> kModelEntryKeys = {"name", "model", "train"};

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

std::vector<uint64_t> read_seeds(const Reader& R, const YAML::Node& s) {
  if (!s) return {0};
  if (!s.IsSequence() || s.size() == 0) R.fail(s, "seeds", "expected a non-empty list of seeds, e.g. [0, 1, 2]");
  std::vector<uint64_t> seeds;
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
    seeds.push_back(static_cast<uint64_t>(v));
  }
  return seeds;
}

// The task entries' keys, tasks and names (an entry is named after its task unless it says).
std::vector<std::string> read_task_entries(const Reader& R, const YAML::Node& task_list) {
  if (!task_list) throw ConfigError(R.file(), 1, "tasks", "missing: a suite needs a list of task entries");
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
        R.fail(t["task"], p + ".task", strip_prefix(e.what(), "task '" + name + "': "));
      }
    }
    task_count[name]++;
    if (t["params"] && !t["params"].IsMap()) R.fail(t["params"], p + ".params", "expected a map of task parameters");
    if (t["train"]) R.check_map(t["train"], p + ".train", train_keys());
    if (t["eval"]) R.check_map(t["eval"], p + ".eval", eval_keys());
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
  return entries;
}

// The model entries' names ("default" when the suite has no `models:`).
std::vector<std::string> read_model_entries(const Reader& R, const YAML::Node& model_list) {
  if (!model_list) return {"default"};
  if (!model_list.IsSequence() || model_list.size() == 0) R.fail(model_list, "models", "expected a non-empty list of model entries");
  std::vector<std::string> names;
  for (size_t i = 0; i < model_list.size(); ++i) {
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
    if (std::find(names.begin(), names.end(), name) != names.end())
      R.fail(m["name"], p + ".name", "model name '" + name + "' is used twice");
    names.push_back(name);
    if (m["model"]) R.check_map(m["model"], p + ".model", model_section_keys(true));
    if (m["train"]) R.check_map(m["train"], p + ".train", train_keys());
  }
  return names;
}

// Grid axes, "section.key": [values], as assignments.
std::vector<std::vector<Assignment>> read_grid(const Reader& R, const YAML::Node& g) {
  std::vector<std::vector<Assignment>> axes;
  if (!g) return axes;
  if (!g.IsMap()) R.fail(g, "grid", "expected a map of field: [values], e.g. model.layers: [1, 2, 4]");
  for (const auto& kv : g) {
    const std::string field = kv.first.Scalar();
    const std::string p = "grid." + field;
    const auto dot = field.find('.');
    const std::string section = dot == std::string::npos ? "" : field.substr(0, dot);
    const std::string key = dot == std::string::npos ? field : field.substr(dot + 1);
    const std::vector<std::string>* keys = section == "model" ? &model::ModelConfig::keys()
                                           : section == "train" ? &train_keys()
                                           : section == "eval"  ? &eval_keys()
                                                                : nullptr;
    if (section != "params") {
      const bool known = (keys && std::find(keys->begin(), keys->end(), key) != keys->end() && field != "model.vocab") ||
                         (section == "model" && std::find(kStage2Keys.begin(), kStage2Keys.end(), key) != kStage2Keys.end());
      if (!known) {
        std::vector<std::string> all;
        for (const auto& k : model::ModelConfig::keys())
          if (k != "vocab") all.push_back("model." + k);
        for (const auto& k : train_keys()) all.push_back("train." + k);
        for (const auto& k : eval_keys()) all.push_back("eval." + k);
        std::string msg = "unknown grid field '" + field + "'";
        const std::string near = closest_name(field, all);
        if (!near.empty()) msg += " (did you mean '" + near + "'?)";
        R.fail(kv.first, p, msg + "; a grid field is model.KEY, train.KEY, eval.KEY or params.KEY");
      }
    }
    if (!kv.second.IsSequence() || kv.second.size() == 0) R.fail(kv.second, p, "expected a non-empty list of values");
    std::vector<Assignment> axis;
    for (size_t i = 0; i < kv.second.size(); ++i)
      axis.push_back({section, key, kv.second[i], R.at(kv.second[i], p + "[" + std::to_string(i) + "]")});
    axes.push_back(std::move(axis));
  }
  return axes;
}

// --set KEY=VALUE: VALUE read as YAML; what YAML cannot read as a value is a plain string.
std::vector<Assignment> read_overrides(const Reader& R, const std::vector<std::pair<std::string, std::string>>& overrides) {
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
    sets.push_back({section, k.substr(dot + 1), value, SourceLoc{R.file(), "--set " + k, 0}});
  }
  return sets;
}

// Every combination of one value per axis, in order (the last axis varies fastest).
std::vector<std::vector<const Assignment*>> grid_points(const std::vector<std::vector<Assignment>>& axes) {
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
  return points;
}

// The search a stage-2 run's splines_from names, checked against the run's model; a file path
// is left for the sweep (complete_run then needs the file's hash).
void link_search(RunSpec& r, const Suite& suite, const SourceLoc& loc) {
  std::vector<std::string> names;
  for (const auto& sp : suite.searches) {
    names.push_back(sp.name);
    if (sp.name == r.splines_from) r.search = static_cast<int>(sp.index);
  }
  r.splines_from_loc = loc;
  if (r.search >= 0) {
    const SearchSpec& sp = suite.searches[static_cast<size_t>(r.search)];
    const std::string why = search_splines_mismatch(sp, r.model);
    if (!why.empty()) loc.fail("the splines of search '" + sp.name + "' do not fit this model: " + why);
    return;
  }
  if (std::filesystem::is_regular_file(r.splines_from)) return;
  std::string why = "'" + r.splines_from + "' is neither a search of this suite nor an existing splines file";
  const std::string near = closest_name(r.splines_from, names);
  if (!near.empty()) why += " (did you mean '" + near + "'?)";
  if (!names.empty()) {
    why += "; searches:";
    for (size_t i = 0; i < names.size(); ++i) why += (i ? ", " : " ") + names[i];
  }
  loc.fail(why);
}

}  // namespace

Suite load_suite(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, "", "cannot read the suite file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_suite(ss.str(), path, overrides);
}

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
  const Reader R(file);
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
  suite.name = root["name"] ? R.file_name(root["name"], "name") : std::filesystem::path(file).stem().string();
  suite.seeds = read_seeds(R, root["seeds"]);
  if (const YAML::Node py = root["python"]) {
    try {
      suite.python = as_string(py);
    } catch (const FieldError& e) {
      R.fail(py, "python", e.message);
    }
    if (suite.python.empty()) R.fail(py, "python", "must name a Python interpreter, e.g. /usr/bin/python3 or .venv/bin/python");
  }
  PythonSources python_sources(python_interpreter(suite));

  const YAML::Node defaults = root["defaults"];
  if (defaults) {
    R.check_map(defaults, "defaults", kDefaultsKeys);
    if (defaults["model"]) R.check_map(defaults["model"], "defaults.model", model_section_keys(true));
    if (defaults["train"]) R.check_map(defaults["train"], "defaults.train", train_keys());
    if (defaults["eval"]) R.check_map(defaults["eval"], "defaults.eval", eval_keys());
  }
  const YAML::Node task_list = root["tasks"];
  const std::vector<std::string> entries = read_task_entries(R, task_list);
  const YAML::Node model_list = root["models"];
  const std::vector<std::string> model_names = read_model_entries(R, model_list);
  const auto axes = read_grid(R, root["grid"]);
  const std::vector<Assignment> sets = read_overrides(R, overrides);
  const auto points = grid_points(axes);

  auto apply_defaults = [&](Layers& layers) {
    if (!defaults) return;
    layers.section(defaults["model"], "defaults.model", "model");
    layers.section(defaults["train"], "defaults.train", "train");
    layers.section(defaults["eval"], "defaults.eval", "eval");
  };
  if (const YAML::Node list = root["searches"]) suite.searches = read_searches(R, list, apply_defaults, sets);

  // ---- expand: task entry × model entry × grid point × seed
  for (size_t ti = 0; ti < task_list.size(); ++ti) {
    const YAML::Node& t = task_list[ti];
    const std::string tp = "tasks[" + std::to_string(ti) + "]";
    for (size_t mi = 0; mi < model_names.size(); ++mi) {
      const std::string mp = "models[" + std::to_string(mi) + "]";
      std::set<std::string> points_seen;  // grid labels of this (task entry, model entry)
      for (const auto& point : points) {
        RunSpec base;
        base.task = t["task"].Scalar();
        base.entry = entries[ti];
        base.model_name = model_names[mi];
        Layers layers(R, base);
        apply_defaults(layers);
        layers.params(t["params"], tp + ".params");
        layers.section(t["model"], tp + ".model", "model");
        layers.section(t["train"], tp + ".train", "train");
        layers.section(t["eval"], tp + ".eval", "eval");
        if (model_list) {
          layers.section(model_list[mi]["model"], mp + ".model", "model");
          layers.section(model_list[mi]["train"], mp + ".train", "train");
        }
        std::vector<const Assignment*> all = point;
        for (const auto& s : sets) all.push_back(&s);
        for (const Assignment* a : all) layers.assign(*a);
        // recurrent.md: keys that do not apply under the run's arch are refused in the model
        // entry and dropped elsewhere; a grid axis that does not apply shows as `-` and does not
        // expand the entry (its points then repeat one run, which appears once)
        base.dropped = layers.drop_inapplicable(mp + ".model", model_names[mi]);
        if (base.python.on && base.python.module.empty())
          layers.loc_of("model.arch", SourceLoc{file, mp + ".model.arch", line_of(t)})
              .fail("arch python needs module: 'package.module:factory' (the function that builds the model)");
        for (const Assignment* a : point) {
          const bool applies = a->section != "model" || layers.model_key_applies(a->key);
          const std::string value = !applies ? "-" : a->value.IsScalar() ? a->value.Scalar() : param_text(a->value);
          base.grid += (base.grid.empty() ? "" : " ") + a->section + "." + a->key + "=" + value;
        }
        if (!points_seen.insert(base.grid).second) continue;
        // cross-field checks, each reported where the offending field was set
        const auto task = layers.resolve_task(R.at(t["task"], tp + ".task"), tp + ".params", mp, line_of(t));
        layers.check_lengths(*task, tp, line_of(t), true);
        if (!base.splines_from.empty())
          link_search(base, suite, layers.loc_of("model.splines_from", SourceLoc{file, mp + ".model.splines_from", line_of(t)}));
        else if (base.splines_randomise >= 0)
          layers.loc_of("model.splines_randomise", SourceLoc{file, mp + ".model.splines_randomise", line_of(t)})
              .fail("splines_randomise randomises the splines of splines_from, and this run has no splines_from");

        if (base.python.on) base.python.source = python_sources.source(base.python.module);
        for (uint64_t seed : suite.seeds) {
          RunSpec r = base;
          r.seed = seed;
          r.index = suite.runs.size();
          if (!r.needs_splines_file()) complete_run(r, suite);
          suite.runs.push_back(std::move(r));
        }
      }
    }
  }
  if (const YAML::Node list = root["expect"]) suite.expectations = read_expectations(R, list, suite);
  return suite;
}

}  // namespace srbench::harness
