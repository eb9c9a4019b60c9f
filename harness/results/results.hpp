// The results stage (harness.md, "Results (HDF5)"): one file per finished run, a search's
// splines file, and the suite file assembled from them — written and read through the HDF5
// layer (common/h5.hpp), whose one error type is ResultsError here.
//
// A run file and the suite file share the root and the per-run group:
//   /                  attrs format_version (1), srbench_version, srbench_commit (absent before it
//                      was recorded), suite (YAML text), created (UTC)
//   /runs/<run_id>/    attrs config (the resolved YAML) and its main fields (run_attributes():
//                      task, entry, model, grid, seed, status, message, wall_s, tokens_per_s,
//                      the metrics (metric_fields()), bits_per_byte, splines_from, splines_task,
//                      chance, eval_s)
//     curve/{step,train_loss,val_acc,lr,grad_norm}     1-D, aligned; curve/val_token_acc too under
//                                                      train.fit_metric: token_acc
//     eval/{length,condition,loss,token_acc,seq_acc}   1-D, one row per (length, condition)
//     eval/conditions                                  strings; condition indexes it (0 = "id")
//     diag/{attn_entropy,attn_max} [layers,heads], diag/{value_entropy,hidden_entropy} [layers]
//                                                         (a model without attention: hidden_entropy only)
//     splines/<name>                                   float32, attrs range, keypoints, extrapolate
//     routers/layer<l> [H,(l+1)H] float32              LIMe runs: the learned routers, l >= 1
//     checkpoint/...                                   optional (model.md layout)
// The suite file adds /summary, a compound table with one row per run (summary_columns()),
// /splines/<search> (each search's splines file's group) and /transfer (the transfer matrix).
// Floats are float64, integers int64, strings variable-length UTF-8.
//
//   write_run_file("results/s/runs/ab12cd34ef56.h5", result, suite.text, nullptr);
//   RunFile f = read_run_file_at(path);             // ResultsError if damaged or incomplete
//   write_suite_file("results/s.h5", suite.text, {f, …}, splines_paths, transfer);
//   SuiteFile s = read_suite_file("results/s.h5");  // for `srbench report`
//
// Every file is written atomically (h5::write_file_atomically): a temporary PATH.tmp-*, then
// renamed over PATH.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "common/h5.hpp"
#include "model/model.hpp"

namespace srbench::harness {

inline constexpr int64_t kResultsFormatVersion = 1;

// A results file that is missing, not HDF5, damaged, or lacks a required part (the message
// names the file and the object in it), or cannot be written.
using ResultsError = h5::Error;

// ---- run files --------------------------------------------------------------------------------

// Writes one run's file. `checkpoint` (may be null) goes to the run group's `checkpoint/`.
void write_run_file(const std::string& path, const RunResult& result, const std::string& suite_yaml,
                    const model::Model* checkpoint);

// Writes the group /runs/<result.run_id> (and /runs if needed) into an open file.
void write_run_group(hid_t file, const RunResult& result, const model::Model* checkpoint);

// The run group's scalar attributes, in the order the run files list them: each one's name,
// what it is (the run's identity, copied from its RunSpec; its outcome; a derived metric of
// RunMetrics), whether files written before it existed lack it, and its value for `result`.
// Adding an attribute to the table (run_file.cpp) adds it here, and so to every reader of it.
enum class RunAttributeKind { Identity, Outcome, Metric };
struct RunAttributeValue {
  std::string name;
  RunAttributeKind kind;
  bool optional;
  h5::Cell value;
};
std::vector<RunAttributeValue> run_attribute_values(const RunResult& result);

// Reads /runs/<run_id> of an open file. ResultsError naming what is missing or malformed.
RunResult read_run_group(hid_t file, const std::string& run_id);

// Reads the one run of a run file; `suite_yaml`, if given, receives the root attribute `suite`.
// ResultsError for a file that does not open cleanly or lacks a required part — the test a sweep
// uses to decide whether a run must be redone.
RunResult read_run_file(const std::string& path, std::string* suite_yaml = nullptr);

// A run file as read: where it is, its run, and the suite text it was written from.
struct RunFile {
  std::string path;
  RunResult result;
  std::string suite_yaml;
};
RunFile read_run_file_at(const std::string& path);

// ---- splines files (a search's output) --------------------------------------------------------

// A search's splines file (spline-search.md, "Output"), written atomically:
//   /              root attrs as a run file's
//   /splines/      attrs name, task, config (the search's resolved YAML), population, status,
//                  message, wall_s
//     <spline>     one float32 dataset per spline, named as in the checkpoint
//                  (blocks.0.mlp.act.values, …), attrs range, keypoints, extrapolate
//     models/<m>/  attrs seed, start_step, final_val_acc; curve/{step,train_loss,val_acc,lr,grad_norm}
// The suite file holds the same group as /splines/<name>/. A loadable splines file needs only
// the datasets under /splines (the attributes are read when present).
void write_splines_file(const std::string& path, const SearchResult& search, const std::string& suite_yaml);
struct SplinesFile {
  std::string name, task, config, status;
  int64_t population = 0;
  std::vector<SplineTensor> splines;
  std::vector<SearchModelResult> models;
};
// ResultsError when the file does not open, has no /splines or no spline datasets in it.
SplinesFile read_splines_file(const std::string& path);
// The hash of a splines file's values, which a run id taking its splines from the file includes.
std::string splines_hash(const std::vector<SplineTensor>& splines);

// ---- the suite file ---------------------------------------------------------------------------

SummaryRow summary_row(const RunResult& r);
// The /summary table's columns, in order (one per SummaryRow field).
std::vector<h5::Column> summary_columns();

// Assembles the suite file from run files (one /summary row and one /runs/<run_id> group,
// copied as is, per file, in the order given), splines files (each one's /splines group copied
// to /splines/<its name>) and the transfer matrix (/transfer, unless empty). ResultsError for a
// splines file that does not read cleanly, or a run id or search name given twice.
void write_suite_file(const std::string& out_path, const std::string& suite_yaml, const std::vector<RunFile>& runs,
                      const std::vector<std::string>& splines_file_paths, const TransferMatrix& transfer);

struct SuiteFile {
  std::string suite_yaml, srbench_version, srbench_commit, created;  // srbench_commit "" in older files
  int64_t format_version = 0;
  std::vector<SummaryRow> summary;    // as stored
  std::vector<RunResult> runs;        // read from /runs, in the order of /summary
  std::vector<SplinesFile> searches;  // read from /splines/<name>, by name
};
// Reads a whole suite file. ResultsError when it is not one (no /summary or /runs, a run listed
// in /summary without its group, ...).
SuiteFile read_suite_file(const std::string& path);

// ---- saved models -----------------------------------------------------------------------------

// A model from a checkpoint file (/model) or from a run file saved with save_checkpoint
// (/runs/<run_id>/checkpoint). ModelError naming the file otherwise.
model::Model load_model_file(const std::string& path);

// "2026-11-30T09:56:25Z"
std::string utc_timestamp_now();

}  // namespace srbench::harness
