// Aggregation across seeds (harness.md, "Across seeds"): runs grouped by (entry, model, grid) in
// order of first appearance, each metric, evaluation cell and diagnostic summarised over the
// group's seeds. Pure functions, tested on hand-made runs; report.hpp formats the groups.
#pragma once

#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/report/stats.hpp"

namespace srbench::harness {

// One metric over a group's seeds.
struct MetricStats {
  std::string name;  // a metric of report_metrics() (metric_fields.hpp), or steps_to_target
  SeedStats stats;   // steps_to_target: over the seeds that reached the target only
};

// One evaluated (length, condition) over a group's seeds.
struct EvalCell {
  int64_t length = 0;
  std::string condition;  // "id", "p1=0.9", "train"
  SeedStats seq_acc;
  SeedStats bits_per_byte;  // loss / ln 2; only for runs that report bits per byte (n = 0 otherwise)
  SeedStats token_error;    // 1 − token_acc: the error rate at scored positions (ffl: at reads)
  SeedStats seen_frac;      // the share of the cell's examples that also occurred in training (n = 0: not measured)
};

// The diagnostics (harness.md, "Diagnostics") of a group's runs, each value over the seeds.
// Runs without diagnostics (failed, diverged) are left out, and so are runs whose [layers,heads]
// differ from the first run with diagnostics (runs of a group share their config, so none do).
struct DiagnosticsStats {
  int layers = 0, heads = 0;
  int runs = 0;                                        // runs that entered
  std::vector<SeedStats> attn_entropy, attn_max;       // [layers·heads], row-major
  std::vector<SeedStats> value_entropy, hidden_entropy;  // [layers]; value_entropy empty when heads is 0
  // LIMe's measure, over the runs that have it (n 0 where none has: files written before it).
  std::vector<SeedStats> value_entropy_lime, hidden_entropy_lime;
  bool empty() const { return runs == 0; }
  bool has_attention() const { return heads > 0; }
};

struct GroupReport {
  std::string task, entry, model, grid;
  std::string arch = "transformer";  // the runs' model.arch (recurrent.md): one per group (entry and grid fix it)
  int runs = 0, ok = 0, diverged = 0, failed = 0;
  int fitted = 0;               // runs fitted by their fit_metric (RunMetrics::fitted)
  bool fitted_only = false;     // the statistics are over the fitted runs only (report --fitted)
  std::string fit_metric = "seq_acc";  // the runs' train.fit_metric: what `fitted` read (one per group)
  int reached = 0;              // runs with steps_to_target >= 0
  bool bits_per_byte = false;   // some run of the group reports bits per byte (`text`)
  std::vector<MetricStats> metrics;  // in the order of report_metrics(), then steps_to_target
  std::vector<EvalCell> eval;        // by condition (first appearance), then length (ascending)
  DiagnosticsStats diag;
  double frac_target() const { return runs > 0 ? static_cast<double>(reached) / runs : kNaN; }
};

// The Chomsky-hierarchy benchmark's cell (chomsky.md §7.1): ood_token_acc of one (task entry,
// model entry, grid point without the `over` axis) over its seeds and the `over` axis' values.
struct ChomskyCell {
  std::string task, entry, level, model, grid;  // level: R, DCF, CS ("" for other tasks)
  std::string arch = "transformer";              // the runs' model.arch
  double chance = kNaN;     // a uniform guess's token accuracy (NaN where unknown)
  int runs = 0;             // runs in the cell (any status)
  SeedStats ood_token_acc;  // over the runs where it is defined: n, mean, max, …
};
// Cells in order of first appearance of (entry, model, grid-without-over). `over` names a grid
// axis ("train.lr"); "" groups by the whole grid point. A run's grid is "k=v k=v" (RunResult::grid).
std::vector<ChomskyCell> aggregate_chomsky(const std::vector<RunResult>& runs, const std::string& over = "");
// `report --compare A B`: for one (task entry, grid point) and metric, the paired differences
// metric(A, seed) − metric(B, seed) over the seeds where both models' runs have the metric.
struct PairedDiff {
  std::string task, entry, grid, metric;
  double mean_a = kNaN, mean_b = kNaN;  // each model's mean over the paired seeds
  SeedStats diff;                       // of A − B: n, mean, std, …, the bootstrap interval
};
// In order of first appearance of (entry, grid); metrics id_acc, ood_length_acc, ood_token_acc,
// shift_acc. With `fitted_only`, a seed pairs only when both runs are fitted.
std::vector<PairedDiff> compare_models(const std::vector<RunResult>& runs, const std::string& a, const std::string& b,
                                       bool fitted_only = false);

// The grid axes (keys) the runs' grid strings name, in order of first appearance.
std::vector<std::string> grid_axes(const std::vector<RunResult>& runs);

// The model.arch of a run's resolved config: "transformer" when the config has none (every
// transformer config, recurrent.md) or cannot be read.
std::string run_arch(const RunResult& r);
// The runs of each (task entry, model, grid) group, groups in order of first appearance: the
// grouping every per-group report uses.
std::vector<std::vector<const RunResult*>> run_groups(const std::vector<RunResult>& runs);

// Groups runs by (entry, model, grid) in order of first appearance and summarises each. With
// `fitted_only`, every statistic (metrics, cells, diagnostics) is over the group's fitted runs
// alone, while the counts (runs, ok, …, fitted) still cover all of them: harness.md's "compare
// only runs that fitted" (report --fitted).
std::vector<GroupReport> aggregate_runs(const std::vector<RunResult>& runs, bool fitted_only = false);

}  // namespace srbench::harness
