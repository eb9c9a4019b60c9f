#include "model/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include "common/suggest.hpp"

namespace srbench::model {

const char* to_string(Position p) {
  switch (p) {
    case Position::Learned: return "learned";
    case Position::Sinusoidal: return "sinusoidal";
    case Position::Rope: return "rope";
    case Position::Alibi: return "alibi";
    case Position::None: return "none";
    case Position::Relative: return "relative";
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
const char* to_string(Arch a) {
  switch (a) {
    case Arch::Transformer: return "transformer";
    case Arch::Rnn: return "rnn";
    case Arch::Lstm: return "lstm";
    case Arch::Gru: return "gru";
    case Arch::StackRnn: return "stack_rnn";
    case Arch::TapeRnn: return "tape_rnn";
    case Arch::Mamba: return "mamba";
    case Arch::DeltaNet: return "deltanet";
    case Arch::Gla: return "gla";
  }
  return "?";
}
const char* to_string(Nonlinearity n) { return n == Nonlinearity::Tanh ? "tanh" : "relu"; }
const char* to_string(Eigenvalues e) { return e == Eigenvalues::Positive ? "positive" : "signed"; }
const char* to_string(InitScheme i) { return i == InitScheme::Default ? "default" : "grazzi"; }
const char* to_string(GlaDecay g) { return g == GlaDecay::Gated ? "gated" : "none"; }

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

// The text of a YAML scalar read as V; a ModelError naming the key and what was `expected` otherwise.
template <typename V>
V parse_scalar(const std::string& key, const std::string& text, const char* expected) {
  const std::string t = trim(text);
  try {
    YAML::Node n = YAML::Load(t);
    if (n.IsScalar()) return n.as<V>();
  } catch (const YAML::Exception&) {
  }
  fail(key, std::string("expected ") + expected + ", got '" + t + "'");
}

int parse_int(const std::string& key, const std::string& text) { return parse_scalar<int>(key, text, "an integer"); }
bool parse_bool(const std::string& key, const std::string& text) {
  return parse_scalar<bool>(key, text, "true or false");
}
double parse_real(const std::string& key, const std::string& text) {
  return parse_scalar<double>(key, text, "a number");
}

// The shortest text that reads back as the same double.
std::string real_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Picks the enum value whose name is `text`; otherwise names the valid ones, and the nearest
// when it is plausible (common/suggest.hpp).
template <typename E, typename Values>
E parse_choice_in(const std::string& key, const std::string& text, const Values& values) {
  const std::string t = trim(text);
  std::vector<std::string> valid;
  std::string names;
  for (E v : values) {
    if (t == to_string(v)) return v;
    valid.emplace_back(to_string(v));
    names += (names.empty() ? "" : ", ") + valid.back();
  }
  const std::string nearest = closest_name(t, valid);
  fail(key, "unknown value '" + t + "'" + (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                " (expected one of: " + names + ")");
}
template <typename E>
E parse_choice(const std::string& key, const std::string& text, std::initializer_list<E> values) {
  return parse_choice_in<E>(key, text, values);
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

using ModelField = Field<ModelConfig, const std::string&>;

// The field at `get(c)` (a generic lambda returning a reference into a config, const or not):
// read by `parse(key, text)`, written as `show(value)`.
template <typename Get, typename Parse, typename Show>
ModelField field(const std::string& key, Get get, Parse parse, Show show) {
  return {key, [=](ModelConfig& c, const std::string& text) { get(c) = parse(key, text); },
          [=](const ModelConfig& c, YAML::Emitter& e) { e << show(get(c)); },
          [=](const ModelConfig& a, const ModelConfig& b) { return get(a) == get(b); }};
}

// An integer key; validate() requires least <= value <= most.
ModelField size_field(const std::string& key, int ModelConfig::*m, int least = 1,
                      int most = std::numeric_limits<int>::max()) {
  ModelField f = field(key, [m](auto& c) -> auto& { return c.*m; }, parse_int, [](int v) { return v; });
  f.check = [key, m, least, most](const ModelConfig& c) {
    if (c.*m < least) fail(key, "must be >= " + std::to_string(least) + ", got " + std::to_string(c.*m));
    if (c.*m > most) fail(key, "must be <= " + std::to_string(most) + ", got " + std::to_string(c.*m));
  };
  return f;
}

// A key naming one value of an enum.
template <typename E>
ModelField choice_field(const std::string& key, E ModelConfig::*m, std::initializer_list<E> values) {
  const std::vector<E> all(values);
  return field(
      key, [m](auto& c) -> auto& { return c.*m; },
      [all](const std::string& k, const std::string& text) { return parse_choice_in<E>(k, text, all); },
      [](E v) { return to_string(v); });
}

// The settings of one spline section (`mlp_spline.*` or `attn_spline.*`).
void add_spline_fields(FieldTable<ModelConfig, const std::string&>& t, const std::string& section,
                       SplineConfig ModelConfig::*m, SplineInit (ModelConfig::*resolved_init)() const) {
  auto sc = [m](auto& c) -> auto& { return c.*m; };
  ModelField k = field(section + ".keypoints", [sc](auto& c) -> auto& { return sc(c).keypoints; },
                            [](const std::string& key, const std::string& text) {
                              const int v = parse_int(key, text);
                              check_keypoints(key, v);
                              return v;
                            },
                            [](int v) { return v; });
  k.check = [key = k.key, m](const ModelConfig& c) { check_keypoints(key, (c.*m).keypoints); };
  t.push_back(k);
  ModelField r = field(section + ".range", [sc](auto& c) -> auto& { return sc(c).range; },
                               [](const std::string& key, const std::string& text) {
                                 const double v = parse_real(key, text);
                                 check_range(key, v);
                                 return v;
                               },
                               real_text);
  r.check = [key = r.key, m](const ModelConfig& c) { check_range(key, (c.*m).range); };
  t.push_back(r);
  t.push_back(field(section + ".extrapolate", [sc](auto& c) -> auto& { return sc(c).extrapolate; },
                                 [](const std::string& key, const std::string& text) {
                                   return parse_choice(key, text, {Extrapolate::Constant, Extrapolate::Linear});
                                 },
                                 [](Extrapolate v) { return to_string(v); }));
  // init: unset means the site's default; written and compared resolved.
  t.push_back({section + ".init",
               [sc, key = section + ".init"](ModelConfig& c, const std::string& text) {
                 sc(c).init = parse_choice(key, text, {SplineInit::Gelu, SplineInit::Relu, SplineInit::Identity,
                                                       SplineInit::Exp, SplineInit::Elu1, SplineInit::Zero});
               },
               [resolved_init](const ModelConfig& c, YAML::Emitter& e) { e << to_string((c.*resolved_init)()); },
               [resolved_init](const ModelConfig& a, const ModelConfig& b) {
                 return (a.*resolved_init)() == (b.*resolved_init)();
               }});
  t.push_back(field(section + ".share", [sc](auto& c) -> auto& { return sc(c).share; },
                                 [](const std::string& key, const std::string& text) {
                                   return parse_choice(key, text, {SplineShare::Layer, SplineShare::Model});
                                 },
                                 [](SplineShare v) { return to_string(v); }));
}

// ---- recurrent.md's keys -------------------------------------------------------------------
// The recurrent archs' own keys, after the transformer's (so that a recurrent config's YAML reads
// vocab, arch, layers, d_model, max_len, then its own keys).
void add_recurrent_fields(FieldTable<ModelConfig, const std::string&>& t) {
  t.push_back(choice_field("nonlinearity", &ModelConfig::nonlinearity, {Nonlinearity::Tanh, Nonlinearity::Relu}));
  t.push_back(size_field("stack_size", &ModelConfig::stack_size, 2));  // a pop reads the next cell
  t.push_back(size_field("stack_cell_size", &ModelConfig::stack_cell_size));
  t.push_back(size_field("tape_size", &ModelConfig::tape_size, 2));
  t.push_back(size_field("tape_cell_size", &ModelConfig::tape_cell_size));
  t.push_back(size_field("tape_mlp", &ModelConfig::tape_mlp));
}

// ---- linear-rnn.md's keys --------------------------------------------------------------------
// After the recurrent archs' (the YAML of a linear arch is written in linear-rnn.md's order by
// to_yaml, whatever the table's).
void add_linear_fields(FieldTable<ModelConfig, const std::string&>& t) {
  t.push_back(size_field("d_state", &ModelConfig::d_state));
  // d_conv: at least 1 under mamba, 0 (no short convolution) allowed under deltanet
  ModelField conv = size_field("d_conv", &ModelConfig::d_conv, 0);
  conv.check = [](const ModelConfig& c) {
    const int least = c.arch == Arch::DeltaNet ? 0 : 1;
    if (c.d_conv < least) fail("d_conv", "must be >= " + std::to_string(least) + ", got " + std::to_string(c.d_conv));
  };
  t.push_back(conv);
  t.push_back(size_field("expand", &ModelConfig::expand));
  // dt_rank: unset is ⌈d_model/16⌉; written and compared resolved
  ModelField dt = field("dt_rank", [](auto& c) -> auto& { return c.dt_rank; }, parse_int, [](int v) { return v; });
  dt.write = [](const ModelConfig& c, YAML::Emitter& e) { e << c.resolved_dt_rank(); };
  dt.equal = [](const ModelConfig& a, const ModelConfig& b) { return a.resolved_dt_rank() == b.resolved_dt_rank(); };
  dt.check = [](const ModelConfig& c) {
    if (c.resolved_dt_rank() < 1) fail("dt_rank", "must be >= 1, got " + std::to_string(c.dt_rank));
  };
  t.push_back(dt);
  t.push_back(choice_field("eigenvalues", &ModelConfig::eigenvalues, {Eigenvalues::Positive, Eigenvalues::Signed}));
  t.push_back(field("final_norm", [](auto& c) -> auto& { return c.final_norm; }, parse_bool, [](bool v) { return v; }));
  t.push_back(choice_field("init", &ModelConfig::init, {InitScheme::Default, InitScheme::Grazzi}));
  ModelField beta = size_field("beta_scale", &ModelConfig::beta_scale, 1, 2);
  t.push_back(beta);
  t.push_back(field("gated", [](auto& c) -> auto& { return c.gated; }, parse_bool, [](bool v) { return v; }));
  t.push_back(field("output_gate", [](auto& c) -> auto& { return c.output_gate; }, parse_bool, [](bool v) { return v; }));
  // mlp_hidden: unset is F's rule; written and compared resolved
  ModelField mlp = field("mlp_hidden", [](auto& c) -> auto& { return c.gated_mlp_hidden; }, parse_int, [](int v) { return v; });
  mlp.write = [](const ModelConfig& c, YAML::Emitter& e) { e << c.resolved_mlp_hidden(); };
  mlp.equal = [](const ModelConfig& a, const ModelConfig& b) { return a.resolved_mlp_hidden() == b.resolved_mlp_hidden(); };
  mlp.check = [](const ModelConfig& c) {
    if (c.gated_mlp_hidden < -1)
      fail("mlp_hidden", "must be >= 0, got " + std::to_string(c.gated_mlp_hidden));
  };
  t.push_back(mlp);
  t.push_back(choice_field("gla_decay", &ModelConfig::gla_decay, {GlaDecay::Gated, GlaDecay::None}));
}

// The keys of a config's YAML in order: the table's, except under a linear arch, whose keys
// linear-rnn.md orders (vocab, arch, layers, d_model, max_len, then its own).
const std::vector<std::string>& linear_order(Arch a) {
  static const std::vector<std::string> mamba = {"vocab",   "arch",    "layers",      "d_model", "max_len",
                                                 "d_state", "d_conv",  "expand",      "dt_rank", "eigenvalues",
                                                 "norm",    "final_norm", "init"};
  static const std::vector<std::string> deltanet = {"vocab",  "arch",        "layers",     "d_model", "max_len",
                                                    "heads",  "d_conv",      "beta_scale", "gated",   "output_gate",
                                                    "mlp_hidden", "norm",    "final_norm", "init"};
  static const std::vector<std::string> gla = {"vocab", "arch",       "layers", "d_model",   "max_len",
                                               "heads", "gla_decay",  "mlp_hidden", "norm", "final_norm"};
  return a == Arch::DeltaNet ? deltanet : a == Arch::Gla ? gla : mamba;
}

// Every field of the table made arch-aware (the last step of building it): a key that does not
// apply under a config's arch (ModelConfig::applies) is left out of its YAML, equal whatever its
// value, and not checked.
void make_arch_aware(FieldTable<ModelConfig, const std::string&>& t) {
  for (ModelField& f : t) {
    const std::string key = f.key;
    f.omit = [key, omit = f.omit](const ModelConfig& c) { return !ModelConfig::applies(c.arch, key) || (omit && omit(c)); };
    f.equal = [key, equal = f.equal](const ModelConfig& a, const ModelConfig& b) {
      return (a.arch == b.arch && !ModelConfig::applies(a.arch, key)) || equal(a, b);
    };
    if (f.check)
      f.check = [key, check = f.check](const ModelConfig& c) {
        if (ModelConfig::applies(c.arch, key)) check(c);
      };
  }
}

}  // namespace

bool ModelConfig::applies(Arch a, const std::string& key) {
  // each recurrent or linear arch's own keys, and the archs they apply to
  static const std::vector<std::pair<std::string, std::vector<Arch>>> own = {
      {"nonlinearity", {Arch::Rnn}},        {"stack_size", {Arch::StackRnn}},   {"stack_cell_size", {Arch::StackRnn}},
      {"tape_size", {Arch::TapeRnn}},       {"tape_cell_size", {Arch::TapeRnn}}, {"tape_mlp", {Arch::TapeRnn}},
      {"d_state", {Arch::Mamba}},           {"d_conv", {Arch::Mamba, Arch::DeltaNet}},
      {"expand", {Arch::Mamba}},            {"dt_rank", {Arch::Mamba}},         {"eigenvalues", {Arch::Mamba}},
      {"final_norm", {Arch::Mamba, Arch::DeltaNet, Arch::Gla}}, {"init", {Arch::Mamba, Arch::DeltaNet}},
      {"beta_scale", {Arch::DeltaNet}},     {"gated", {Arch::DeltaNet}},        {"output_gate", {Arch::DeltaNet}},
      {"mlp_hidden", {Arch::DeltaNet, Arch::Gla}}, {"gla_decay", {Arch::Gla}}};
  for (const auto& [k, archs] : own)
    if (k == key) return std::find(archs.begin(), archs.end(), a) != archs.end();
  if (a == Arch::Transformer) return true;
  if ((a == Arch::Mamba || a == Arch::DeltaNet || a == Arch::Gla) && key == "norm") return true;  // linear-rnn.md: rms or layer, default rms
  if ((a == Arch::DeltaNet || a == Arch::Gla) && key == "heads") return true;
  return key == "vocab" || key == "arch" || key == "layers" || key == "d_model" || key == "max_len";
}

void ModelConfig::check_applies(const std::vector<std::string>& stated) const {
  for (const std::string& key : stated) {
    if (applies(arch, key)) continue;
    std::string own;
    for (const auto& k : keys())
      if (k != "vocab" && applies(arch, k)) own += (own.empty() ? "" : ", ") + k;
    fail(key, "does not apply under arch " + std::string(to_string(arch)) + " (its keys: " + own + ")");
  }
}

const FieldTable<ModelConfig, const std::string&>& model_fields() {
  static const FieldTable<ModelConfig, const std::string&> table = [] {
    FieldTable<ModelConfig, const std::string&> t;
    ModelField vocab = size_field("vocab", &ModelConfig::vocab);
    vocab.check = [](const ModelConfig& c) {
      if (c.vocab < 1) fail("vocab", "must be set to the vocabulary size (>= 1), got " + std::to_string(c.vocab));
    };
    t.push_back(vocab);
    ModelField arch = choice_field("arch", &ModelConfig::arch,
                                   {Arch::Transformer, Arch::Rnn, Arch::Lstm, Arch::Gru, Arch::StackRnn, Arch::TapeRnn,
                                    Arch::Mamba, Arch::DeltaNet, Arch::Gla});
    arch.omit = [](const ModelConfig& c) { return c.arch == Arch::Transformer; };  // transformer configs keep their text
    t.push_back(arch);
    // Every layer is a set of named tensors (ParamLayout), so a depth far beyond any trainable one
    // would spend seconds only on listing them: refused, with the bound in the message.
    t.push_back(size_field("layers", &ModelConfig::layers, 1, ModelConfig::kMaxLayers));
    t.push_back(size_field("d_model", &ModelConfig::d_model));
    t.push_back(size_field("heads", &ModelConfig::heads));
    t.push_back(size_field("mlp_ratio", &ModelConfig::mlp_ratio));
    t.push_back(size_field("max_len", &ModelConfig::max_len));
    t.push_back(choice_field("position", &ModelConfig::position,
                             {Position::Learned, Position::Sinusoidal, Position::Rope, Position::Alibi, Position::None,
                              Position::Relative}));
    // norm: its default depends on the arch (resolved_norm); a stated value is marked as stated
    ModelField norm = choice_field("norm", &ModelConfig::norm, {Norm::Layer, Norm::Rms});
    norm.read = [read = norm.read](ModelConfig& c, const std::string& text) {
      read(c, text);
      c.norm_stated = true;
    };
    norm.write = [](const ModelConfig& c, YAML::Emitter& e) { e << to_string(c.resolved_norm()); };
    norm.equal = [](const ModelConfig& a, const ModelConfig& b) { return a.resolved_norm() == b.resolved_norm(); };
    t.push_back(norm);
    t.push_back(choice_field("activation", &ModelConfig::activation,
                             {Activation::Gelu, Activation::Relu, Activation::Spline}));
    t.push_back(choice_field("attention", &ModelConfig::attention,
                             {Attention::Softmax, Attention::SplineScore, Attention::SplineKernel}));
    t.push_back(choice_field("lime", &ModelConfig::lime, {Lime::None, Lime::Static}));
    t.push_back(field(
        "lime_init", [](auto& c) -> auto& { return c.lime_init; },
        [](const std::string& key, const std::string& text) {
          const std::string v = trim(text);
          if (v != "uniform" && v != "identity") fail(key, "unknown value '" + v + "' (expected one of: uniform, identity)");
          return v;
        },
        [](const std::string& v) { return v; }));
    // Added after runs were recorded: written only when false, so that every causal config keeps its text.
    ModelField causal = field("causal", [](auto& c) -> auto& { return c.causal; }, parse_bool, [](bool v) { return v; });
    causal.omit = [](const ModelConfig& c) { return c.causal; };
    t.push_back(causal);
    add_spline_fields(t, "mlp_spline", &ModelConfig::mlp_spline, &ModelConfig::mlp_init);
    add_spline_fields(t, "attn_spline", &ModelConfig::attn_spline, &ModelConfig::attn_init);
    add_recurrent_fields(t);
    add_linear_fields(t);
    make_arch_aware(t);  // last: after every field
    return t;
  }();
  return table;
}

const std::vector<std::string>& ModelConfig::keys() {
  static const std::vector<std::string> k = field_keys(model_fields());
  return k;
}

bool ModelConfig::operator==(const ModelConfig& o) const { return equal_fields(model_fields(), *this, o); }

void ModelConfig::set(const std::string& key, const std::string& value_text) {
  if (key == "mlp_spline" || key == "attn_spline") {  // a whole section, as a YAML map
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
    return;
  }
  if (const ModelField* f = find_field(model_fields(), key)) return f->read(*this, value_text);
  for (const char* section : {"mlp_spline.", "attn_spline."}) {
    if (key.rfind(section, 0) != 0) continue;
    std::string all;
    for (const char* f : kSplineFields) all += (all.empty() ? "" : ", ") + std::string(f);
    fail(key, "unknown spline setting '" + key.substr(std::string(section).size()) + "' (valid: " + all + ")");
  }
  std::string all;
  for (const auto& k : keys()) all += (all.empty() ? "" : ", ") + k;
  fail(key, "unknown key (valid keys: " + all + ")");
}

void ModelConfig::apply_yaml(const YAML::Node& map) {
  if (!map.IsMap()) throw ModelError("model: expected a map of model settings");
  std::vector<std::string> stated;
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (kv.second.IsMap()) {  // nested (mlp_spline: {...}): dotted keys
      for (const auto& sub : kv.second) {
        const std::string dotted = key + "." + sub.first.as<std::string>();
        if (!sub.second.IsScalar()) fail(dotted, "expected a single value");
        set(dotted, sub.second.Scalar());
        stated.push_back(dotted);
      }
      continue;
    }
    if (!kv.second.IsScalar()) fail(key, "expected a single value");
    set(key, kv.second.Scalar());
    stated.push_back(key);
  }
  check_applies(stated);  // recurrent.md: a stated key that does not apply is an error
}

std::string ModelConfig::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (linear()) {  // linear-rnn.md's order
    const auto& t = model_fields();
    std::vector<const ModelField*> fields;
    std::vector<std::string> keys;
    for (const auto& k : linear_order(arch)) {
      const ModelField* f = find_field(t, k);
      if (f->omit && f->omit(*this)) continue;
      fields.push_back(f), keys.push_back(k);
    }
    write_fields_impl(out, keys, [&](size_t i, YAML::Emitter& e) { fields[i]->write(*this, e); });
  } else {
    write_fields(model_fields(), *this, out);
  }
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
  check_fields(model_fields(), *this);
  if (arch == Arch::DeltaNet && d_model % heads != 0)
    fail("heads", "d_model " + std::to_string(d_model) + " is not divisible by heads " + std::to_string(heads));
  if (arch == Arch::Gla && (d_model % 2 != 0 || (d_model / 2) % heads != 0))  // K = d/(2H) key channels per head
    fail("heads", d_model % 2 != 0 ? "gla needs an even d_model, got " + std::to_string(d_model)
                                   : "d_model/2 = " + std::to_string(d_model / 2) + " is not divisible by heads " +
                                         std::to_string(heads));
  if (arch != Arch::Transformer) return;  // the cross-field checks below are the transformer's
  if (d_model % heads != 0)
    fail("d_model", "d_model " + std::to_string(d_model) + " is not divisible by heads " + std::to_string(heads));
  if (position == Position::Rope && head_size() % 2 != 0)
    fail("position", "rope needs an even head size d_model/heads, got " + std::to_string(head_size()));
  if ((position == Position::Sinusoidal || position == Position::Relative) && d_model % 2 != 0)
    fail("position", std::string(to_string(position)) + " needs an even d_model, got " + std::to_string(d_model));
  if ((position == Position::Alibi || position == Position::Relative) && attention == Attention::SplineKernel)
    fail("position", std::string(to_string(position)) + " is not defined for model.attention: spline-kernel (the "
                     "kernel form has no scores to bias); use position rope, learned, sinusoidal or none, or "
                     "attention softmax / spline-score");
}

}  // namespace srbench::model
