// compare_suite_files EXPECTED.h5 ACTUAL.h5: do two suite files hold the same runs with the same
// results, timings aside? Used by test_slurm.sh to hold a suite run through Slurm against a plain
// local sweep.
//
// Checked: no run id twice in either /summary; the same run ids; every /summary field but wall_s
// and tokens_per_s equal (NaN equals NaN; the metrics: each of metric_fields()); and per run its
// resolved config, training curve, evaluation conditions and rows (with seen_frac, input_space
// and position_acc), its splines; and the searches (/splines/<name>): config,
// status, spline values and each model's final val_acc. Prints every difference. Exit 0 same, 1 different, 2 unreadable.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <variant>

#include "harness/core/metric_fields.hpp"
#include "harness/results/results.hpp"

using namespace srbench::harness;

namespace {

int differences = 0;

void differ(const std::string& run, const std::string& what, const std::string& a, const std::string& b) {
  std::printf("run %s: %s differs: expected %s, got %s\n", run.c_str(), what.c_str(), a.c_str(), b.c_str());
  ++differences;
}

void same_text(const std::string& run, const std::string& what, const std::string& a, const std::string& b) {
  if (a != b) differ(run, what, "'" + a + "'", "'" + b + "'");
}

void same_int(const std::string& run, const std::string& what, int64_t a, int64_t b) {
  if (a != b) differ(run, what, std::to_string(a), std::to_string(b));
}

void same_double(const std::string& run, const std::string& what, double a, double b) {
  if (!((std::isnan(a) && std::isnan(b)) || a == b)) {
    char x[40], y[40];
    std::snprintf(x, sizeof x, "%.17g", a);
    std::snprintf(y, sizeof y, "%.17g", b);
    differ(run, what, x, y);
  }
}

void same_value(const std::string& run, const std::string& what, int64_t a, int64_t b) { same_int(run, what, a, b); }
void same_value(const std::string& run, const std::string& what, double a, double b) { same_double(run, what, a, b); }

// Every metric of metric_fields().
void compare_metrics(const std::string& run, const RunMetrics& a, const RunMetrics& b) {
  for (const auto& f : metric_fields())
    std::visit([&](auto member) { same_value(run, f.name, a.*member, b.*member); }, f.member);
}

// The summary rows and runs of a suite file by run id; a run id seen twice counts as a difference.
struct Indexed {
  std::map<std::string, SummaryRow> rows;
  std::map<std::string, RunResult> runs;
  std::map<std::string, SplinesFile> searches;
};

Indexed index_file(const std::string& path) {
  const SuiteFile f = read_suite_file(path);
  Indexed out;
  for (const auto& r : f.summary)
    if (!out.rows.emplace(r.run_id, r).second) {
      std::printf("%s: run %s is in /summary twice\n", path.c_str(), r.run_id.c_str());
      ++differences;
    }
  for (const auto& r : f.runs) out.runs.emplace(r.run_id, r);
  for (const auto& s : f.searches) out.searches.emplace(s.name, s);
  return out;
}

// Spline values bit for bit, with their settings.
void compare_splines(const std::string& id, const std::vector<SplineTensor>& a, const std::vector<SplineTensor>& b) {
  same_int(id, "splines", static_cast<int64_t>(a.size()), static_cast<int64_t>(b.size()));
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    same_text(id, "spline name", a[i].name, b[i].name);
    if (!(a[i] == b[i])) differ(id, "spline " + a[i].name, "the expected values", "other values or settings");
  }
}

void compare_run(const std::string& id, const RunResult& a, const RunResult& b) {
  same_text(id, "splines_from", a.splines_from, b.splines_from);
  compare_splines(id, a.splines, b.splines);
  same_text(id, "config", a.config_yaml, b.config_yaml);
  same_text(id, "message", a.message, b.message);
  same_int(id, "curve points", static_cast<int64_t>(a.curve.size()), static_cast<int64_t>(b.curve.size()));
  for (size_t i = 0; i < std::min(a.curve.size(), b.curve.size()); ++i) {
    const std::string at = "curve[" + std::to_string(i) + "].";
    same_int(id, at + "step", a.curve[i].step, b.curve[i].step);
    same_double(id, at + "train_loss", a.curve[i].train_loss, b.curve[i].train_loss);
    same_double(id, at + "val_acc", a.curve[i].val_acc, b.curve[i].val_acc);
    same_double(id, at + "lr", a.curve[i].lr, b.curve[i].lr);
    same_double(id, at + "grad_norm", a.curve[i].grad_norm, b.curve[i].grad_norm);
    same_double(id, at + "val_token_acc", a.curve[i].val_token_acc, b.curve[i].val_token_acc);
  }
  same_int(id, "conditions", static_cast<int64_t>(a.conditions.size()), static_cast<int64_t>(b.conditions.size()));
  for (size_t i = 0; i < std::min(a.conditions.size(), b.conditions.size()); ++i)
    same_text(id, "conditions[" + std::to_string(i) + "]", a.conditions[i], b.conditions[i]);
  same_int(id, "eval rows", static_cast<int64_t>(a.eval.size()), static_cast<int64_t>(b.eval.size()));
  for (size_t i = 0; i < std::min(a.eval.size(), b.eval.size()); ++i) {
    const std::string at = "eval[" + std::to_string(i) + "].";
    same_int(id, at + "length", a.eval[i].length, b.eval[i].length);
    same_int(id, at + "condition", a.eval[i].condition, b.eval[i].condition);
    same_double(id, at + "loss", a.eval[i].loss, b.eval[i].loss);
    same_double(id, at + "token_acc", a.eval[i].token_acc, b.eval[i].token_acc);
    same_double(id, at + "seq_acc", a.eval[i].seq_acc, b.eval[i].seq_acc);
    same_double(id, at + "seen_frac", a.eval[i].seen_frac, b.eval[i].seen_frac);
    same_double(id, at + "input_space", a.eval[i].input_space, b.eval[i].input_space);
    const auto &pa = a.eval[i].position_acc, &pb = b.eval[i].position_acc;
    same_int(id, at + "position_acc size", static_cast<int64_t>(pa.size()), static_cast<int64_t>(pb.size()));
    for (size_t p = 0; p < std::min(pa.size(), pb.size()); ++p)
      same_double(id, at + "position_acc[" + std::to_string(p) + "]", pa[p], pb[p]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compare_suite_files EXPECTED.h5 ACTUAL.h5\n");
    return 2;
  }
  Indexed expected, actual;
  try {
    expected = index_file(argv[1]);
    actual = index_file(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compare_suite_files: %s\n", e.what());
    return 2;
  }
  for (const auto& [id, x] : expected.rows) {
    const auto it = actual.rows.find(id);
    if (it == actual.rows.end()) {
      std::printf("run %s (%s · %s · seed %lld) is missing from %s\n", id.c_str(), x.entry.c_str(), x.model.c_str(),
                  static_cast<long long>(x.seed), argv[2]);
      ++differences;
      continue;
    }
    const SummaryRow& y = it->second;
    same_text(id, "task", x.task, y.task);
    same_text(id, "entry", x.entry, y.entry);
    same_text(id, "model", x.model, y.model);
    same_int(id, "seed", x.seed, y.seed);
    same_text(id, "grid", x.grid, y.grid);
    same_text(id, "status", x.status, y.status);
    compare_metrics(id, x.metrics, y.metrics);
    if (expected.runs.count(id) && actual.runs.count(id)) compare_run(id, expected.runs.at(id), actual.runs.at(id));
  }
  // searches (spline stage 1): the same names, configs, splines and final accuracies
  for (const auto& [name, x] : expected.searches) {
    const auto it = actual.searches.find(name);
    if (it == actual.searches.end()) {
      std::printf("search %s is missing from %s\n", name.c_str(), argv[2]);
      ++differences;
      continue;
    }
    const std::string id = "(search " + name + ")";
    same_text(id, "config", x.config, it->second.config);
    same_text(id, "status", x.status, it->second.status);
    compare_splines(id, x.splines, it->second.splines);
    same_int(id, "models", static_cast<int64_t>(x.models.size()), static_cast<int64_t>(it->second.models.size()));
    for (size_t m = 0; m < std::min(x.models.size(), it->second.models.size()); ++m)
      same_double(id, "models[" + std::to_string(m) + "].final_val_acc", x.models[m].final_val_acc,
                  it->second.models[m].final_val_acc);
  }
  for (const auto& [name, y] : actual.searches)
    if (!expected.searches.count(name)) {
      std::printf("search %s is in %s only\n", name.c_str(), argv[2]);
      ++differences;
    }
  for (const auto& [id, y] : actual.rows)
    if (!expected.rows.count(id)) {
      std::printf("run %s (%s · %s · seed %lld) is in %s only\n", id.c_str(), y.entry.c_str(), y.model.c_str(),
                  static_cast<long long>(y.seed), argv[2]);
      ++differences;
    }
  if (differences) {
    std::printf("%d difference(s) between %s and %s\n", differences, argv[1], argv[2]);
    return 1;
  }
  std::printf("same %zu runs, same results (timings aside): %s and %s\n", expected.rows.size(), argv[1], argv[2]);
  return 0;
}
