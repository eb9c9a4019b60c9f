// `srbench report` (harness.md, "Across seeds"): the groups of aggregate_runs formatted as the
// report kinds — the summary, --diagnostics, --lengths, --errors — each in table, markdown and
// csv form, all through the one table model (table.hpp):
//
//   auto groups = aggregate_runs(read_suite_file("results/s.h5").runs);
//   std::cout << format_report(groups, ReportFormat::table);
#pragma once

#include <string>
#include <vector>

#include "harness/report/aggregate.hpp"
#include "harness/report/table.hpp"
#include "harness/report/transfer.hpp"

namespace srbench::harness {

// `title` (one or more lines; markdown makes the first a heading) heads the table and markdown
// forms; csv has none.
std::string format_report(const std::vector<GroupReport>& groups, ReportFormat format, const std::string& title = "");
// `srbench report --diagnostics`: per group, the mean over seeds of attn_entropy and attn_max
// per layer × head and of value_entropy and hidden_entropy per layer (csv: every statistic, one
// row per value, metric names as diag_metric_name). `at_init`: the groups hold the diagnostics
// measured at initialisation (report --diagnostics --at-init), and the heading says so.
std::string format_diagnostics_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                      const std::string& title = "", bool at_init = false);
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
// `srbench report --chomsky [--over KEY]` (chomsky.md §7.1): a task × model table of the max and
// the mean of ood_token_acc over seeds (and over the values of grid axis KEY, e.g. train.lr),
// with each task's level and chance; csv has one row per (task entry, model, grid point).
std::string format_chomsky_report(const std::vector<ChomskyCell>& cells, ReportFormat format, const std::string& title = "",
                                  const std::string& over = "");

// `srbench report --compare A B`: per (task entry, grid point) and metric, the mean of A and B over
// the seeds both have, and the paired difference A − B with its 95% bootstrap interval (over
// seeds); csv: one row per (entry, grid, metric).
std::string format_compare_report(const std::vector<PairedDiff>& diffs, const std::string& a, const std::string& b,
                                  ReportFormat format, const std::string& title = "");

// The decimals the report prints a metric with (steps_to_target 0, final_train_loss 4, else 3).
int metric_decimals(const std::string& metric);

// The csv form's metric name of an evaluation cell: "seq_acc[length=16,condition=id]".
std::string eval_metric_name(const std::string& quantity, int64_t length, const std::string& condition);

}  // namespace srbench::harness
