// Run files: /runs/<run_id> with the run's attributes (one table, run_attributes), curve, eval,
// diag, splines, routers and optional checkpoint.
#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>

#include "harness/core/metric_fields.hpp"
#include "harness/results/groups.hpp"
#include "harness/results/results.hpp"
#include "model/checkpoint.hpp"

namespace srbench::harness {

using namespace results;
using h5::Id;
using h5::where;

namespace {

[[noreturn]] void write_failed(const RunResult& r, const std::string& what) {
  throw ResultsError("write_run_group: run " + r.run_id + ": " + what);
}

// The run group's scalar attributes: each written from and read into one RunResult field.
struct RunAttribute {
  std::string name;
  RunAttributeKind kind;
  bool optional;  // absent in files written before it existed (then the field keeps its default)
  std::function<h5::Cell(const RunResult&)> get;
  std::function<void(hid_t, const RunResult&)> write;
  std::function<void(hid_t, RunResult&)> read;
};

using Kind = RunAttributeKind;
template <typename Get>
RunAttribute text_attr(const std::string& name, Kind kind, Get get, bool optional = false) {
  return {name, kind, optional, [=](const RunResult& r) { return h5::Cell(get(r)); },
          [=](hid_t g, const RunResult& r) { h5::write_attr(g, name, get(r)); },
          [=](hid_t g, RunResult& r) {
            if (!optional || h5::has_attr(g, name)) get(r) = h5::read_string_attr(g, name);
          }};
}
template <typename Get>
RunAttribute real_attr(const std::string& name, Kind kind, Get get, bool optional = false) {
  return {name, kind, optional, [=](const RunResult& r) { return h5::Cell(static_cast<double>(get(r))); },
          [=](hid_t g, const RunResult& r) { h5::write_attr(g, name, static_cast<double>(get(r))); },
          [=](hid_t g, RunResult& r) {
            if (!optional || h5::has_attr(g, name)) get(r) = h5::read_double_attr(g, name);
          }};
}
template <typename Get>
RunAttribute int_attr(const std::string& name, Kind kind, Get get, bool optional = false) {
  return {name, kind, optional, [=](const RunResult& r) { return h5::Cell(static_cast<int64_t>(get(r))); },
          [=](hid_t g, const RunResult& r) { h5::write_attr(g, name, static_cast<int64_t>(get(r))); },
          [=](hid_t g, RunResult& r) {
            if (!optional || h5::has_attr(g, name))
              get(r) = static_cast<std::remove_reference_t<decltype(get(r))>>(h5::read_int_attr(g, name));
          }};
}

// The attribute of a metric (metric_fields()); an optional one is absent in older files.
RunAttribute metric_attr(const MetricField& f) {
  return std::visit(
      [&](auto member) {
        auto get = [member](auto& r) -> auto& { return r.metrics.*member; };
        if constexpr (std::is_same_v<decltype(member), int64_t RunMetrics::*>)
          return int_attr(f.name, Kind::Metric, get, f.optional);
        else
          return real_attr(f.name, Kind::Metric, get, f.optional);
      },
      f.member);
}

// The metrics (metric_fields()) not yet in `t`, in the table's order.
void add_metric_attrs(std::vector<RunAttribute>& t) {
  for (const auto& f : metric_fields())
    if (std::none_of(t.begin(), t.end(), [&](const RunAttribute& a) { return a.name == f.name; }))
      t.push_back(metric_attr(f));
}

// Identity, outcome, the first files' metrics, bits_per_byte; then the attributes files written
// before them lack (optional), in the order they were added: splines_from and splines_task,
// ood_token_acc and chance, fitted, eval_s, and the metrics added since.
const std::vector<RunAttribute>& run_attributes() {
  static const std::vector<RunAttribute> t = [] {
    std::vector<RunAttribute> t = {
        text_attr("config", Kind::Identity, [](auto& r) -> auto& { return r.config_yaml; }),
        text_attr("task", Kind::Identity, [](auto& r) -> auto& { return r.task; }),
        text_attr("entry", Kind::Identity, [](auto& r) -> auto& { return r.entry; }),
        text_attr("model", Kind::Identity, [](auto& r) -> auto& { return r.model; }),
        text_attr("grid", Kind::Identity, [](auto& r) -> auto& { return r.grid; }),
        int_attr("seed", Kind::Identity, [](auto& r) -> auto& { return r.seed; }),
        text_attr("status", Kind::Outcome, [](auto& r) -> auto& { return r.status; }),
        text_attr("message", Kind::Outcome, [](auto& r) -> auto& { return r.message; }),
        real_attr("wall_s", Kind::Outcome, [](auto& r) -> auto& { return r.wall_s; }),
        real_attr("tokens_per_s", Kind::Outcome, [](auto& r) -> auto& { return r.tokens_per_s; }),
    };
    for (const auto& f : metric_fields())
      if (!f.optional) t.push_back(metric_attr(f));
    t.push_back(int_attr("bits_per_byte", Kind::Outcome, [](auto& r) -> auto& { return r.bits_per_byte; }));
    t.push_back(text_attr("splines_from", Kind::Outcome, [](auto& r) -> auto& { return r.splines_from; }, true));
    t.push_back(text_attr("splines_task", Kind::Outcome, [](auto& r) -> auto& { return r.splines_task; }, true));
    t.push_back(metric_attr(metric_field("ood_token_acc")));
    t.push_back(real_attr("chance", Kind::Outcome, [](auto& r) -> auto& { return r.chance; }, true));
    t.push_back(metric_attr(metric_field("fitted")));
    t.push_back(real_attr("eval_s", Kind::Outcome, [](auto& r) -> auto& { return r.eval_s; }, true));
    t.push_back(text_attr("build", Kind::Outcome, [](auto& r) -> auto& { return r.build; }, true));
    add_metric_attrs(t);
    return t;
  }();
  return t;
}

void write_eval(hid_t g, const RunResult& r) {
  Id eval = h5::create_group(g, "eval");
  std::vector<int64_t> length, condition;
  std::vector<double> loss, token_acc, seq_acc;
  for (const auto& e : r.eval) {
    length.push_back(e.length);
    condition.push_back(e.condition);
    loss.push_back(e.loss);
    token_acc.push_back(e.token_acc);
    seq_acc.push_back(e.seq_acc);
  }
  h5::write_array(eval, "length", length);
  h5::write_array(eval, "condition", condition);
  h5::write_array(eval, "loss", loss);
  h5::write_array(eval, "token_acc", token_acc);
  h5::write_array(eval, "seq_acc", seq_acc);
  // seen_frac, input_space [rows]; position_acc [rows, the longest row's positions], NaN-padded
  std::vector<double> seen, space, positions;
  size_t width = 0;
  for (const auto& e : r.eval) width = std::max(width, e.position_acc.size());
  for (const auto& e : r.eval) {
    seen.push_back(e.seen_frac);
    space.push_back(e.input_space);
    positions.insert(positions.end(), e.position_acc.begin(), e.position_acc.end());
    positions.insert(positions.end(), width - e.position_acc.size(), kNaN);
  }
  h5::write_array(eval, "seen_frac", seen);
  h5::write_array(eval, "input_space", space);
  h5::write_array(eval, "position_acc", positions.data(),
                  {static_cast<int64_t>(r.eval.size()), static_cast<int64_t>(width)});
  if (!r.conditions.empty() && r.conditions[0] != "id")
    write_failed(r, "the first condition must be \"id\", got \"" + r.conditions[0] + "\"");
  for (const auto& e : r.eval)
    if (e.condition < 0 || static_cast<size_t>(e.condition) >= std::max<size_t>(1, r.conditions.size()))
      write_failed(r, "an eval row has condition " + std::to_string(e.condition) + " but there are " +
                          std::to_string(r.conditions.size()) + " conditions");
  h5::write_strings(eval, "conditions", r.conditions.empty() ? std::vector<std::string>{"id"} : r.conditions);
}

void read_eval(hid_t g, RunResult& r) {
  Id eval = h5::open_group(g, "eval");
  const auto length = h5::read_array<int64_t>(eval, "length");
  const auto condition = h5::read_array<int64_t>(eval, "condition");
  const auto loss = h5::read_array<double>(eval, "loss");
  const auto token_acc = h5::read_array<double>(eval, "token_acc");
  const auto seq_acc = h5::read_array<double>(eval, "seq_acc");
  r.conditions = h5::read_strings(eval, "conditions");
  const size_t n = length.size();
  if (condition.size() != n || loss.size() != n || token_acc.size() != n || seq_acc.size() != n)
    throw ResultsError(where(eval) + ": length, condition, loss, token_acc and seq_acc differ in length");
  if (r.conditions.empty() || r.conditions[0] != "id")
    throw ResultsError(where(eval, "conditions") + ": the first condition must be \"id\"");
  for (size_t i = 0; i < n; ++i) {
    if (condition[i] < 0 || static_cast<size_t>(condition[i]) >= r.conditions.size())
      throw ResultsError(where(eval, "condition") + ": row " + std::to_string(i) + " has condition " +
                         std::to_string(condition[i]) + ", outside [0, " + std::to_string(r.conditions.size()) + ")");
    EvalRow row;
    row.length = length[i], row.condition = condition[i], row.loss = loss[i], row.token_acc = token_acc[i];
    row.seq_acc = seq_acc[i];
    r.eval.push_back(std::move(row));
  }
  // absent in files written before memorisation and per-position accuracy were measured
  for (const char* name : {"seen_frac", "input_space"}) {
    if (!h5::has_link(eval, name)) continue;
    const auto v = h5::read_array<double>(eval, name);
    if (v.size() != n) throw ResultsError(where(eval, name) + ": " + std::to_string(v.size()) + " rows, expected " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) (std::string(name) == "seen_frac" ? r.eval[i].seen_frac : r.eval[i].input_space) = v[i];
  }
  if (h5::has_link(eval, "position_acc")) {
    h5::Shape shape;
    const auto v = h5::read_array<double>(eval, "position_acc", 2, &shape);
    if (static_cast<size_t>(shape[0]) != n)
      throw ResultsError(where(eval, "position_acc") + ": " + std::to_string(shape[0]) + " rows, expected " + std::to_string(n));
    const auto width = static_cast<size_t>(shape[1]);
    for (size_t i = 0; i < n; ++i) {
      auto& p = r.eval[i].position_acc;
      p.assign(v.begin() + static_cast<ptrdiff_t>(i * width), v.begin() + static_cast<ptrdiff_t>((i + 1) * width));
      while (!p.empty() && std::isnan(p.back())) p.pop_back();  // the padding of shorter rows
    }
  }
}

// diag/: attn_entropy, attn_max [layers,heads], value_entropy, hidden_entropy [layers]; a model
// without attention (heads 0: a recurrent arch) writes hidden_entropy only. value_entropy_lime
// and hidden_entropy_lime [layers] beside value_entropy and hidden_entropy, optional on reading
// (files written before them have neither). diag_init/ (the same at initialisation) has the same
// members; files written before it lack it.
void write_diag(hid_t g, const RunResult& r, const Diagnostics& d, const char* group) {
  if (d.empty()) return;
  const auto L = static_cast<int64_t>(d.layers), H = static_cast<int64_t>(d.heads);
  const auto LV = static_cast<size_t>(d.has_attention() ? L : 0);
  if (d.attn_entropy.size() != static_cast<size_t>(L * H) || d.attn_max.size() != static_cast<size_t>(L * H) ||
      d.value_entropy.size() != LV || d.hidden_entropy.size() != static_cast<size_t>(L) ||
      (!d.hidden_entropy_lime.empty() &&
       (d.value_entropy_lime.size() != LV || d.hidden_entropy_lime.size() != static_cast<size_t>(L))))
    write_failed(r, std::string(group) + ": diagnostics do not match layers " + std::to_string(L) + " × heads " +
                        std::to_string(H));
  Id diag = h5::create_group(g, group);
  if (d.has_attention()) {
    h5::write_array(diag, "attn_entropy", d.attn_entropy.data(), {L, H});
    h5::write_array(diag, "attn_max", d.attn_max.data(), {L, H});
    h5::write_array(diag, "value_entropy", d.value_entropy);
    if (!d.value_entropy_lime.empty()) h5::write_array(diag, "value_entropy_lime", d.value_entropy_lime);
  }
  h5::write_array(diag, "hidden_entropy", d.hidden_entropy);
  if (!d.hidden_entropy_lime.empty()) h5::write_array(diag, "hidden_entropy_lime", d.hidden_entropy_lime);
}

void read_diag(hid_t g, const char* group, Diagnostics& out) {
  if (!h5::has_link(g, group)) return;
  Id diag = h5::open_group(g, group);
  out.hidden_entropy = h5::read_array<double>(diag, "hidden_entropy");
  out.layers = static_cast<int>(out.hidden_entropy.size());
  const auto L = static_cast<size_t>(out.layers);
  if (h5::has_link(diag, "hidden_entropy_lime")) {
    out.hidden_entropy_lime = h5::read_array<double>(diag, "hidden_entropy_lime");
    if (out.hidden_entropy_lime.size() != L)
      throw ResultsError(where(diag, "hidden_entropy_lime") + ": " + std::to_string(out.hidden_entropy_lime.size()) +
                         " values, expected one per layer (" + std::to_string(L) + ")");
  }
  const bool attention = h5::has_link(diag, "attn_entropy");
  if (!attention) {  // a model without attention: hidden_entropy only
    for (const char* name : {"attn_max", "value_entropy", "value_entropy_lime"})
      if (h5::has_link(diag, name))
        throw ResultsError(where(diag) + ": " + name + " without attn_entropy (a model without attention has "
                           "hidden_entropy only)");
    out.heads = 0;
    return;
  }
  h5::Shape dims, dims2;
  out.attn_entropy = h5::read_array<double>(diag, "attn_entropy", 2, &dims);
  out.heads = static_cast<int>(dims[1]);
  out.attn_max = h5::read_array<double>(diag, "attn_max", 2, &dims2);
  out.value_entropy = h5::read_array<double>(diag, "value_entropy");
  if (h5::has_link(diag, "value_entropy_lime")) out.value_entropy_lime = h5::read_array<double>(diag, "value_entropy_lime");
  if (out.value_entropy_lime.size() != (out.hidden_entropy_lime.empty() ? 0 : L))
    throw ResultsError(where(diag) + ": value_entropy_lime and hidden_entropy_lime must both be there, one value per "
                       "layer, or neither");
  if (dims2 != dims || static_cast<size_t>(dims[0]) != L || out.value_entropy.size() != L || dims[1] < 1)
    throw ResultsError(where(diag) + ": attn_entropy, attn_max [layers,heads] and value_entropy, hidden_entropy "
                       "[layers] disagree in shape");
}

// routers/layer<l> [H,(l+1)H] float32 (harness.md), one per LIMe router; nothing for other runs.
void write_routers(hid_t g, const RunResult& r) {
  if (r.routers.empty()) return;
  Id routers = h5::create_group(g, "routers");
  for (const auto& w : r.routers) {
    if (w.values.size() != static_cast<size_t>(w.rows * w.cols))
      write_failed(r, "router of layer " + std::to_string(w.layer) + " has " + std::to_string(w.values.size()) +
                          " values for shape [" + std::to_string(w.rows) + "," + std::to_string(w.cols) + "]");
    h5::write_array(routers, "layer" + std::to_string(w.layer), w.values.data(), {w.rows, w.cols});
  }
}

// The routers/ group of a run, if present, by layer: names layer<l> with l >= 1, float [rows,cols].
std::vector<RouterWeights> read_routers(hid_t g) {
  std::vector<RouterWeights> out;
  if (!h5::has_link(g, "routers")) return out;
  Id routers = h5::open_group(g, "routers");
  for (const auto& name : h5::link_names(routers)) {
    RouterWeights w;
    const std::string digits = name.rfind("layer", 0) == 0 ? name.substr(5) : "";
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || std::stoi(digits) < 1)
      throw ResultsError(where(routers, name) + ": unexpected member (expected layer<l>, l >= 1)");
    w.layer = std::stoi(digits);
    h5::Shape dims;
    w.values = h5::read_array<float>(routers, name, 2, &dims);
    w.rows = dims[0], w.cols = dims[1];
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.layer < b.layer; });
  return out;
}

}  // namespace

std::vector<RunAttributeValue> run_attribute_values(const RunResult& r) {
  std::vector<RunAttributeValue> out;
  for (const auto& a : run_attributes()) out.push_back({a.name, a.kind, a.optional, a.get(r)});
  return out;
}

void write_run_group(hid_t file, const RunResult& r, const model::Model* checkpoint) {
  if (r.run_id.empty()) throw ResultsError("write_run_group: the run has no run_id");
  Id runs = h5::open_or_create_group(file, "runs");
  Id g = h5::create_group(runs, r.run_id);
  for (const auto& a : run_attributes()) a.write(g, r);
  write_curve(g, r.curve);
  write_eval(g, r);
  write_diag(g, r, r.diag, "diag");
  write_diag(g, r, r.diag_init, "diag_init");
  if (!r.splines.empty()) write_splines(h5::create_group(g, "splines"), r.splines);
  write_routers(g, r);
  if (checkpoint) model::write_checkpoint(h5::create_group(g, "checkpoint"), *checkpoint);
}

void write_run_file(const std::string& path, const RunResult& result, const std::string& suite_yaml,
                    const model::Model* checkpoint) {
  h5::write_file_atomically(path, [&](hid_t file) {
    write_root_attributes(file, suite_yaml);
    write_run_group(file, result, checkpoint);
  }, h5::Checksum::Yes);
}

RunResult read_run_group(hid_t file, const std::string& run_id) {
  Id runs = h5::open_group(file, "runs");
  Id g = h5::open_group(runs, run_id);
  RunResult r;
  r.run_id = run_id;
  for (const auto& a : run_attributes()) a.read(g, r);
  r.curve = read_curve(g);
  if (h5::has_link(g, "splines")) r.splines = read_splines(h5::open_group(g, "splines"));
  read_eval(g, r);
  read_diag(g, "diag", r.diag);
  read_diag(g, "diag_init", r.diag_init);
  r.routers = read_routers(g);
  return r;
}

RunResult read_run_file(const std::string& path, std::string* suite_yaml) {
  Id file = open_results_file(path, "run file");
  check_format_version(file);
  const std::string suite = h5::read_string_attr(file, "suite");
  Id runs = h5::open_group(file, "runs");
  const auto names = h5::link_names(runs);
  if (names.size() != 1)
    throw ResultsError(where(runs) + ": a run file holds exactly one run, this one has " + std::to_string(names.size()));
  RunResult r = read_run_group(file, names[0]);
  if (suite_yaml) *suite_yaml = suite;
  return r;
}

RunFile read_run_file_at(const std::string& path) {
  RunFile f;
  f.path = path;
  f.result = read_run_file(path, &f.suite_yaml);
  return f;
}

}  // namespace srbench::harness
