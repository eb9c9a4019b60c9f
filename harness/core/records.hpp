// What runs and searches produce (harness.md, "What a run measures"), as plain records with no
// YAML and no HDF5: a run's training curve, final evaluation rows, derived metrics, diagnostics
// and status; a search's shared splines; the suite file's summary row; the transfer matrix. The
// run stage fills them, the results stage writes and reads them, the report aggregates them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace srbench::harness {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct CurvePoint {
  int64_t step = 0;          // steps done when measured (eval_every, 2·eval_every, …, and the last)
  double train_loss = kNaN;  // mean train loss since the previous point
  double val_acc = kNaN;     // seq_acc on the fixed validation set
  double lr = kNaN;          // learning rate of the last step
  double grad_norm = kNaN;   // gradient norm (before clipping) of the last step
  // token_acc on the same set: measured only under train.fit_metric: token_acc (NaN otherwise,
  // and in files written before it), whose steps_to_target reads it
  double val_token_acc = kNaN;
};

struct EvalRow {
  int64_t length = 0;
  int64_t condition = 0;     // index into RunResult::conditions (0 = "id")
  double loss = kNaN;        // mean cross-entropy over scored positions (bits per byte: / ln 2)
  double token_acc = kNaN;   // over scored positions
  double seq_acc = kNaN;     // fraction of examples with every scored position right
  // Memorisation made visible: the fraction of the row's examples whose token sequence also
  // occurred among the training examples the run drew (NaN in files written before it).
  double seen_frac = kNaN;
  // Accuracy at each position 0 … the last position any example of the row scores, NaN where
  // none scores it (empty in files written before it).
  std::vector<double> position_acc = {};
  // The number of distinct inputs at this length where the task knows it is finite (NaN else).
  double input_space = kNaN;
};

// train.fit_metric: the accuracy a run's fitted, steps_to_target and gen_length read — seq_acc
// (the default) or token_acc (the paper's criterion in Liu et al. 2023).
enum class FitMetric { seq_acc, token_acc };
inline const char* fit_metric_name(FitMetric m) { return m == FitMetric::token_acc ? "token_acc" : "seq_acc"; }

// Derived per run (harness/run/metrics.hpp); NaN where undefined. Each member is a row of
// metric_fields() (metric_fields.hpp: its name on disk, what it means, and whether files written
// before it lack it), which the results files, the report and Python loop over.
struct RunMetrics {
  double id_acc = kNaN;
  double ood_length_acc = kNaN;
  double shift_acc = kNaN;
  double shortcut_gap = kNaN;
  int64_t steps_to_target = -1;
  double final_train_loss = kNaN;
  double ood_token_acc = kNaN;
  int64_t fitted = -1;
  double gen_length = kNaN;
};

// Diagnostics on a fixed in-distribution batch after training (harness.md, "Diagnostics").
// A model without attention (a recurrent arch) has heads 0 and only hidden_entropy: attn_entropy,
// attn_max and value_entropy are empty (and not written to a run file).
struct Diagnostics {
  int layers = 0, heads = 0;
  std::vector<double> attn_entropy;    // [layers·heads], row-major
  std::vector<double> attn_max;        // [layers·heads]
  std::vector<double> value_entropy;   // [layers]
  std::vector<double> hidden_entropy;  // [layers]
  // LIMe's measure of the same vectors (diagnostics.hpp, renyi_matrix_entropy): [layers] like the
  // two above; empty when read from a file written before it existed.
  std::vector<double> value_entropy_lime, hidden_entropy_lime;
  bool empty() const { return layers == 0; }
  bool has_attention() const { return heads > 0; }
};

// One learnable spline's values, named as in the checkpoint (e.g. "blocks.0.mlp.act.values"),
// with its settings (model.md, "The learnable spline").
struct SplineTensor {
  std::string name;
  std::vector<float> values;         // [keypoints]
  double range = 8.0;
  int64_t keypoints = 0;
  std::string extrapolate = "constant";
  bool operator==(const SplineTensor&) const = default;
};

// One LIMe router as learned by a run (harness.md: routers/layer<l>, [H,(l+1)H] float32).
struct RouterWeights {
  int layer = 0;                // l >= 1
  int64_t rows = 0, cols = 0;   // H, (l+1)·H
  std::vector<float> values;    // row-major, rows·cols
  bool operator==(const RouterWeights&) const = default;
};

struct RunResult {
  // identity (copied from the RunSpec)
  std::string run_id, task, entry, model, grid;
  uint64_t seed = 0;
  std::string config_yaml;            // the resolved config of the run
  // outcome
  std::string status = "ok";          // ok | diverged | failed
  std::string message;                // why, for diverged / failed
  double wall_s = 0;
  double tokens_per_s = kNaN;
  double eval_s = kNaN;  // of wall_s: the validation points and the final evaluation (NaN: not timed)
  std::vector<CurvePoint> curve;
  std::vector<std::string> conditions = {"id"};  // 0 = "id", then shifts ("p1=0.9"), modadd: "train"
  std::vector<EvalRow> eval;
  RunMetrics metrics;
  Diagnostics diag;
  Diagnostics diag_init;  // the same measures of the freshly initialised model, before the first step (harness.md,
                          // "Diagnostics"); empty when read from a file written before it existed
  std::vector<RouterWeights> routers;  // LIMe runs: the trained routers, by layer (empty otherwise)
  bool bits_per_byte = false;         // text: eval loss is reported in bits per byte
  double chance = kNaN;               // a uniform guess's token accuracy: 1 / output classes (tape tasks), else
                                      // 1 / distinct targets at the validation set's scored positions
  std::vector<SplineTensor> splines;  // the spline values at the end of training (none without splines)
  std::string splines_from;           // the run's model.splines_from ("" when none)
  std::string splines_task;           // the task the splines were searched on ("" when none or unknown)
  std::string build;                  // what built the binary that ran it (srbench::build_description(); "" in
                                      // files written before it was recorded)
};

// One model of a search.
struct SearchModelResult {
  uint64_t seed = 0;
  int64_t start_step = 0;            // 0, or m·steps/(M+1) under stagger
  std::vector<CurvePoint> curve;     // at the model's own steps (eval_every, …, and the last)
  double final_val_acc = kNaN;       // val_acc of the last curve point
};

// A search (stage 1 of spline-search.md) and its learned, shared splines.
struct SearchResult {
  std::string name, task, config_yaml;  // config_yaml: the search's resolved YAML
  int64_t population = 0;
  std::string status = "ok";            // ok | diverged | failed
  std::string message;
  double wall_s = 0;
  std::vector<SplineTensor> splines;    // the learned (shared) splines
  std::vector<SearchModelResult> models;
};

// One row of the suite file's /summary table (columns: summary_columns(), results stage): a run's
// identity, its metrics and its timings.
struct SummaryRow {
  std::string run_id, task, entry, model;
  int64_t seed = 0;
  std::string grid, status;
  RunMetrics metrics;  // a metric a file written before it lacks reads as its default
  double wall_s = kNaN, tokens_per_s = kNaN;
};

// The transfer matrix of spline searches (spline-search.md, "Transfer"; computed by the report
// stage, stored in the suite file as /transfer). Rows: the tasks searched on; columns: the task
// entries trained on.
struct TransferMatrix {
  std::vector<std::string> searched_on, trained_on;  // R rows, C columns
  std::vector<double> id_acc_delta, steps_ratio;      // [R·C], row-major
  std::vector<int> runs;                              // [R·C]: variant runs with status ok
  // [R·C]: the 95% bootstrap interval of the mean of the paired differences (variant id_acc −
  // baseline id_acc at the same seed and grid point, both ok) and how many seeds paired; NaN for
  // fewer than 2
  std::vector<double> id_acc_delta_lo, id_acc_delta_hi;
  std::vector<int> paired;
  bool empty() const { return searched_on.empty(); }
};

}  // namespace srbench::harness
