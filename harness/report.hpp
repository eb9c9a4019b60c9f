// `srbench report` (harness.md, "Across seeds"): runs grouped by (entry, model, grid), each
// metric summarised over the group's seeds, and the mean seq_acc per evaluated (length,
// condition). Aggregation and formatting are separate pure functions, so the arithmetic is
// tested on hand-made runs:
//
//   auto groups = aggregate_runs(read_suite_file("results/s.h5").runs);
//   std::cout << format_report(groups, ReportFormat::table);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/metrics.hpp"
#include "harness/run_result.hpp"

namespace srbench::harness {

// One metric over a group's seeds.
struct MetricStats {
  std::string name;  // id_acc, ood_length_acc, shift_acc, shortcut_gap, final_train_loss, steps_to_target
  SeedStats stats;   // steps_to_target: over the seeds that reached the target only
};

// One evaluated (length, condition) over a group's seeds.
struct EvalCell {
  int64_t length = 0;
  std::string condition;  // "id", "p1=0.9", "train"
  SeedStats seq_acc;
  SeedStats bits_per_byte;  // loss / ln 2; only for runs that report bits per byte (n = 0 otherwise)
  SeedStats token_error;    // 1 − token_acc: the error rate at scored positions (ffl: at reads)
};

// The diagnostics (harness.md, "Diagnostics") of a group's runs, each value over the seeds.
// Runs without diagnostics (failed, diverged) are left out, and so are runs whose [layers,heads]
// differ from the first run with diagnostics (runs of a group share their config, so none do).
struct DiagnosticsStats {
  int layers = 0, heads = 0;
  int runs = 0;                                        // runs that entered
  std::vector<SeedStats> attn_entropy, attn_max;       // [layers·heads], row-major
  std::vector<SeedStats> value_entropy, hidden_entropy;  // [layers]
  bool empty() const { return runs == 0; }
};

struct GroupReport {
  std::string task, entry, model, grid;
  int runs = 0, ok = 0, diverged = 0, failed = 0;
  int reached = 0;              // runs with steps_to_target >= 0
  bool bits_per_byte = false;   // some run of the group reports bits per byte (`text`)
  std::vector<MetricStats> metrics;  // in the order of kReportMetrics, then steps_to_target
  std::vector<EvalCell> eval;        // by condition (first appearance), then length (ascending)
  DiagnosticsStats diag;
  double frac_target() const { return runs > 0 ? static_cast<double>(reached) / runs : kNaN; }
};

// The per-run metrics summarised for every group, in this order (steps_to_target follows).
inline const std::vector<std::string> kReportMetrics = {"id_acc", "ood_length_acc", "shift_acc", "shortcut_gap",
                                                        "final_train_loss"};

// Groups runs by (entry, model, grid) in order of first appearance and summarises each.
std::vector<GroupReport> aggregate_runs(const std::vector<RunResult>& runs);

enum class ReportFormat { table, markdown, csv };
std::optional<ReportFormat> parse_report_format(const std::string& text);

// `title` (one or more lines; markdown makes the first a heading) heads the table and markdown
// forms; csv has none.
std::string format_report(const std::vector<GroupReport>& groups, ReportFormat format, const std::string& title = "");

// `srbench report --diagnostics`: per group, the mean over seeds of attn_entropy and attn_max
// per layer × head and of value_entropy and hidden_entropy per layer (csv: every statistic, one
// row per value, metric names as diag_metric_name).
std::string format_diagnostics_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                      const std::string& title = "");

// The csv form's metric name of a diagnostic: "attn_entropy[layer=1,head=0]" (head < 0:
// a per-layer value, "value_entropy[layer=1]").
std::string diag_metric_name(const std::string& quantity, int layer, int head = -1);

// `srbench report --lengths`: per group, seq_acc of condition `id` at every evaluated length
// (mean and max over seeds) and ood_length_acc — each run's mean over the lengths beyond its
// training range — mean and max over seeds: the Chomsky-hierarchy benchmark's view. Columns are
// the union of the groups' lengths; csv has one row per (group, length) and one ood row.
std::string format_length_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                 const std::string& title = "");

// `srbench report --errors`: per group, condition and length, the error rate at scored positions
// (1 − token_acc; for ffl the positions are the reads) over seeds: mean, std, min, median, max.
std::string format_error_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                const std::string& title = "");

// The csv form's metric name of an evaluation cell: "seq_acc[length=16,condition=id]".
std::string eval_metric_name(const std::string& quantity, int64_t length, const std::string& condition);

// The transfer matrix (spline-search.md, "Transfer"). A *variant* run took its splines from a
// search (splines_from set, and the task searched on known: RunResult::splines_task); its
// *baseline* is the plain model at the same task entry and grid point: the runs whose model has
// no splines at all and no splines_from — of the first such model entry (in run order) when
// several qualify. Rows: the tasks searched on; columns: the task entries trained on (both in
// order of first appearance). Over the variant runs with status ok of a cell:
//   id_acc_delta = mean of (run id_acc − mean id_acc of its baseline's ok seeds);
//   steps_ratio  = mean of (run steps_to_target / mean steps_to_target of its baseline's seeds
//                  that reached the target), over the variant runs that reached the target.
// NaN where undefined (no variant run, no baseline, nobody reached the target).
struct TransferMatrix {
  std::vector<std::string> searched_on, trained_on;  // R rows, C columns
  std::vector<double> id_acc_delta, steps_ratio;      // [R·C], row-major
  std::vector<int> runs;                              // [R·C]: variant runs with status ok
  bool empty() const { return searched_on.empty(); }
};
TransferMatrix compute_transfer(const std::vector<RunResult>& runs);
// Empty text for an empty matrix.
std::string format_transfer(const TransferMatrix& t, ReportFormat format);

}  // namespace srbench::harness
