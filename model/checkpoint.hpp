// HDF5 checkpoints (model.md, "Checkpoint (HDF5) — names are exact") and the batch files of
// `srbench forward`, with the few HDF5 helpers they share.
//
// A checkpoint group G — the file's /model, or a `checkpoint` group inside a run's group:
//   G attribute `config`   the resolved config as YAML (ModelConfig::to_yaml), a UTF-8 string
//   G attribute `vocab`    the vocabulary size V (int64)
//   G/params/<name>        one dataset per parameter, directly under `params` (the name has the
//                          dots), float32, row-major, ParamLayout's name and shape
//
//   save_checkpoint(model, "ck.h5");               // a new file, written atomically
//   Model m = load_checkpoint("ck.h5");            // ModelError naming the file and dataset
//   write_checkpoint(run_group_checkpoint, model); // the same layout in an open group
//
// Errors in what is read (a missing or foreign file, a wrong name, shape or type) are ModelErrors
// whose message names the file and the object in it; failures to write (disk, permissions) are
// h5::Errors (model/h5.hpp, the HDF5 layer these functions are written on).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/error.hpp"
#include "model/h5.hpp"
#include "model/model.hpp"

namespace srbench::model {

// ---- checkpoints ---------------------------------------------------------------------------

// Writes a new file holding the checkpoint group /model (atomically: temporary file + rename).
void save_checkpoint(const Model& model, const std::string& path);
// Reads /model of a checkpoint file. ModelError naming the file, and the dataset or attribute,
// for a missing or non-HDF5 file, a file without /model, a bad config, a parameter that is
// missing, unexpected, not float32 or of the wrong shape.
Model load_checkpoint(const std::string& path);

// The same layout in an already-open group: attributes `config` and `vocab` on `group`, the
// datasets in `group`/params (created here; `group` must not have them yet).
void write_checkpoint(hid_t group, const Model& model);
Model read_checkpoint(hid_t group);
// The config of a checkpoint group alone (validated, vocab set from the attribute).
ModelConfig read_checkpoint_config(hid_t group);

// ---- the batch file of `srbench forward` ---------------------------------------------------

struct TokenBatch {
  int B = 0, T = 0;
  std::vector<int32_t> tokens, targets;  // row-major [B,T]; targets may hold kNotScored (-1)
  std::vector<int32_t> lengths, input_lengths;  // [B] each, or empty when the file has none
  RowLengths rows() const {
    return {lengths.empty() ? nullptr : lengths.data(), input_lengths.empty() ? nullptr : input_lengths.data()};
  }
};

// Reads the integer datasets `tokens` and `targets` [B,T] of `path`, and the optional `lengths`
// and `input_lengths` [B] (model/rows.hpp), and checks them against `cfg`: same shape, B, T >= 1,
// T <= max_len, tokens in [0, vocab), targets in [0, vocab) or -1, lengths in [1, T]. ModelError
// naming the file, the dataset and the first offending entry otherwise.
TokenBatch read_token_batch(const std::string& path, const ModelConfig& cfg);

}  // namespace srbench::model
