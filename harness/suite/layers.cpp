#include "harness/suite/layers.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "harness/suite/fields.hpp"
#include "model/error.hpp"

namespace srbench::harness::suite {

const std::vector<std::string> kStage2Keys = {"freeze_splines", "splines_from", "splines_randomise"};
const std::vector<std::string> kPythonKeys = {"module", "kwargs", "device"};

namespace {

bool is_python_key(const std::string& key) {
  return std::find(kPythonKeys.begin(), kPythonKeys.end(), key) != kPythonKeys.end();
}

// "package.module:factory": dotted Python identifiers, one colon.
void check_module_path(const std::string& m) {
  const auto colon = m.find(':');
  const auto identifier = [](const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  bool ok = colon != std::string::npos && m.find(':', colon + 1) == std::string::npos && identifier(m.substr(colon + 1));
  if (ok) {
    std::string part;
    std::istringstream in(m.substr(0, colon));
    int parts = 0;
    while (std::getline(in, part, '.')) ok = ok && identifier(part), ++parts;
    ok = ok && parts > 0 && m[colon - 1] != '.' && m[0] != '.';
  }
  if (!ok)
    throw FieldError{"expected 'package.module:factory' (an import path, a colon, the function that builds the model), got '" +
                     m + "'"};
}

}  // namespace

const std::vector<std::string>& model_section_keys(bool stage2) {
  static const auto make = [](bool with_stage2) {
    std::vector<std::string> keys = model::ModelConfig::keys();
    keys.push_back("mlp_spline");
    keys.push_back("attn_spline");
    if (with_stage2) keys.insert(keys.end(), kStage2Keys.begin(), kStage2Keys.end());
    keys.insert(keys.end(), kPythonKeys.begin(), kPythonKeys.end());
    return keys;
  };
  static const std::vector<std::string> plain = make(false), with = make(true);
  return stage2 ? with : plain;
}

void Layers::section(const YAML::Node& map, const std::string& path, const std::string& section) {
  if (!map) return;
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    const SourceLoc loc{R_.file(), path + "." + key, line_of(kv.second)};
    if (section == "model") model_key(key, kv.second, loc);
    else if (section == "train") train_key(key, kv.second, loc);
    else eval_key(key, kv.second, loc);
  }
}

void Layers::params(const YAML::Node& map, const std::string& path) {
  if (!map) return;
  for (const auto& kv : map) {
    const std::string k = kv.first.Scalar();
    const SourceLoc loc{R_.file(), path + "." + k, line_of(kv.second)};
    try {
      r_.params[k] = param_text(kv.second);
    } catch (const FieldError& e) {
      loc.fail(e.message);
    }
    where_["params." + k] = loc;
  }
}

void Layers::assign(const Assignment& a) {
  if (a.section == "params") {
    try {
      r_.params[a.key] = param_text(a.value);
    } catch (const FieldError& e) {
      a.loc.fail(e.message);
    }
    where_["params." + a.key] = a.loc;
  } else if (a.section == "model") {
    model_key(a.key, a.value, a.loc);
  } else if (a.section == "train") {
    train_key(a.key, a.value, a.loc);
  } else {
    eval_key(a.key, a.value, a.loc);
  }
}

SourceLoc Layers::loc_of(const std::string& field, const SourceLoc& fallback) const {
  const auto it = where_.find(field);
  return it != where_.end() ? it->second : fallback;
}

namespace {

// Runs a field's reader, reporting a FieldError at `loc`.
template <typename F>
void reading(const SourceLoc& loc, F&& read) {
  try {
    read();
  } catch (const FieldError& e) {
    loc.fail(e.message);
  }
}

}  // namespace

void Layers::train_key(const std::string& key, const YAML::Node& v, const SourceLoc& loc) {
  const TrainField* f = find_field(train_fields(), key);
  if (!f) loc.fail(unknown_key_message(key, field_keys(train_fields()), "train key"));
  ReadSite site{loc, where_};
  reading(loc, [&] { f->read(r_.train, v, site); });
  where_["train." + key] = loc;
}

void Layers::eval_key(const std::string& key, const YAML::Node& v, const SourceLoc& loc) {
  const EvalField* f = find_field(eval_fields(), key);
  if (!f) loc.fail(unknown_key_message(key, field_keys(eval_fields()), "eval key"));
  ReadSite site{loc, where_};
  reading(loc, [&] { f->read(r_.eval, v, site); });
  where_["eval." + key] = loc;
}

// A `model:` key: the stage-2 keys go to the RunSpec, the rest to its ModelConfig (spline
// settings also as nested maps).
void Layers::model_key(const std::string& key, const YAML::Node& v, const SourceLoc& loc) {
  if (key == "freeze_splines" || key == "splines_from" || key == "splines_randomise") {
    reading(loc, [&] {
      if (key == "freeze_splines") {
        r_.freeze_splines = as_bool(v);
      } else if (key == "splines_randomise") {
        r_.splines_randomise = as_int(v);
        if (r_.splines_randomise < 0)
          throw FieldError{"must be a non-negative integer (the seed of the randomisation), got " + v.Scalar()};
      } else {
        r_.splines_from = as_string(v);
        if (r_.splines_from.empty()) throw FieldError{"must name a search of this suite or a splines file"};
        r_.splines_from_loc = loc;
      }
    });
    where_["model." + key] = loc;
    model_history_.emplace_back(key, loc);
    return;
  }
  if (key == "arch") {  // python: a harness arch, not a ModelConfig one
    r_.python.on = v.IsScalar() && v.Scalar() == "python";
    if (r_.python.on) {
      where_["model.arch"] = loc;
      model_history_.emplace_back(key, loc);
      return;
    }
  }
  if (is_python_key(key)) {
    reading(loc, [&] {
      if (key == "module") {
        r_.python.module = as_string(v);
        check_module_path(r_.python.module);
        r_.python.loc = loc;
      } else if (key == "kwargs") {
        if (!v.IsMap()) throw FieldError{"expected a map of the factory's keyword arguments, e.g. {hidden: 128}, got " + describe(v)};
        YAML::Emitter e;
        e << YAML::Flow << v;
        r_.python.kwargs = e.c_str();
      } else {
        r_.python.device = as_string(v);
        if (r_.python.device.empty()) throw FieldError{"must name a torch device, e.g. cpu or cuda"};
      }
    });
    where_["model." + key] = loc;
    model_history_.emplace_back(key, loc);
    return;
  }
  const std::vector<std::string>& keys = model::ModelConfig::keys();
  if (key == "mlp_spline" || key == "attn_spline") {  // a nested map of spline settings
    if (!v.IsMap()) loc.fail("expected a map of spline settings, e.g. {keypoints: 32, range: 4}, got " + describe(v));
    std::vector<std::string> subs;
    for (const auto& k : keys)
      if (k.rfind(key + ".", 0) == 0) subs.push_back(k.substr(key.size() + 1));
    for (const auto& kv : v) {
      const std::string sub = kv.first.Scalar();
      const SourceLoc sub_loc{R_.file(), loc.path + "." + sub, line_of(kv.first)};
      if (std::find(subs.begin(), subs.end(), sub) == subs.end()) {
        sub_loc.fail(unknown_key_message(sub, subs, "key", " in " + key));
      }
      model_key(key + "." + sub, kv.second, SourceLoc{R_.file(), sub_loc.path, line_of(kv.second)});
    }
    return;
  }
  if (key == "vocab") loc.fail("the vocabulary size comes from the task and cannot be set");
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    std::vector<std::string> settable;
    for (const auto& k : keys)
      if (k != "vocab") settable.push_back(k);
    settable.insert(settable.end(), kPythonKeys.begin(), kPythonKeys.end());
    loc.fail(unknown_key_message(key, settable, "model key"));
  }
  if (!v.IsScalar()) loc.fail("expected a scalar, got " + describe(v));
  try {
    r_.model.set(key, v.Scalar());
  } catch (const model::ModelError& e) {
    loc.fail(strip_prefix(e.what(), "model." + key + ": "));
  }
  where_["model." + key] = loc;
  model_history_.emplace_back(key, loc);
}

bool Layers::model_key_applies(const std::string& key) const {
  if (r_.python.on) return key == "arch" || key == "max_len" || is_python_key(key);
  if (is_python_key(key)) return false;
  if (std::find(kStage2Keys.begin(), kStage2Keys.end(), key) != kStage2Keys.end()) return r_.model.transformer();
  return model::ModelConfig::applies(r_.model.arch, key);
}

namespace {

// The text of `key`'s default value, as set() reads it.
std::string default_text(const std::string& key) {
  const auto* f = find_field(model::model_fields(), key);
  YAML::Emitter e;
  f->write(model::ModelConfig{}, e);
  return e.c_str();
}

}  // namespace

std::vector<std::string> Layers::drop_inapplicable(const std::string& entry_path, const std::string& entry_name) {
  const std::string arch = arch_name(r_);
  for (const auto& [key, loc] : model_history_) {
    if (model_key_applies(key) || loc.path.rfind(entry_path + ".", 0) != 0) continue;
    std::string own;
    for (const auto& k : model::ModelConfig::keys())
      if (k != "vocab" && k != "arch" && model_key_applies(k)) own += (own.empty() ? "" : ", ") + k;
    for (const auto& k : kPythonKeys)
      if (model_key_applies(k)) own += (own.empty() ? "" : ", ") + k;
    loc.fail("'" + key + "' does not apply to arch " + arch + " (model entry '" + entry_name + "'; the keys of " + arch +
             ": " + own + "). A key that does not apply is refused in a model entry; from defaults, a task entry, a "
             "grid axis or --set it is dropped");
  }
  std::vector<std::string> dropped;
  std::vector<std::string> candidates = model::ModelConfig::keys();
  candidates.insert(candidates.end(), kStage2Keys.begin(), kStage2Keys.end());
  candidates.insert(candidates.end(), kPythonKeys.begin(), kPythonKeys.end());
  for (const auto& key : candidates) {
    const auto it = where_.find("model." + key);
    if (it == where_.end() || model_key_applies(key)) continue;
    dropped.push_back(key + " (" + it->second.path + ")");
    if (is_python_key(key)) r_.python = PythonModel{};
    else if (key == "freeze_splines") r_.freeze_splines = false;
    else if (key == "splines_from") r_.splines_from.clear(), r_.splines_from_loc = {};
    else if (key == "splines_randomise") r_.splines_randomise = -1;
    else r_.model.set(key, default_text(key));
    where_.erase(it);
  }
  return dropped;
}

void Layers::check_length(const tasks::Task& task, int n, const SourceLoc& loc, const std::string& what) const {
  try {
    task.check_length(n);
  } catch (const tasks::TaskError& e) {
    loc.fail(what + ": " + strip_prefix(e.what(), "task '" + r_.task + "': "));
  }
  const int len = task.max_sequence_length(n);
  if (len > r_.model.max_len)
    loc.fail(what + " " + std::to_string(n) + " makes sequences of up to " + std::to_string(len) +
             " tokens, beyond the model's max_len " + std::to_string(r_.model.max_len) +
             " (raise model.max_len or shorten it)");
}

std::unique_ptr<tasks::Task> Layers::resolve_task(const SourceLoc& task_loc, const std::string& params_path,
                                                  const std::string& model_path, int entry_line) {
  auto at = [&](const std::string& field, const std::string& fallback) {
    return loc_of(field, SourceLoc{R_.file(), fallback, entry_line});
  };
  std::unique_ptr<tasks::Task> task;
  try {
    task = tasks::make_task(r_.task, r_.params, {r_.train.data_seed});
  } catch (const tasks::TaskError& e) {
    (e.param().empty() ? task_loc : at("params." + e.param(), params_path))
        .fail(strip_prefix(e.what(), "task '" + r_.task + "': "));
  }
  r_.model.vocab = task->vocab().size();
  try {
    r_.model.validate();
  } catch (const model::ModelError& e) {
    const std::string msg = e.what();
    std::string key;
    if (msg.rfind("model.", 0) == 0) key = msg.substr(6, msg.find(':') - 6);
    const SourceLoc loc = at("model." + key, model_path);
    // an inherited value of a key that applies is checked like a stated one (linear-rnn.md): say
    // which entry inherited it, since the line that set it may serve other entries too
    if (!key.empty() && loc.path.rfind(model_path, 0) != 0)
      loc.fail(msg + " (inherited by model entry '" + r_.model_name + "', arch " + arch_name(r_) +
               "; state the entry's own value to override it)");
    loc.fail(msg);
  }
  return task;
}

void Layers::check_lengths(const tasks::Task& task, const std::string& entry_path, int entry_line, bool check_eval) {
  auto at = [&](const std::string& field, const std::string& fallback) {
    return loc_of(field, SourceLoc{R_.file(), fallback, entry_line});
  };
  if (r_.train.length_per_batch && r_.train.examples > 0)
    at("train.length_per", entry_path + ".train.length_per")
        .fail("length_per: batch draws one length per batch from the unbounded generator; it does not apply to a "
              "finite training set (train.examples " + std::to_string(r_.train.examples) + ")");
  const SourceLoc length_loc = at("train.length", entry_path + ".train.length");
  check_length(task, r_.train.length_min, length_loc, "training length");
  check_length(task, r_.train.length_max, length_loc, "training length");
  if (r_.eval.lengths.empty()) r_.eval.lengths = {r_.train.length_max};
  if (!check_eval) return;
  const SourceLoc lengths_loc = at("eval.lengths", entry_path + ".eval.lengths");
  for (int n : r_.eval.lengths) check_length(task, n, lengths_loc, "evaluation length");
  for (size_t si = 0; si < r_.eval.shifts.size(); ++si) {
    const SourceLoc sloc =
        loc_of("eval.shifts[" + std::to_string(si) + "]", at("eval.shifts", entry_path + ".eval.shifts"));
    tasks::RawParams shifted = r_.params;
    for (const auto& [k, v] : r_.eval.shifts[si].params) shifted[k] = v;
    std::unique_ptr<tasks::Task> st;
    try {
      st = tasks::make_task(r_.task, shifted, {r_.train.data_seed});
    } catch (const tasks::TaskError& e) {
      sloc.fail("shift: " + strip_prefix(e.what(), "task '" + r_.task + "': "));
    }
    if (!(st->vocab() == task.vocab()))
      sloc.fail("shift " + r_.eval.shifts[si].label +
                " changes the task's vocabulary; a shift may only change the input distribution");
  }
}

}  // namespace srbench::harness::suite
