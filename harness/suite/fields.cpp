#include "harness/suite/fields.hpp"

namespace srbench::harness::suite {

namespace {

// A field at `get(c)` (a generic lambda returning a reference into the config, const or not),
// read by `parse(node)` and written by `e << show(value)`.
template <typename C, typename Get, typename Parse, typename Show>
Field<C, const YAML::Node&, ReadSite&> field(const std::string& key, Get get, Parse parse, Show show) {
  return {key, [=](C& c, const YAML::Node& v, ReadSite&) { get(c) = parse(v); },
          [=](const C& c, YAML::Emitter& e) { e << show(get(c)); },
          [=](const C& a, const C& b) { return get(a) == get(b); }};
}

template <typename Get, typename Parse, typename Show>
TrainField train_field(const std::string& key, Get get, Parse parse, Show show) {
  return field<TrainConfig>(key, get, parse, show);
}

auto as_positive = [](const YAML::Node& v) { return positive(as_int(v)); };
auto as_positive_real = [](const YAML::Node& v) { return positive_real(as_real(v)); };
auto as_non_negative_real = [](const YAML::Node& v) { return non_negative_real(as_real(v)); };
auto same = [](const auto& v) { return v; };

const char* schedule_name(model::Schedule s) { return model::to_string(s); }

FitMetric as_fit_metric(const YAML::Node& v) {
  const std::string s = as_string(v);
  if (s == "seq_acc") return FitMetric::seq_acc;
  if (s == "token_acc") return FitMetric::token_acc;
  throw FieldError{"'" + s + "' is not one of seq_acc, token_acc"};
}

model::Schedule as_schedule(const YAML::Node& v) {
  const std::string s = as_string(v);
  if (s == "cosine") return model::Schedule::Cosine;
  if (s == "linear") return model::Schedule::Linear;
  if (s == "constant") return model::Schedule::Constant;
  throw FieldError{"'" + s + "' is not one of cosine, linear, constant"};
}

// train.length: [min, max] (uniform per example) or a single length.
void read_length(TrainConfig& t, const YAML::Node& v, ReadSite&) {
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

// train.betas: [beta1, beta2], each in [0, 1).
void read_betas(TrainConfig& t, const YAML::Node& v, ReadSite&) {
  if (!v.IsSequence() || v.size() != 2) throw FieldError{"expected [beta1, beta2], got " + describe(v)};
  const double b1 = as_real(v[0]), b2 = as_real(v[1]);
  for (double b : {b1, b2})
    if (!(b >= 0 && b < 1)) throw FieldError{format_double(b) + " is outside [0, 1) (AdamW's betas)"};
  t.beta1 = b1, t.beta2 = b2;
}

const TrainConfig kDefaults;

TrainField with_omit(TrainField f, std::function<bool(const TrainConfig&)> omit) {
  f.omit = std::move(omit);
  return f;
}

// One eval.lengths item: a length, or a range A..B (every length from A to B) or A..B:STEP
// (A, A+STEP, … up to B), appended to `out`. FieldError naming the item otherwise.
void append_lengths(const YAML::Node& x, std::vector<int>& out) {
  auto length = [](int64_t n) {
    if (n < 1 || n > 1'000'000) throw FieldError{"length " + std::to_string(n) + " is outside 1..1000000"};
    return static_cast<int>(n);
  };
  const std::string text = x.IsScalar() ? x.Scalar() : "";
  const auto dots = text.find("..");
  if (dots == std::string::npos) return out.push_back(length(as_int(x)));
  const auto colon = text.find(':', dots);
  auto number = [&](const std::string& part) {
    YAML::Node n(part);
    try {
      return as_int(n);
    } catch (const FieldError&) {
      throw FieldError{"'" + text + "' is not a length range (expected A..B or A..B:STEP with whole numbers, e.g. 41..500:20)"};
    }
  };
  const int lo = length(number(text.substr(0, dots)));
  const int hi = length(number(text.substr(dots + 2, colon == std::string::npos ? std::string::npos : colon - dots - 2)));
  const int64_t step = colon == std::string::npos ? 1 : number(text.substr(colon + 1));
  if (step < 1) throw FieldError{"the range " + text + " has step " + std::to_string(step) + " (it must be at least 1)"};
  if (lo > hi) throw FieldError{"the range " + text + " is empty (" + std::to_string(lo) + " > " + std::to_string(hi) + ")"};
  for (int64_t n = lo; n <= hi; n += step) out.push_back(static_cast<int>(n));
}

// eval.lengths: a non-empty list of lengths and ranges in 1..1000000 (or one range alone); an
// error in an item of a list is reported at the item.
void read_lengths(EvalConfig& c, const YAML::Node& v, ReadSite& site) {
  if (v.IsScalar() && v.Scalar().find("..") != std::string::npos) {
    c.lengths.clear();
    return append_lengths(v, c.lengths);
  }
  if (!v.IsSequence() || v.size() == 0) throw FieldError{"expected a non-empty list of lengths"};
  std::vector<int> out;
  for (size_t i = 0; i < v.size(); ++i) {
    try {
      append_lengths(v[i], out);
    } catch (const FieldError& e) {
      if (!v[i].IsScalar() || v[i].Scalar().find("..") == std::string::npos) throw;
      SourceLoc{site.loc.file, site.loc.path + "[" + std::to_string(i) + "]", line_of(v[i])}.fail(e.message);
    }
  }
  c.lengths = std::move(out);
}

// eval.shifts: a list of maps of task parameters, each recorded at its own place.
void read_shifts(EvalConfig& e, const YAML::Node& v, ReadSite& site) {
  if (!v.IsSequence()) throw FieldError{"expected a list of maps of task parameters, got " + describe(v)};
  e.shifts.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    const YAML::Node& m = v[i];
    const SourceLoc at{site.loc.file, site.loc.path + "[" + std::to_string(i) + "]", line_of(m)};
    if (!m.IsMap() || m.size() == 0) at.fail("expected a map of task parameters, e.g. {p1: 0.9}");
    Shift s;
    for (const auto& kv : m) {
      const std::string k = kv.first.Scalar();
      try {
        s.params[k] = param_text(kv.second);
      } catch (const FieldError& fe) {
        SourceLoc{site.loc.file, at.path + "." + k, line_of(kv.second)}.fail(fe.message);
      }
      s.label += (s.label.empty() ? "" : ",") + k + "=" + s.params[k];
    }
    e.shifts.push_back(std::move(s));
    site.where["eval.shifts[" + std::to_string(i) + "]"] = at;
  }
}

void write_shifts(const EvalConfig& c, YAML::Emitter& e) {
  e << YAML::BeginSeq;
  for (const auto& s : c.shifts) {
    e << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : s.params) e << YAML::Key << k << YAML::Value << v;
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

bool same_shifts(const EvalConfig& a, const EvalConfig& b) {
  if (a.shifts.size() != b.shifts.size()) return false;
  for (size_t i = 0; i < a.shifts.size(); ++i)
    if (a.shifts[i].params != b.shifts[i].params) return false;
  return true;
}

}  // namespace

const FieldTable<TrainConfig, const YAML::Node&, ReadSite&>& train_fields() {
  static const FieldTable<TrainConfig, const YAML::Node&, ReadSite&> t = {
      train_field("steps", [](auto& c) -> auto& { return c.steps; }, as_positive, same),
      train_field("batch", [](auto& c) -> auto& { return c.batch; }, as_positive, same),
      train_field("lr", [](auto& c) -> auto& { return c.lr; }, as_positive_real, format_double),
      train_field("warmup", [](auto& c) -> auto& { return c.warmup; },
                  [](const YAML::Node& v) { return non_negative(as_int(v)); }, same),
      train_field("schedule", [](auto& c) -> auto& { return c.schedule; }, as_schedule, schedule_name),
      train_field("weight_decay", [](auto& c) -> auto& { return c.weight_decay; }, as_non_negative_real, format_double),
      train_field("clip", [](auto& c) -> auto& { return c.clip; }, as_non_negative_real, format_double),
      train_field("eval_every", [](auto& c) -> auto& { return c.eval_every; }, as_positive, same),
      train_field("target_accuracy", [](auto& c) -> auto& { return c.target_accuracy; },
                  [](const YAML::Node& v) {
                    const double a = as_real(v);
                    if (a < 0 || a > 1) throw FieldError{v.Scalar() + " is outside [0, 1]"};
                    return a;
                  },
                  format_double),
      train_field("data_seed", [](auto& c) -> auto& { return c.data_seed; },
                  [](const YAML::Node& v) { return static_cast<uint64_t>(non_negative(as_int(v))); }, same),
      train_field("save_checkpoint", [](auto& c) -> auto& { return c.save_checkpoint; }, as_bool, same),
      train_field("spline_lr", [](auto& c) -> auto& { return c.spline_lr; }, as_positive_real, format_double),
      train_field("router_lr", [](auto& c) -> auto& { return c.router_lr; }, as_positive_real, format_double),
      {"length", read_length,
       [](const TrainConfig& c, YAML::Emitter& e) {
         e << YAML::Flow << YAML::BeginSeq << c.length_min << c.length_max << YAML::EndSeq;
       },
       [](const TrainConfig& a, const TrainConfig& b) {
         return a.length_min == b.length_min && a.length_max == b.length_max;
       }},
      train_field("examples", [](auto& c) -> auto& { return c.examples; }, as_positive, same),
      // Keys added after runs were recorded are written only when set away from their default
      // (Field::omit), so that the ids of existing runs stay as they were.
      {"betas", read_betas,
       [](const TrainConfig& c, YAML::Emitter& e) {
         e << YAML::Flow << YAML::BeginSeq << format_double(c.beta1) << format_double(c.beta2) << YAML::EndSeq;
       },
       [](const TrainConfig& a, const TrainConfig& b) { return a.beta1 == b.beta1 && a.beta2 == b.beta2; }, {},
       [](const TrainConfig& c) { return c.beta1 == kDefaults.beta1 && c.beta2 == kDefaults.beta2; }},
      with_omit(train_field("eps", [](auto& c) -> auto& { return c.eps; }, as_positive_real, format_double),
                [](const TrainConfig& c) { return c.eps == kDefaults.eps; }),
      with_omit(train_field("length_per", [](auto& c) -> auto& { return c.length_per_batch; },
                            [](const YAML::Node& v) {
                              const std::string s = as_string(v);
                              if (s != "example" && s != "batch")
                                throw FieldError{"'" + s + "' is not one of example, batch"};
                              return s == "batch";
                            },
                            [](bool per_batch) { return per_batch ? "batch" : "example"; }),
                [](const TrainConfig& c) { return !c.length_per_batch; }),
      with_omit(train_field("fit_metric", [](auto& c) -> auto& { return c.fit_metric; }, as_fit_metric, fit_metric_name),
                [](const TrainConfig& c) { return c.fit_metric == FitMetric::seq_acc; }),
  };
  return t;
}

const FieldTable<EvalConfig, const YAML::Node&, ReadSite&>& eval_fields() {
  static const FieldTable<EvalConfig, const YAML::Node&, ReadSite&> t = {
      {"lengths", read_lengths,
       [](const EvalConfig& c, YAML::Emitter& e) { e << YAML::Flow << c.lengths; },
       [](const EvalConfig& a, const EvalConfig& b) { return a.lengths == b.lengths; }},
      field<EvalConfig>("examples", [](auto& c) -> auto& { return c.examples; }, as_positive, same),
      field<EvalConfig>("val_examples", [](auto& c) -> auto& { return c.val_examples; }, as_positive, same),
      {"shifts", read_shifts, write_shifts, same_shifts},
  };
  return t;
}

const std::vector<std::string>& train_keys() {
  static const std::vector<std::string> k = field_keys(train_fields());
  return k;
}
const std::vector<std::string>& eval_keys() {
  static const std::vector<std::string> k = field_keys(eval_fields());
  return k;
}

}  // namespace srbench::harness::suite
