// A suite (harness.md, "A suite"): the YAML file a researcher writes, validated key by key and
// expanded into runs. A run = one (task entry, model entry, grid point, seed); its config is
// resolved level by level, field by field:
//   built-in defaults → defaults.* → the task entry → the model entry → the grid point → --set
// Nothing runs until the whole suite has validated: every error names the file, line and YAML
// path, and for a misspelt key the nearest valid one.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/config.hpp"
#include "tasks/params.hpp"

namespace srbench::harness {

class ConfigError : public std::runtime_error {
 public:
  // "FILE:LINE: PATH: MESSAGE" (line 1-based; 0 = unknown)
  ConfigError(const std::string& file, int line, const std::string& path, const std::string& message);
  const std::string& path() const { return path_; }
  int line() const { return line_; }

 private:
  std::string path_;
  int line_;
};

struct TrainConfig {
  int64_t steps = 2000;
  int64_t batch = 32;
  double lr = 1e-3;
  int64_t warmup = 100;
  std::string schedule = "cosine";  // cosine | linear | constant
  double weight_decay = 0.01;
  double clip = 1.0;                // <= 0: no clipping
  int64_t eval_every = 200;
  double target_accuracy = 0.99;
  uint64_t data_seed = 0;
  bool save_checkpoint = false;
  double spline_lr = 1e-2;
  double router_lr = 1e-2;
  int length_min = 1;               // train.length: [min, max], uniform per example
  int length_max = 16;
  int64_t examples = 0;             // > 0: a finite training set of that many examples
};

// An evaluation condition other than `id`: task parameters overridden.
struct Shift {
  std::string label;                // "p1=0.9" (keys in order, comma-joined)
  tasks::RawParams params;
};

struct EvalConfig {
  std::vector<int> lengths;         // default: the training maximum
  int64_t examples = 512;           // per length and condition
  int64_t val_examples = 256;       // the fixed validation set used during training
  std::vector<Shift> shifts;
};

struct RunSpec {
  size_t index = 0;                 // position in the expanded list (sharding uses it)
  std::string id;                   // short stable hash of resolved_yaml
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
  std::string splines_path;         // the splines file to load (a path as written; for a search,
                                    // filled in by the sweep: <dir>/<suite>/splines/<name>.h5)
  std::string resolved_yaml;        // the whole resolved config of the run
};

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

struct Suite {
  std::string name;
  std::string file;                 // where it was read from
  std::string text;                 // the YAML as written, plus one line "# srbench --set KEY=VALUE"
                                    // per override (read back by parse_suite)
  std::vector<uint64_t> seeds;
  std::vector<SearchSpec> searches;
  std::vector<RunSpec> runs;
};

// Reads and validates a suite; `overrides` are --set KEY=VALUE pairs (KEY `model.X`, `train.X`,
// `eval.X` or `params.X`), applied to every run after everything else. Throws ConfigError.
Suite load_suite(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides = {});
Suite parse_suite(const std::string& text, const std::string& file,
                  const std::vector<std::pair<std::string, std::string>>& overrides = {});

// 12 hex digits of a 64-bit FNV-1a hash: stable across runs and machines.
std::string short_hash(const std::string& text);

}  // namespace srbench::harness
