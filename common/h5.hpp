// The one HDF5 layer of srbench: typed reading and writing of files, groups, attributes,
// datasets, strings and compound tables, over HDF5's C API. Checkpoints (model/checkpoint.*)
// and results (harness/results/) both use it; no other code calls the C API.
//
// Every failure is an h5::Error whose message names the file and the object in it
// ("results/s.h5:/runs/ab12/eval/seq_acc: missing dataset"). Callers that give a failure a
// meaning translate it at their boundary (a checkpoint that does not read is a bad input:
// ModelError). HDF5's own error-stack printing is off, so these messages are the only output.
//
//   h5::write_file_atomically("out.h5", [&](hid_t file) {
//     h5::Id g = h5::create_group(file, "runs");
//     h5::write_attr(g, "seed", int64_t{3});
//     h5::write_array(g, "loss", losses.data(), {n});
//   });
//   h5::Id f = h5::open_file("out.h5", "run file");
//   std::vector<double> loss = h5::read_array<double>(h5::open_group(f, "runs"), "loss");
//
// Types on disk: float32/float64/int32/int64 little-endian, strings variable-length UTF-8.
// Reading converts numbers to the asked-for type (HDF5's conversion); the class (integer,
// float, string) must match.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace srbench {

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
using Shape = std::vector<int64_t>;  // row-major dimensions; [] is a scalar

// The one error type of the HDF5 layer: a file or object that is missing, of the wrong kind,
// shape or type, damaged, or that cannot be written. The message names the file and object.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `read`, turning this layer's errors into E's with the same message: for a caller to whom
// a file that does not read is a bad input (a checkpoint's ModelError, a batch file's InputError).
template <typename E, typename F>
auto errors_as(F&& read) {
  try {
    return read();
  } catch (const Error& e) {
    throw E(e.what());
  }
}

// Turns off HDF5's automatic printing of its error stack (idempotent).
void silence_errors();

// "FILE:/path/in/file" of an object, for messages.
std::string where(hid_t loc);
std::string where(hid_t loc, const std::string& name);
std::string shape_text(const Shape& shape);  // "[3,4]"

// ---- files ----------------------------------------------------------------------------------

// Opens an existing HDF5 file read-only (`writable`: read-write). Error "<what> PATH: ..." when
// it is missing, a folder, not HDF5, or does not open (truncated, damaged). A file written with
// a checksum (below) is checked against it first, before HDF5 reads any of it: a truncated or
// corrupted one is an Error naming what is wrong, never bytes handed to HDF5's parser (which
// can crash or loop on damaged metadata). Such a file is never opened writable. One of at most
// 64 MiB is read once, whole: the checksum is checked on those bytes and HDF5 reads them from
// memory (its in-memory driver; where() still names the file by `path`).
Id open_file(const std::string& path, const std::string& what, bool writable = false);

// Whether write_file_atomically seals the file with a checksum of its contents.
enum class Checksum { No, Yes };

// Writes `path` by letting `write` fill a fresh file, then writing it as PATH.tmp-PID-N and
// renaming that over `path`: a reader never sees a half-written file. HDF5 builds the file in
// memory; srbench writes it to disk itself, flushes it (fsync) before the rename and the folder
// after it. On any exception the temporary file is removed and the exception propagates; a
// failure to create or write the file is an Error naming the file and the operating system's
// reason ("cannot write results/s/runs/ab12.h5.tmp-7-0: no space left on device").
//
// With Checksum::Yes the file starts with a 512-byte HDF5 user block (which HDF5 and h5py skip)
// holding the size and CRC-32 of the rest of the file: "srbench-checksum 1 bytes=N crc32=X".
// Results files are written so; checkpoints are not (other tools edit those in place).
void write_file_atomically(const std::string& path, const std::function<void(hid_t file)>& write,
                           Checksum checksum = Checksum::No);

// The operating system's reason for an error number, as a message part: "no space left on device".
std::string os_error_text(int error_number);

// ---- groups and links -----------------------------------------------------------------------

bool has_link(hid_t loc, const std::string& name);
bool is_dataset(hid_t loc, const std::string& name);  // a link to a dataset
Id create_group(hid_t loc, const std::string& name);  // Error if it exists or cannot be made
Id open_group(hid_t loc, const std::string& name);    // Error naming it when absent or not a group
Id open_or_create_group(hid_t loc, const std::string& name);
// Names of the links directly under `group`, in name order.
std::vector<std::string> link_names(hid_t group);
// Copies object `src_name` of `src` (with everything below it) to `dst_name` in `dst`.
void copy(hid_t src, const std::string& src_name, hid_t dst, const std::string& dst_name);

// ---- attributes (scalars) -------------------------------------------------------------------

bool has_attr(hid_t loc, const std::string& name);
void write_attr(hid_t loc, const std::string& name, const std::string& value);
void write_attr(hid_t loc, const std::string& name, const char* value);
void write_attr(hid_t loc, const std::string& name, int64_t value);
void write_attr(hid_t loc, const std::string& name, double value);
// Error when missing, not a single value, or of another class. read_double_attr also takes
// an integer attribute.
std::string read_string_attr(hid_t loc, const std::string& name);
int64_t read_int_attr(hid_t loc, const std::string& name);
double read_double_attr(hid_t loc, const std::string& name);

// ---- datasets -------------------------------------------------------------------------------

// A new dataset `name` of `shape`, from row-major `data` (T: float, double, int32_t, int64_t;
// stored as the little-endian type of the same size).
template <typename T>
void write_array(hid_t loc, const std::string& name, const T* data, const Shape& shape);
template <typename T>
void write_array(hid_t loc, const std::string& name, const std::vector<T>& v) {
  write_array(loc, name, v.data(), Shape{static_cast<int64_t>(v.size())});
}
void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values);

// What is stored under a dataset link.
struct DatasetInfo {
  enum Class { Integer, Float, String, Compound, Other } cls = Other;
  size_t bytes = 0;  // size of one element on disk
  Shape shape;
};
DatasetInfo dataset_info(hid_t loc, const std::string& name);  // Error when it is not a dataset
Id open_dataset(hid_t loc, const std::string& name);           // for its attributes; Error likewise
Shape shape_of(hid_t dataset);                                 // of an open dataset

// Reads dataset `name` (of integer class for integer T, float class for floating T) into a new
// vector; `rank` >= 0 requires that many dimensions; its shape goes to `shape` if given.
template <typename T>
std::vector<T> read_array(hid_t loc, const std::string& name, int rank = 1, Shape* shape = nullptr);
// Reads into caller memory of exactly the dataset's element count.
template <typename T>
void read_array_into(hid_t loc, const std::string& name, T* out, size_t count);
std::vector<std::string> read_strings(hid_t loc, const std::string& name);  // 1-D, variable-length

// ---- compound tables ------------------------------------------------------------------------

// A table as a 1-D dataset of compound rows: columns of strings (variable-length UTF-8), int64
// or float64, in order.
enum class ColumnType { String, Int64, Double };
using Cell = std::variant<std::string, int64_t, double>;  // the column's type
struct Column {
  std::string name;
  ColumnType type;
  bool optional = false;  // reading: a column the file lacks (one added later) reads as `missing`
  Cell missing = {};      // of the column's type
};
using TableRow = std::vector<Cell>;                       // one cell per column
void write_table(hid_t loc, const std::string& name, const std::vector<Column>& columns,
                 const std::vector<TableRow>& rows);
// Reads the named columns (each present with a compatible type, or optional; the file's other
// columns are ignored). Error naming the dataset and column otherwise.
std::vector<TableRow> read_table(hid_t loc, const std::string& name, const std::vector<Column>& columns);

}  // namespace h5
}  // namespace srbench
