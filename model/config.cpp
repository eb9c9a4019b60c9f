#include "model/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <tuple>

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
const char* to_string(Activation a) {
  switch (a) {
    case Activation::Gelu: return "gelu";
    case Activation::Relu: return "relu";
    case Activation::Spline: return "spline";
  }
  return "?";
}
const char* to_string(Attention a) {
  switch (a) {
    case Attention::Softmax: return "softmax";
    case Attention::SplineScore: return "spline-score";
    case Attention::SplineKernel: return "spline-kernel";
  }
  return "?";
}
const char* to_string(Lime l) { return l == Lime::Static ? "static" : "none"; }
const char* to_string(Extrapolate e) { return e == Extrapolate::Constant ? "constant" : "linear"; }
const char* to_string(SplineInit i) {
  switch (i) {
    case SplineInit::Gelu: return "gelu";
    case SplineInit::Relu: return "relu";
    case SplineInit::Identity: return "identity";
    case SplineInit::Exp: return "exp";
    case SplineInit::Elu1: return "elu1";
    case SplineInit::Zero: return "zero";
  }
  return "?";
}
const char* to_string(SplineShare s) { return s == SplineShare::Layer ? "layer" : "model"; }

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

double parse_real(const std::string& key, const std::string& text) {
  const std::string t = trim(text);
  try {
    YAML::Node n = YAML::Load(t);
    if (n.IsScalar()) return n.as<double>();
  } catch (const YAML::Exception&) {
  }
  fail(key, "expected a number, got '" + t + "'");
}

// The shortest text that reads back as the same double.
std::string real_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Picks the enum value whose name is `text`.
template <typename E>
E parse_choice(const std::string& key, const std::string& text, std::initializer_list<E> values) {
  const std::string t = trim(text);
  std::string names;
  for (E v : values) {
    if (t == to_string(v)) return v;
    names += (names.empty() ? "" : ", ") + std::string(to_string(v));
  }
  fail(key, "unknown value '" + t + "' (expected one of: " + names + ")");
}

}  // namespace

namespace {

const char* const kSplineFields[] = {"keypoints", "range", "extrapolate", "init", "share"};

void check_keypoints(const std::string& key, int k) {
  if (k < 2) fail(key, "a spline needs at least 2 keypoints, got " + std::to_string(k));
}
void check_range(const std::string& key, double r) {
  if (!(r > 0) || !std::isfinite(r)) fail(key, "the spline range R must be a finite number > 0, got " + real_text(r));
}

// Sets field `field` of a spline section; `key` is the full dotted key, for messages.
void set_spline(SplineConfig& sc, const std::string& key, const std::string& field, const std::string& text) {
  if (field == "keypoints") {
    const int k = parse_int(key, text);
    check_keypoints(key, k);
    sc.keypoints = k;
  } else if (field == "range") {
    const double r = parse_real(key, text);
    check_range(key, r);
    sc.range = r;
  } else if (field == "extrapolate") {
    sc.extrapolate = parse_choice(key, text, {Extrapolate::Constant, Extrapolate::Linear});
  } else if (field == "init") {
    sc.init = parse_choice(key, text, {SplineInit::Gelu, SplineInit::Relu, SplineInit::Identity, SplineInit::Exp,
                                       SplineInit::Elu1, SplineInit::Zero});
  } else if (field == "share") {
    sc.share = parse_choice(key, text, {SplineShare::Layer, SplineShare::Model});
  } else {
    std::string all;
    for (const char* f : kSplineFields) all += (all.empty() ? "" : ", ") + std::string(f);
    fail(key, "unknown spline setting '" + field + "' (valid: " + all + ")");
  }
}

void emit_spline(YAML::Emitter& out, const char* name, const SplineConfig& sc, SplineInit init) {
  out << YAML::Key << name << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "keypoints" << YAML::Value << sc.keypoints;
  out << YAML::Key << "range" << YAML::Value << real_text(sc.range);
  out << YAML::Key << "extrapolate" << YAML::Value << to_string(sc.extrapolate);
  out << YAML::Key << "init" << YAML::Value << to_string(init);
  out << YAML::Key << "share" << YAML::Value << to_string(sc.share);
  out << YAML::EndMap;
}

}  // namespace

const std::vector<std::string>& ModelConfig::keys() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v = {"vocab",      "layers",    "d_model", "heads",    "mlp_ratio", "max_len",
                                  "position",   "norm",      "activation", "attention", "lime", "lime_init"};
    for (const char* section : {"mlp_spline", "attn_spline"})
      for (const char* f : kSplineFields) v.push_back(std::string(section) + "." + f);
    return v;
  }();
  return k;
}

bool ModelConfig::operator==(const ModelConfig& o) const {
  auto resolved = [](const ModelConfig& c) {
    SplineConfig m = c.mlp_spline, a = c.attn_spline;
    m.init = c.mlp_init();
    a.init = c.attn_init();
    return std::tuple(c.vocab, c.layers, c.d_model, c.heads, c.mlp_ratio, c.max_len, c.position, c.norm,
                      c.activation, c.attention, c.lime, c.lime_init, m, a);
  };
  return resolved(*this) == resolved(o);
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
    activation = parse_choice(key, value_text, {Activation::Gelu, Activation::Relu, Activation::Spline});
  else if (key == "attention")
    attention =
        parse_choice(key, value_text, {Attention::Softmax, Attention::SplineScore, Attention::SplineKernel});
  else if (key == "lime") lime = parse_choice(key, value_text, {Lime::None, Lime::Static});
  else if (key == "lime_init") {
    const std::string t = trim(value_text);
    if (t != "uniform" && t != "identity") fail(key, "unknown value '" + t + "' (expected one of: uniform, identity)");
    lime_init = t;
  } else if (key == "mlp_spline" || key == "attn_spline") {  // a whole section, as a YAML map
    YAML::Node n;
    try {
      n = YAML::Load(value_text);
    } catch (const YAML::Exception&) {
    }
    if (!n.IsMap()) fail(key, "expected a map of spline settings, e.g. {keypoints: 32, init: relu}");
    for (const auto& kv : n) {
      const std::string sub = key + "." + kv.first.as<std::string>();
      if (!kv.second.IsScalar()) fail(sub, "expected a single value");
      set(sub, kv.second.Scalar());
    }
  } else if (key.rfind("mlp_spline.", 0) == 0) {
    set_spline(mlp_spline, key, key.substr(11), value_text);
  } else if (key.rfind("attn_spline.", 0) == 0) {
    set_spline(attn_spline, key, key.substr(12), value_text);
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
      for (const auto& sub : kv.second) {
        const std::string dotted = key + "." + sub.first.as<std::string>();
        if (!sub.second.IsScalar()) fail(dotted, "expected a single value");
        set(dotted, sub.second.Scalar());
      }
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
  emit_spline(out, "mlp_spline", mlp_spline, mlp_init());
  emit_spline(out, "attn_spline", attn_spline, attn_init());
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
  check_keypoints("mlp_spline.keypoints", mlp_spline.keypoints);
  check_keypoints("attn_spline.keypoints", attn_spline.keypoints);
  check_range("mlp_spline.range", mlp_spline.range);
  check_range("attn_spline.range", attn_spline.range);
  if (position == Position::Alibi && attention == Attention::SplineKernel)
    fail("position", "alibi is not defined for model.attention: spline-kernel (the kernel form has no scores to "
                     "bias); use position rope, learned, sinusoidal or none, or attention softmax / spline-score");
}

}  // namespace srbench::model
