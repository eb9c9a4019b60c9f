// HDF5 checkpoints (model.md, "Checkpoint (HDF5) — names are exact").
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
// h5::Errors (common/h5.hpp, the HDF5 layer these functions are written on).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/error.hpp"
#include "common/h5.hpp"
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

}  // namespace srbench::model
