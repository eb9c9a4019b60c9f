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
// std::runtime_error. HDF5's own error-stack printing is switched off (silence_hdf5_errors), so
// our messages are the only output.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/config.hpp"
#include "model/error.hpp"
#include "model/model.hpp"

namespace srbench::model {

// Turns off HDF5's automatic printing of its error stack (once per process; idempotent).
void silence_hdf5_errors();

namespace h5_handle {

// An HDF5 identifier (file, group, dataset, dataspace, datatype, attribute, property list) that
// closes itself. Used as h5::Id; it lives in its own namespace so that argument-dependent lookup
// on an Id does not drag h5's free functions into a caller's overload set.
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  ~Id() { reset(); }
  Id(Id&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Id& operator=(Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: passes straight to the C API
  bool valid() const { return id_ >= 0; }
  // Closes now; false if HDF5 reported an error (for a file: its data may not be on disk).
  bool close();
  void reset() { close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

}  // namespace h5_handle

namespace h5 {

using h5_handle::Id;

// "FILE:/path/in/file" of an object, for messages.
std::string where(hid_t loc);
std::string where(hid_t loc, const std::string& name);

// Opens an existing HDF5 file read-only. ModelError "<what> FILE: ..." when it is missing or is
// not an HDF5 file.
Id open_file(const std::string& path, const std::string& what);

// Writes `path` by letting `write` fill a fresh file PATH.tmp-PID-N, then renaming it over `path`:
// a reader never sees a half-written file. On any exception the temporary file is removed and
// the exception propagates. Failure to create or finish the file: std::runtime_error.
void write_file_atomically(const std::string& path, const std::function<void(hid_t file)>& write);

bool has_link(hid_t loc, const std::string& name);
Id create_group(hid_t loc, const std::string& name);
Id open_group(hid_t loc, const std::string& name);  // ModelError naming it when absent
// Names of the links directly under `group`, in name order (ModelError when it cannot be listed).
std::vector<std::string> link_names(hid_t group);

// A dataset of native floats / int32 with the given row-major shape (empty shape: a scalar).
void write_dataset(hid_t loc, const std::string& name, const float* data, const std::vector<int64_t>& shape);
void write_dataset(hid_t loc, const std::string& name, const int32_t* data, const std::vector<int64_t>& shape);
std::vector<int64_t> shape_of(hid_t dataset);  // [] for a scalar

}  // namespace h5

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
};

// Reads the integer datasets `tokens` and `targets` [B,T] of `path` and checks them against
// `cfg`: same shape, B, T >= 1, T <= max_len, tokens in [0, vocab), targets in [0, vocab) or -1.
// ModelError naming the file, the dataset and the first offending entry otherwise.
TokenBatch read_token_batch(const std::string& path, const ModelConfig& cfg);

}  // namespace srbench::model
