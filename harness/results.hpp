// Results in HDF5 (harness.md, "Results (HDF5)"): one file per finished run, and the suite file
// assembled from them.
//
// A run file and the suite file share the root and the per-run group:
//   /                  attrs format_version (1), srbench_version, suite (YAML text), created (UTC)
//   /runs/<run_id>/    attrs config (the resolved YAML) and its main fields: task, entry, model,
//                      grid, seed, status, message, wall_s, tokens_per_s, id_acc, ood_length_acc,
//                      shift_acc, shortcut_gap, steps_to_target, final_train_loss, bits_per_byte
//     curve/{step,train_loss,val_acc,lr,grad_norm}     1-D, aligned
//     eval/{length,condition,loss,token_acc,seq_acc}   1-D, one row per (length, condition)
//     eval/conditions                                  strings; condition indexes it (0 = "id")
//     diag/{attn_entropy,attn_max} [layers,heads], diag/{value_entropy,hidden_entropy} [layers]
//     routers/layer<l> [H,(l+1)H] float32                LIMe runs: the learned routers, l >= 1
//     checkpoint/...                                   optional (model.md layout)
// The suite file adds /summary, a compound table with one row per run (SummaryRow's fields).
// Floats are float64, integers int64, strings variable-length UTF-8.
//
//   write_run_file("results/s/runs/ab12cd34ef56.h5", result, suite.text, nullptr);
//   RunResult r = read_run_file(path);               // ResultsError if damaged or incomplete
//   write_suite_file("results/s.h5", suite.text, {run_file_a, run_file_b});
//   SuiteFile s = read_suite_file("results/s.h5");   // for `srbench report`
//
// Files are written atomically (model::h5::write_file_atomically): a temporary PATH.tmp-*, then
// renamed over PATH.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/run_result.hpp"
#include "harness/search.hpp"
#include "model/model.hpp"

namespace srbench::harness {

inline constexpr int64_t kResultsFormatVersion = 1;

// A results file that is missing, not HDF5, damaged, or lacks a required part; the message names
// the file and the object in it.
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes one run's file. `checkpoint` (may be null) goes to the run group's `checkpoint/`.
// Failure to write: std::runtime_error (the temporary file is removed).
void write_run_file(const std::string& path, const RunResult& result, const std::string& suite_yaml,
                    const model::Model* checkpoint);

// Writes the group /runs/<result.run_id> (and /runs if needed) into an open file.
void write_run_group(hid_t file, const RunResult& result, const model::Model* checkpoint);

// Reads /runs/<run_id> of an open file. ResultsError naming what is missing or malformed.
RunResult read_run_group(hid_t file, const std::string& run_id);

// Reads the one run of a run file; `suite_yaml`, if given, receives the root attribute `suite`.
// ResultsError for a file that does not open cleanly or lacks a required part — the test a sweep
// uses to decide whether a run must be redone.
RunResult read_run_file(const std::string& path, std::string* suite_yaml = nullptr);

// One row of /summary, in the table's field order.
struct SummaryRow {
  std::string run_id, task, entry, model;
  int64_t seed = 0;
  std::string grid, status;
  double id_acc = kNaN, ood_length_acc = kNaN, shift_acc = kNaN, shortcut_gap = kNaN;
  int64_t steps_to_target = -1;
  double final_train_loss = kNaN, wall_s = kNaN, tokens_per_s = kNaN;
};
SummaryRow summary_row(const RunResult& r);

// Assembles the suite file from run files, one /summary row and one /runs/<run_id> group (copied
// as is) per file, in the order given; each splines file's /splines group is copied to
// /splines/<its name>; /transfer is written when the runs hold a transfer matrix
// (compute_transfer). ResultsError for a run or splines file that does not read cleanly or a
// run id or search name given twice; std::runtime_error for a failure to write.
void write_suite_file(const std::string& out_path, const std::string& suite_yaml,
                      const std::vector<std::string>& run_file_paths,
                      const std::vector<std::string>& splines_file_paths = {});

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

struct SuiteFile {
  std::string suite_yaml, srbench_version, created;
  int64_t format_version = 0;
  std::vector<SummaryRow> summary;  // as stored
  std::vector<RunResult> runs;      // read from /runs, in the order of /summary
  std::vector<SplinesFile> searches;  // read from /splines/<name>, by name
};
// Reads a whole suite file. ResultsError when it is not one (no /summary or /runs, a run listed
// in /summary without its group, ...).
SuiteFile read_suite_file(const std::string& path);

// "2026-11-30T09:56:25Z"
std::string utc_timestamp_now();

}  // namespace srbench::harness
