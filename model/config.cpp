#include "model/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

namespace srbench::model {

const char* to_string(Position p) {
  switch (p) {
    case Position::Learned: return "learned";
    case Position::Sinusoidal: return "sinusoidal";
    case Position::Rope: return "rope";
    case Position::Alibi: return "alibi";
    case Position::None: return "none";
  }
  return "?";
}
const char* to_string(Norm n) { return n == Norm::Layer ? "layer" : "rms"; }
const char* to_string(Activation a) { return a == Activation::Gelu ? "gelu" : "relu"; }
const char* to_string(Attention) { return "softmax"; }
const char* to_string(Lime) { return "none"; }

namespace {

[[noreturn]] void fail(const std::string& key, const std::string& message) {
  throw ModelError("model." + key + ": " + message);
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

int parse_int(const std::string& key, const std::string& text) {
  const std::string t = trim(text);
  try {
    YAML::Node n = YAML::Load(t);
    if (n.IsScalar()) return n.as<int>();
  } catch (const YAML::Exception&) {
  }
  fail(key, "expected an integer, got '" + t + "'");
}

// Picks the enum value whose name is `text`; `later` names values that are specified but not
// implemented yet.
template <typename E>
E parse_choice(const std::string& key, const std::string& text, std::initializer_list<E> values,
               std::initializer_list<const char*> later = {}) {
  const std::string t = trim(text);
  std::string names;
  for (E v : values) {
    if (t == to_string(v)) return v;
    names += (names.empty() ? "" : ", ") + std::string(to_string(v));
  }
  for (const char* l : later)
    if (t == l) fail(key, "'" + t + "' is not implemented yet (implemented: " + names + ")");
  fail(key, "unknown value '" + t + "' (expected one of: " + names + ")");
}

}  // namespace

const std::vector<std::string>& ModelConfig::keys() {
  static const std::vector<std::string> k = {"vocab",    "layers",     "d_model",   "heads",
                                             "mlp_ratio", "max_len",   "position",  "norm",
                                             "activation", "attention", "lime",      "lime_init"};
  return k;
}

void ModelConfig::set(const std::string& key, const std::string& value_text) {
  if (key == "vocab") vocab = parse_int(key, value_text);
  else if (key == "layers") layers = parse_int(key, value_text);
  else if (key == "d_model") d_model = parse_int(key, value_text);
  else if (key == "heads") heads = parse_int(key, value_text);
  else if (key == "mlp_ratio") mlp_ratio = parse_int(key, value_text);
  else if (key == "max_len") max_len = parse_int(key, value_text);
  else if (key == "position")
    position = parse_choice(key, value_text, {Position::Learned, Position::Sinusoidal, Position::Rope,
                                              Position::Alibi, Position::None});
  else if (key == "norm") norm = parse_choice(key, value_text, {Norm::Layer, Norm::Rms});
  else if (key == "activation")
    activation = parse_choice(key, value_text, {Activation::Gelu, Activation::Relu}, {"spline"});
  else if (key == "attention")
    attention = parse_choice(key, value_text, {Attention::Softmax}, {"spline-score", "spline-kernel"});
  else if (key == "lime") lime = parse_choice(key, value_text, {Lime::None}, {"static"});
  else if (key == "lime_init") {
    const std::string t = trim(value_text);
    if (t != "uniform" && t != "identity") fail(key, "unknown value '" + t + "' (expected one of: uniform, identity)");
    lime_init = t;
  } else if (key.rfind("mlp_spline", 0) == 0 || key.rfind("attn_spline", 0) == 0) {
    fail(key, "spline settings are not implemented yet");
  } else {
    std::string all;
    for (const auto& k : keys()) all += (all.empty() ? "" : ", ") + k;
    fail(key, "unknown key (valid keys: " + all + ")");
  }
}

void ModelConfig::apply_yaml(const YAML::Node& map) {
  if (!map.IsMap()) throw ModelError("model: expected a map of model settings");
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (kv.second.IsMap()) {  // nested (mlp_spline: {...}): dotted keys
      for (const auto& sub : kv.second) set(key + "." + sub.first.as<std::string>(), "");
      continue;
    }
    if (!kv.second.IsScalar()) fail(key, "expected a single value");
    set(key, kv.second.Scalar());
  }
}

std::string ModelConfig::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "vocab" << YAML::Value << vocab;
  out << YAML::Key << "layers" << YAML::Value << layers;
  out << YAML::Key << "d_model" << YAML::Value << d_model;
  out << YAML::Key << "heads" << YAML::Value << heads;
  out << YAML::Key << "mlp_ratio" << YAML::Value << mlp_ratio;
  out << YAML::Key << "max_len" << YAML::Value << max_len;
  out << YAML::Key << "position" << YAML::Value << to_string(position);
  out << YAML::Key << "norm" << YAML::Value << to_string(norm);
  out << YAML::Key << "activation" << YAML::Value << to_string(activation);
  out << YAML::Key << "attention" << YAML::Value << to_string(attention);
  out << YAML::Key << "lime" << YAML::Value << to_string(lime);
  out << YAML::Key << "lime_init" << YAML::Value << lime_init;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

ModelConfig ModelConfig::from_yaml(const std::string& text) {
  YAML::Node n;
  try {
    n = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ModelError(std::string("model config: not valid YAML: ") + e.what());
  }
  ModelConfig c;
  c.apply_yaml(n);
  return c;
}

void ModelConfig::validate() const {
  auto positive = [](const char* key, int v) {
    if (v < 1) fail(key, "must be >= 1, got " + std::to_string(v));
  };
  if (vocab < 1) fail("vocab", "must be set to the vocabulary size (>= 1), got " + std::to_string(vocab));
  positive("layers", layers);
  positive("d_model", d_model);
  positive("heads", heads);
  positive("mlp_ratio", mlp_ratio);
  positive("max_len", max_len);
  if (d_model % heads != 0)
    fail("d_model", "d_model " + std::to_string(d_model) + " is not divisible by heads " + std::to_string(heads));
  if (position == Position::Rope && head_size() % 2 != 0)
    fail("position", "rope needs an even head size d_model/heads, got " + std::to_string(head_size()));
  if (position == Position::Sinusoidal && d_model % 2 != 0)
    fail("position", "sinusoidal needs an even d_model, got " + std::to_string(d_model));
}

}  // namespace srbench::model
