// The report's paper-ready forms (docs/harness.md, "Report"): the compact table — one row per
// (task entry, model entry, grid point), one cell per evaluated length of condition `id`, each
// "mean [95% CI] · k/n" — and the tidy table, one row per run × evaluated length × condition with
// plain columns; and LaTeX, the form a paper takes either in.
#pragma once

#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/report/table.hpp"

namespace srbench::harness {

// `report --compact [--metric seq_acc|token_acc]`: per group (in order of first appearance) the
// runs, how many fitted, and per evaluated length of condition id the metric's mean over the
// seeds with its 95% bootstrap interval and k/n: k runs whose metric at that length reached their
// train.target_accuracy, of the n runs that have the length. With `fitted_only`, the cells are
// over the fitted runs only (the fitted column still counts all). csv: one row per group × length.
std::string format_compact_report(const std::vector<RunResult>& runs, const std::string& metric, bool fitted_only,
                                  ReportFormat format, const std::string& title = "");

// `report --tidy`: csv, one row per run × evaluated (length, condition): run_id, task, entry,
// model, arch, grid, seed, status, fitted, length, condition, loss, token_acc, seq_acc,
// seen_frac, input_space. Runs without evaluation rows (failed) have none.
std::string format_tidy_report(const std::vector<RunResult>& runs);

// A report's text as LaTeX: every tabular kept, every other non-empty line a comment ("% ...").
std::string latex_comments_outside_tables(const std::string& text);

}  // namespace srbench::harness
