#include "harness/suite/expect.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/suggest.hpp"
#include "harness/core/grid.hpp"
#include "harness/core/metric_fields.hpp"

namespace srbench::harness::suite {

namespace {

const std::vector<std::string> kExpectKeys = {"entry", "model", "minus", "metric", "length", "condition", "agg", "over",
                                              "fitted_only", "at_least", "at_most", "between", "source"};
// pool.hpp's aggregations, and the ends of the mean's 95% interval (a claim that an effect is
// there: `minus: B, agg: ci_lo, at_least: 0`)
const std::vector<std::string> kAggs = {"mean", "median", "max", "min", "ci_lo", "ci_hi"};
const std::vector<std::string> kCellMetrics = {"seq_acc", "token_acc"};  // per (length, condition)

// The names a claim may use, each list in order of first appearance.
struct SuiteNames {
  std::vector<std::string> entries, models, axes, metrics;
};
void add_once(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}
SuiteNames names_of(const Suite& suite) {
  SuiteNames n;
  for (const auto& r : suite.runs) {
    add_once(n.entries, r.entry), add_once(n.models, r.model_name);
    for (const auto& item : grid_items(r.grid)) add_once(n.axes, grid_key(item));
  }
  n.axes.insert(n.axes.begin(), "seed");
  for (const auto& f : metric_fields()) n.metrics.push_back(f.name);
  n.metrics.insert(n.metrics.end(), kCellMetrics.begin(), kCellMetrics.end());
  return n;
}

std::string list_text(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A name that must be one of `valid`; the message suggests the nearest.
std::string one_of(const Reader& R, const YAML::Node& n, const std::string& path, const std::string& what,
                   const std::vector<std::string>& valid) {
  std::string s;
  try {
    s = as_string(n);
  } catch (const FieldError& e) {
    R.fail(n, path, e.message);
  }
  if (std::find(valid.begin(), valid.end(), s) != valid.end()) return s;
  const std::string near = closest_name(s, valid);
  R.fail(n, path, "the suite has no " + what + " '" + s + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                      "; it has: " + list_text(valid));
}

double real_at(const Reader& R, const YAML::Node& n, const std::string& path) {
  try {
    const double v = as_real(n);
    if (!std::isfinite(v)) throw FieldError{"expected a finite number"};
    return v;
  } catch (const FieldError& e) {
    R.fail(n, path, e.message);
  }
}

// at_least / at_most / between: exactly one.
void read_bound(const Reader& R, const YAML::Node& e, const std::string& p, Expectation& x) {
  int given = 0;
  for (const char* k : {"at_least", "at_most", "between"}) given += e[k] ? 1 : 0;
  if (given != 1)
    R.fail(e, p, "an expectation needs exactly one of at_least, at_most, between (it has " + std::to_string(given) + ")");
  if (e["at_least"]) x.bound = "at_least", x.lo = real_at(R, e["at_least"], p + ".at_least");
  if (e["at_most"]) x.bound = "at_most", x.hi = real_at(R, e["at_most"], p + ".at_most");
  if (const YAML::Node b = e["between"]) {
    if (!b.IsSequence() || b.size() != 2) R.fail(b, p + ".between", "expected [low, high], got " + describe(b));
    x.bound = "between", x.lo = real_at(R, b[0], p + ".between[0]"), x.hi = real_at(R, b[1], p + ".between[1]");
    if (x.lo > x.hi) R.fail(b, p + ".between", "low " + format_double(x.lo) + " is above high " + format_double(x.hi));
  }
}

// The entry's evaluated lengths, and its conditions ("id", then the shifts' labels).
std::set<int64_t> lengths_of(const Suite& suite, const std::string& entry) {
  std::set<int64_t> lengths;
  for (const auto& r : suite.runs)
    if (r.entry == entry) {
      lengths.insert(r.eval.lengths.begin(), r.eval.lengths.end());
      lengths.insert(r.train.length_max);  // a task without lengths is evaluated at the training maximum
    }
  return lengths;
}
std::vector<std::string> conditions_of(const Suite& suite, const std::string& entry) {
  std::vector<std::string> conditions = {"id"};
  for (const auto& r : suite.runs)
    if (r.entry == entry)
      for (const auto& sh : r.eval.shifts) add_once(conditions, sh.label);
  return conditions;
}

// length and condition: seq_acc / token_acc at an evaluated length and condition (default id);
// shift_acc may name one shift; no other metric takes either.
void read_cell(const Reader& R, const YAML::Node& e, const std::string& p, const Suite& suite, Expectation& x) {
  const bool cell = std::find(kCellMetrics.begin(), kCellMetrics.end(), x.metric) != kCellMetrics.end();
  if (e["length"] && !cell) R.fail(e["length"], p + ".length", "length goes with metric seq_acc or token_acc, not " + x.metric);
  if (e["condition"] && !cell && x.metric != "shift_acc")
    R.fail(e["condition"], p + ".condition", "condition goes with metric seq_acc, token_acc or shift_acc, not " + x.metric);
  if (e["condition"]) {
    std::vector<std::string> valid = conditions_of(suite, x.entry);
    if (!cell) valid.erase(valid.begin());  // shift_acc: a shift, not id
    x.condition = one_of(R, e["condition"], p + ".condition", "condition of entry " + x.entry, valid);
  }
  if (!cell) return;
  if (x.condition.empty()) x.condition = "id";
  if (!e["length"]) R.fail(e, p, "metric " + x.metric + " needs a length (an evaluated length of entry " + x.entry + ")");
  try {
    x.length = positive(as_int(e["length"]));
  } catch (const FieldError& err) {
    R.fail(e["length"], p + ".length", err.message);
  }
  const std::set<int64_t> lengths = lengths_of(suite, x.entry);
  if (!lengths.count(x.length)) {
    std::string valid;
    for (int64_t n : lengths) valid += (valid.empty() ? "" : ", ") + std::to_string(n);
    R.fail(e["length"], p + ".length", "entry " + x.entry + " is not evaluated at length " + std::to_string(x.length) +
                                           "; its lengths: " + valid);
  }
}

Expectation read_one(const Reader& R, const YAML::Node& e, const std::string& p, const Suite& suite,
                     const SuiteNames& names) {
  R.check_map(e, p, kExpectKeys);
  Expectation x;
  x.loc = R.at(e, p);
  for (const char* k : {"entry", "model", "metric", "source"})
    if (!e[k]) R.fail(e, p, std::string("missing key '") + k + "': an expectation names entry, model, metric and source");
  x.entry = one_of(R, e["entry"], p + ".entry", "task entry", names.entries);
  x.model = one_of(R, e["model"], p + ".model", "model entry", names.models);
  if (e["minus"]) {
    x.minus = one_of(R, e["minus"], p + ".minus", "model entry", names.models);
    if (x.minus == x.model) R.fail(e["minus"], p + ".minus", "minus names the claim's own model '" + x.model + "'");
  }
  x.metric = one_of(R, e["metric"], p + ".metric", "metric", names.metrics);
  read_cell(R, e, p, suite, x);
  if (e["agg"]) x.agg = one_of(R, e["agg"], p + ".agg", "aggregation", kAggs);
  if (const YAML::Node o = e["over"]) {
    if (o.IsScalar()) x.over = {one_of(R, o, p + ".over", "grid axis", names.axes)};
    else if (o.IsSequence())
      for (size_t i = 0; i < o.size(); ++i)
        x.over.push_back(one_of(R, o[i], p + ".over[" + std::to_string(i) + "]", "grid axis", names.axes));
    else R.fail(o, p + ".over", "expected a grid axis or a list of them, got " + describe(o));
  }
  try {
    if (e["fitted_only"]) x.fitted_only = as_bool(e["fitted_only"]);
    x.source = as_string(e["source"]);
  } catch (const FieldError& err) {
    R.fail(e, p, err.message);
  }
  if (x.source.empty()) R.fail(e["source"], p + ".source", "an expectation needs a non-empty source");
  read_bound(R, e, p, x);
  return x;
}

}  // namespace

std::vector<Expectation> read_expectations(const Reader& R, const YAML::Node& list, const Suite& suite) {
  if (!list.IsSequence()) R.fail(list, "expect", "expected a list of expectations, got " + describe(list));
  const SuiteNames names = names_of(suite);
  std::vector<Expectation> out;
  for (size_t i = 0; i < list.size(); ++i) out.push_back(read_one(R, list[i], "expect[" + std::to_string(i) + "]", suite, names));
  return out;
}

}  // namespace srbench::harness::suite
