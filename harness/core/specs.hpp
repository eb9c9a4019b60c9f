// What a suite resolves to (harness.md, "A suite"): plain run and search specs, with no YAML
// and no HDF5 in them. The suite stage (harness/suite/) builds them from the YAML file; the run
// stage trains them; the sweep runs them; every later stage reads them.
//
// A run = one (task entry, model entry, grid point, seed). Its config is resolved level by
// level, field by field:
//   built-in defaults → defaults.* → the task entry → the model entry → the grid point → --set
// and its id is a short stable hash of the resolved config's YAML text (`resolved_yaml`).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/records.hpp"
#include "model/config.hpp"
#include "model/optim.hpp"
#include "tasks/params.hpp"

namespace srbench::harness {

// A suite that does not validate: "FILE:LINE: PATH: MESSAGE" (line 1-based; 0 = unknown).
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& file, int line, const std::string& path, const std::string& message);
  const std::string& path() const { return path_; }
  int line() const { return line_; }

 private:
  std::string path_;
  int line_;
};

// Where in a suite file something was written, for errors raised after parsing.
struct SourceLoc {
  std::string file, path;
  int line = 0;
  [[noreturn]] void fail(const std::string& message) const { throw ConfigError(file, line, path, message); }
};

// `train:` — the optimiser's settings (model::TrainSettings: steps, warmup, schedule, lr,
// weight_decay, clip, spline_lr, router_lr) and the harness's own keys. Keys, defaults' text,
// checks and YAML output: train_fields() (harness/suite/fields.hpp).
struct TrainConfig : model::TrainSettings {
  int64_t batch = 32;
  int64_t eval_every = 200;
  double target_accuracy = 0.99;
  uint64_t data_seed = 0;
  bool save_checkpoint = false;
  int length_min = 1;               // train.length: [min, max], uniform per example
  int length_max = 16;
  int64_t examples = 0;             // > 0: a finite training set of that many examples
  bool length_per_batch = false;    // train.length_per: example (false) | batch (one length a batch, as NNCH)
  FitMetric fit_metric = FitMetric::seq_acc;  // train.fit_metric: what fitted, steps_to_target, gen_length read
};

// An evaluation condition other than `id`: task parameters overridden.
struct Shift {
  std::string label;                // "p1=0.9" (keys in order, comma-joined)
  tasks::RawParams params;
};

// `eval:` (fields: eval_fields()).
struct EvalConfig {
  std::vector<int> lengths;         // default: the training maximum
  int64_t examples = 512;           // per length and condition
  int64_t val_examples = 256;       // the fixed validation set used during training
  std::vector<Shift> shifts;
};

// `arch: python` (docs/python.md, "Python models in a suite"): a PyTorch model built by a factory
// the suite names by import path, trained and evaluated in a Python process of its own under the
// suite's protocol. The run's model section (and so its id) is arch, vocab, max_len, module,
// kwargs, device and `source`, the hash of the file that defines the factory.
struct PythonModel {
  bool on = false;                  // arch: python
  std::string module;               // "package.module:factory"
  std::string kwargs = "{}";        // the factory's keyword arguments, YAML flow text of a map
  std::string device = "cpu";       // passed to the factory and the batches
  std::string source;               // short_hash of the module file's text; "unresolved: …" when not found
  SourceLoc loc;                    // where `module` was set
};

struct RunSpec {
  size_t index = 0;                 // position in the expanded list (sharding uses it)
  std::string id;                   // short_hash(resolved_yaml); "" until complete (below)
  std::string task;                 // task name
  std::string entry;                // task entry name
  std::string model_name;           // model entry name
  std::string grid;                 // "model.layers=2 train.lr=0.001", or ""
  uint64_t seed = 0;
  tasks::RawParams params;          // task parameters (training distribution)
  model::ModelConfig model;         // vocab filled in from the task
  TrainConfig train;
  EvalConfig eval;
  // Stage 2 of a spline search (spline-search.md): `model.splines_from` and
  // `model.freeze_splines`, harness-level keys of a `model:` section (not ModelConfig keys).
  bool freeze_splines = false;
  std::string splines_from;         // as written: a search of this suite, or a path to a splines file
  int search = -1;                  // index into Suite::searches when splines_from names one
  SourceLoc splines_from_loc;       // where splines_from was written
  // `model.splines_randomise: K` (K >= 0; -1 = not set): the control for "any jagged spline
  // helps" — the run's splines are its source's with the deviation from the model's initial
  // splines randomised at the same roughness (randomise_splines), seeded by K and the run's seed.
  int64_t splines_randomise = -1;
  PythonModel python;               // arch: python; `model` then holds only max_len and vocab
  std::string resolved_yaml;        // the whole resolved config of the run
  // Model keys inherited (defaults, task entry, grid, --set) that do not apply under the run's
  // arch and were dropped (recurrent.md), "key (where it was set)"; `sweep --dry-run` lists them.
  std::vector<std::string> dropped;
  // Filled in by the sweep before the run is trained (harness/sweep/splines.hpp): the splines of
  // splines_from and the task they were searched on. A run whose splines_from is a file has no
  // id until the sweep has read the file (the id hashes its values).
  std::vector<SplineTensor> splines;
  std::string splines_task;
  bool needs_splines_file() const { return !splines_from.empty() && search < 0; }
};

// A run's arch as a suite names it: python, or its ModelConfig's.
std::string arch_name(const RunSpec& r);

// A run's result before it is trained: its identity (id, task, entry, model, grid, seed, the
// resolved config) copied from its spec, the rest at its defaults.
RunResult result_of(const RunSpec& spec);

// Stage 1 of a spline search (spline-search.md, `searches:`): M models with seeds
// seed..seed+M−1, own weights, one shared set of splines trained on D_arch.
struct SearchSpec {
  size_t index = 0;                 // position in `searches:` (searches-only sharding uses it)
  std::string name;
  std::string task;
  tasks::RawParams params;
  model::ModelConfig model;         // vocab filled in; has at least one spline
  TrainConfig train;
  EvalConfig eval;                  // val_examples: the models' validation set
  int64_t population = 8;           // M
  double arch_fraction = 0.2;       // in (0, 1)
  bool stagger = false;
  uint64_t seed = 0;
  std::string resolved_yaml;        // the whole resolved config of the search
  std::string id;                   // short_hash(resolved_yaml)
};

// An entry of a suite's `expect:` list (harness.md, "Claims the suite checks itself"): a claim
// about one (task entry, model entry)'s runs that `srbench report --check` evaluates.
struct Expectation {
  SourceLoc loc;                    // where the entry was written
  std::string entry, model;         // task entry and model entry names
  std::string minus;                // a model entry: the claim is on model − minus, paired by seed ("": none)
  std::string metric;               // a metric of metric_fields(), or seq_acc / token_acc at (length, condition)
  int64_t length = 0;               // seq_acc / token_acc only
  std::string condition;            // seq_acc / token_acc: the row's ("id" when not given); shift_acc:
                                    // that shift's mean seq_acc instead of the lowest over shifts
  std::string agg = "mean";         // mean | median | max | min (pool.hpp)
  std::vector<std::string> over;    // grid axes pooled with the seeds ("seed" itself allowed)
  bool fitted_only = false;
  std::string bound;                // at_least | at_most | between
  double lo = 0, hi = 0;            // the claim: lo <= value (at_least), value <= hi (at_most), both (between)
  std::string source;               // where the claim comes from
};

struct Suite {
  std::string name;
  std::string file;                 // where it was read from
  std::string text;                 // the YAML as written, plus one line "# srbench --set KEY=VALUE"
                                    // per override (read back by parse_suite)
  std::vector<uint64_t> seeds;
  std::vector<SearchSpec> searches;
  std::vector<RunSpec> runs;
  std::vector<Expectation> expectations;  // `expect:`; no part of any run's id
  // `python:` — the interpreter that runs the suite's Python models (arch: python); "" =
  // $SRBENCH_PYTHON, else /usr/bin/python3 (python_interpreter()). No part of any run's id.
  std::string python;
  bool has_python_models() const;
};

// The interpreter of a suite's Python models: its `python:`, else $SRBENCH_PYTHON, else
// /usr/bin/python3.
std::string python_interpreter(const Suite& suite);

// 12 hex digits of a 64-bit FNV-1a hash: stable across runs and machines.
std::string short_hash(const std::string& text);

// How many of a finite set's n examples form a search's D_arch: round(arch_fraction·n).
uint64_t arch_examples(uint64_t n, double arch_fraction);

}  // namespace srbench::harness
