#include "harness/results.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <filesystem>
#include <functional>
#include <set>

#include "harness/report.hpp"
#include "model/checkpoint.hpp"
#include "model/version.hpp"

namespace srbench::harness {

namespace {

using model::h5::Id;
using model::h5::where;

using model::h5::has_link;

// ---- types ----------------------------------------------------------------------------------

// Variable-length UTF-8 string type (file and memory alike).
Id string_type() {
  Id t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

// Frees the variable-length strings HDF5 allocated while reading into `buf`.
void reclaim(hid_t mem_type, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mem_type, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(mem_type, space, H5P_DEFAULT, buf);
#endif
}

// ---- writing --------------------------------------------------------------------------------

[[noreturn]] void write_failed(hid_t loc, const std::string& name) {
  throw std::runtime_error("cannot write " + where(loc, name));
}

void write_attribute(hid_t loc, const char* name, hid_t file_type, hid_t mem_type, const void* value) {
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid() || H5Awrite(attr, mem_type, value) < 0)
    throw std::runtime_error("cannot write attribute '" + std::string(name) + "' of " + where(loc));
}

void write_attr(hid_t loc, const char* name, const std::string& value) {
  Id type = string_type();
  const char* text = value.c_str();
  write_attribute(loc, name, type, type, &text);
}
void write_attr(hid_t loc, const char* name, int64_t value) {
  write_attribute(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}
void write_attr(hid_t loc, const char* name, double value) {
  write_attribute(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void write_array(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type, const void* data,
                 const std::vector<hsize_t>& dims) {
  Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Id ds(H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!space.valid() || !ds.valid()) write_failed(loc, name);
  hsize_t count = 1;
  for (hsize_t d : dims) count *= d;
  if (count > 0 && H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) write_failed(loc, name);
}

void write_doubles(hid_t loc, const std::string& name, const std::vector<double>& v, std::vector<hsize_t> dims = {}) {
  if (dims.empty()) dims = {v.size()};
  write_array(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data(), dims);
}
void write_int64s(hid_t loc, const std::string& name, const std::vector<int64_t>& v) {
  write_array(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, v.data(), {v.size()});
}
void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& v) {
  std::vector<const char*> ptrs;
  for (const auto& s : v) ptrs.push_back(s.c_str());
  Id type = string_type();
  write_array(loc, name, type, type, ptrs.data(), {v.size()});
}

using model::h5::create_group;

// routers/layer<l> [H,(l+1)H] float32 (harness.md), one per LIMe router; nothing for other runs.
void write_routers(hid_t run_group, const RunResult& r) {
  if (r.routers.empty()) return;
  Id g = create_group(run_group, "routers");
  for (const auto& w : r.routers) {
    if (w.values.size() != static_cast<size_t>(w.rows * w.cols))
      throw std::runtime_error("write_run_group: run " + r.run_id + ": router of layer " + std::to_string(w.layer) +
                               " has " + std::to_string(w.values.size()) + " values for shape [" +
                               std::to_string(w.rows) + "," + std::to_string(w.cols) + "]");
    write_array(g, "layer" + std::to_string(w.layer), H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, w.values.data(),
                {static_cast<hsize_t>(w.rows), static_cast<hsize_t>(w.cols)});
  }
}

void write_root_attributes(hid_t file, const std::string& suite_yaml) {
  write_attr(file, "format_version", kResultsFormatVersion);
  write_attr(file, "srbench_version", std::string(srbench::version()));
  write_attr(file, "suite", suite_yaml);
  write_attr(file, "created", utc_timestamp_now());
}

// ---- reading --------------------------------------------------------------------------------

[[noreturn]] void bad(hid_t loc, const std::string& name, const std::string& what) {
  throw ResultsError(where(loc, name) + ": " + what);
}

[[noreturn]] void bad_attr(hid_t loc, const char* name, const std::string& what) {
  throw ResultsError(where(loc) + " attribute '" + name + "': " + what);
}

Id open_attribute(hid_t loc, const char* name, H5T_class_t cls, const char* expected) {
  if (H5Aexists(loc, name) <= 0) bad_attr(loc, name, "missing attribute (expected " + std::string(expected) + ")");
  Id attr(H5Aopen(loc, name, H5P_DEFAULT));
  Id space(attr.valid() ? H5Aget_space(attr) : H5I_INVALID_HID);
  Id type(attr.valid() ? H5Aget_type(attr) : H5I_INVALID_HID);
  if (!attr.valid() || !space.valid() || H5Sget_simple_extent_npoints(space) != 1 || H5Tget_class(type) != cls)
    bad_attr(loc, name, std::string("expected a single ") + expected);
  return attr;
}

std::string read_string_attr(hid_t loc, const char* name) {
  Id attr = open_attribute(loc, name, H5T_STRING, "string");
  Id type(H5Aget_type(attr));
  std::string out;
  if (H5Tis_variable_str(type) > 0) {
    Id mem = string_type();
    char* text = nullptr;
    if (H5Aread(attr, mem, &text) < 0) bad_attr(loc, name, "cannot be read");
    out = text ? text : "";
    H5free_memory(text);
  } else {
    out.assign(H5Tget_size(type), '\0');
    Id mem(H5Tcopy(type));
    if (H5Aread(attr, mem, out.data()) < 0) bad_attr(loc, name, "cannot be read");
    out.resize(std::min(out.size(), out.find('\0')));
  }
  return out;
}

int64_t read_int_attr(hid_t loc, const char* name) {
  Id attr = open_attribute(loc, name, H5T_INTEGER, "integer");
  int64_t v = 0;
  if (H5Aread(attr, H5T_NATIVE_INT64, &v) < 0) bad_attr(loc, name, "cannot be read");
  return v;
}

double read_double_attr(hid_t loc, const char* name) {
  Id attr = open_attribute(loc, name, H5T_FLOAT, "float");
  double v = 0;
  if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) bad_attr(loc, name, "cannot be read");
  return v;
}

Id open_group(hid_t loc, const std::string& name) {
  if (!has_link(loc, name)) bad(loc, name, "missing group");
  Id g(H5Gopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!g.valid()) bad(loc, name, "is not a group (or cannot be opened)");
  return g;
}

// Opens dataset `name` of class `cls`; its shape goes to `dims` and must have rank `rank`.
Id open_dataset(hid_t loc, const std::string& name, H5T_class_t cls, int rank, std::vector<hsize_t>& dims) {
  if (!has_link(loc, name)) bad(loc, name, "missing dataset");
  Id ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!ds.valid()) bad(loc, name, "is not a dataset (or cannot be opened)");
  Id type(H5Dget_type(ds));
  const char* cls_name = cls == H5T_FLOAT     ? "float"
                         : cls == H5T_INTEGER ? "integer"
                         : cls == H5T_STRING  ? "string"
                                              : "compound";
  if (H5Tget_class(type) != cls) bad(loc, name, std::string("expected ") + cls_name + " values");
  Id space(H5Dget_space(ds));
  if (H5Sget_simple_extent_ndims(space) != rank) bad(loc, name, "expected " + std::to_string(rank) + " dimension(s)");
  dims.assign(static_cast<size_t>(rank), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return ds;
}

size_t count_of(const std::vector<hsize_t>& dims) {
  size_t n = 1;
  for (hsize_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

std::vector<double> read_doubles(hid_t loc, const std::string& name, std::vector<hsize_t>& dims, int rank = 1) {
  Id ds = open_dataset(loc, name, H5T_FLOAT, rank, dims);
  std::vector<double> v(count_of(dims));
  if (!v.empty() && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    bad(loc, name, "cannot be read (damaged file?)");
  return v;
}
std::vector<double> read_doubles(hid_t loc, const std::string& name) {
  std::vector<hsize_t> dims;
  return read_doubles(loc, name, dims);
}

std::vector<int64_t> read_int64s(hid_t loc, const std::string& name) {
  std::vector<hsize_t> dims;
  Id ds = open_dataset(loc, name, H5T_INTEGER, 1, dims);
  std::vector<int64_t> v(count_of(dims));
  if (!v.empty() && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    bad(loc, name, "cannot be read (damaged file?)");
  return v;
}

std::vector<std::string> read_strings(hid_t loc, const std::string& name) {
  std::vector<hsize_t> dims;
  Id ds = open_dataset(loc, name, H5T_STRING, 1, dims);
  Id file_type(H5Dget_type(ds));
  if (H5Tis_variable_str(file_type) <= 0) bad(loc, name, "expected variable-length strings");
  std::vector<char*> ptrs(count_of(dims), nullptr);
  std::vector<std::string> out;
  if (ptrs.empty()) return out;
  Id mem = string_type();
  if (H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0) bad(loc, name, "cannot be read (damaged file?)");
  for (char* p : ptrs) out.emplace_back(p ? p : "");
  Id space(H5Dget_space(ds));
  reclaim(mem, space, ptrs.data());
  return out;
}

// Opens an existing file read-only; ResultsError when it is missing or not (cleanly) HDF5.
Id open_results_file(const std::string& path, const char* what) {
  model::silence_hdf5_errors();
  std::error_code ec;
  const std::string head = std::string(what) + " " + path + ": ";
  if (!std::filesystem::exists(path, ec)) throw ResultsError(head + "no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw ResultsError(head + "not a regular file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw ResultsError(head + "not an HDF5 file (empty or damaged?)");
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) throw ResultsError(head + "cannot be opened as HDF5 (truncated or damaged)");
  return f;
}

void check_format_version(hid_t file) {
  const int64_t v = read_int_attr(file, "format_version");
  if (v != kResultsFormatVersion)
    bad_attr(file, "format_version", "is " + std::to_string(v) + "; this srbench reads format " +
                                     std::to_string(kResultsFormatVersion));
}

// Names of the links directly under `group`, in name order; a group that cannot be listed is a
// damaged results file (ResultsError).
std::vector<std::string> child_names(hid_t group) {
  try {
    return model::h5::link_names(group);
  } catch (const model::ModelError& e) {
    throw ResultsError(e.what());
  }
}


// ---- curves and splines (runs and searches) ---------------------------------------------------

void write_curve(hid_t g, const std::vector<CurvePoint>& points) {
  Id curve = create_group(g, "curve");
  std::vector<int64_t> step;
  std::vector<double> train_loss, val_acc, lr, grad_norm;
  for (const auto& p : points) {
    step.push_back(p.step);
    train_loss.push_back(p.train_loss);
    val_acc.push_back(p.val_acc);
    lr.push_back(p.lr);
    grad_norm.push_back(p.grad_norm);
  }
  write_int64s(curve, "step", step);
  write_doubles(curve, "train_loss", train_loss);
  write_doubles(curve, "val_acc", val_acc);
  write_doubles(curve, "lr", lr);
  write_doubles(curve, "grad_norm", grad_norm);
}

std::vector<CurvePoint> read_curve(hid_t g) {
  Id curve = open_group(g, "curve");
  const auto step = read_int64s(curve, "step");
  const auto train_loss = read_doubles(curve, "train_loss");
  const auto val_acc = read_doubles(curve, "val_acc");
  const auto lr = read_doubles(curve, "lr");
  const auto grad_norm = read_doubles(curve, "grad_norm");
  const size_t n = step.size();
  if (train_loss.size() != n || val_acc.size() != n || lr.size() != n || grad_norm.size() != n)
    throw ResultsError(where(curve) + ": step, train_loss, val_acc, lr and grad_norm differ in length");
  std::vector<CurvePoint> out;
  for (size_t i = 0; i < n; ++i) out.push_back({step[i], train_loss[i], val_acc[i], lr[i], grad_norm[i]});
  return out;
}

// One float32 dataset per spline, attrs range, keypoints, extrapolate.
void write_splines(hid_t g, const std::vector<SplineTensor>& splines) {
  for (const auto& t : splines) {
    model::h5::write_dataset(g, t.name, t.values.data(), {static_cast<int64_t>(t.values.size())});
    Id ds(H5Dopen2(g, t.name.c_str(), H5P_DEFAULT));
    if (!ds.valid()) write_failed(g, t.name);
    write_attr(ds, "range", t.range);
    write_attr(ds, "keypoints", t.keypoints);
    write_attr(ds, "extrapolate", t.extrapolate);
  }
}

// Every dataset directly in g (other members, such as a search's `models`, are skipped).
std::vector<SplineTensor> read_splines(hid_t g) {
  std::vector<SplineTensor> out;
  for (const auto& name : child_names(g)) {
    Id obj(H5Oopen(g, name.c_str(), H5P_DEFAULT));
    if (!obj.valid()) throw ResultsError(where(g, name) + ": cannot be opened (damaged file?)");
    if (H5Iget_type(obj) != H5I_DATASET) continue;
    SplineTensor t;
    t.name = name;
    const auto v = read_doubles(g, name);
    t.values.assign(v.begin(), v.end());
    t.range = read_double_attr(obj, "range");
    t.keypoints = read_int_attr(obj, "keypoints");
    t.extrapolate = read_string_attr(obj, "extrapolate");
    out.push_back(std::move(t));
  }
  return out;
}

// A search's group (the splines file's /splines; the suite file's /splines/<name>).
void write_search_group(hid_t g, const SearchResult& s) {
  write_attr(g, "name", s.name);
  write_attr(g, "task", s.task);
  write_attr(g, "config", s.config_yaml);
  write_attr(g, "population", s.population);
  write_attr(g, "status", s.status);
  write_attr(g, "message", s.message);
  write_attr(g, "wall_s", s.wall_s);
  write_splines(g, s.splines);
  Id models = create_group(g, "models");
  for (size_t m = 0; m < s.models.size(); ++m) {
    Id mg = create_group(models, std::to_string(m));
    write_attr(mg, "seed", static_cast<int64_t>(s.models[m].seed));
    write_attr(mg, "start_step", s.models[m].start_step);
    write_attr(mg, "final_val_acc", s.models[m].final_val_acc);
    write_curve(mg, s.models[m].curve);
  }
}

}  // namespace

void write_splines_file(const std::string& path, const SearchResult& search, const std::string& suite_yaml) {
  model::h5::write_file_atomically(path, [&](hid_t file) {
    write_root_attributes(file, suite_yaml);
    write_search_group(create_group(file, "splines"), search);
  });
}

namespace {

// A search's group (see write_search_group); `what` names it in messages.
SplinesFile read_search_group(hid_t g, const std::string& what) {
  SplinesFile f;
  // a file written by hand may carry only the datasets
  if (H5Aexists(g, "name") > 0) f.name = read_string_attr(g, "name");
  if (H5Aexists(g, "task") > 0) f.task = read_string_attr(g, "task");
  if (H5Aexists(g, "config") > 0) f.config = read_string_attr(g, "config");
  if (H5Aexists(g, "status") > 0) f.status = read_string_attr(g, "status");
  if (H5Aexists(g, "population") > 0) f.population = read_int_attr(g, "population");
  if (has_link(g, "models")) {
    Id models = open_group(g, "models");
    const size_t population = child_names(models).size();
    for (size_t m = 0; m < population; ++m) {
      Id mg = open_group(models, std::to_string(m));
      SearchModelResult r;
      r.seed = static_cast<uint64_t>(read_int_attr(mg, "seed"));
      r.start_step = read_int_attr(mg, "start_step");
      r.final_val_acc = read_double_attr(mg, "final_val_acc");
      r.curve = read_curve(mg);
      f.models.push_back(std::move(r));
    }
  }
  f.splines = read_splines(g);
  if (f.splines.empty()) throw ResultsError(what + " holds no spline datasets");
  return f;
}

}  // namespace

SplinesFile read_splines_file(const std::string& path) {
  Id file = open_results_file(path, "splines file");
  if (!has_link(file, "splines")) throw ResultsError("splines file " + path + ": it has no /splines group");
  return read_search_group(open_group(file, "splines"), "splines file " + path + ": /splines");
}

namespace {

// The routers/ group of a run, if present, by layer: names layer<l> with l >= 1, float [rows,cols].
std::vector<RouterWeights> read_routers(hid_t run_group) {
  std::vector<RouterWeights> out;
  if (!has_link(run_group, "routers")) return out;
  Id g = open_group(run_group, "routers");
  for (const auto& name : child_names(g)) {
    RouterWeights w;
    const std::string digits = name.rfind("layer", 0) == 0 ? name.substr(5) : "";
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || std::stoi(digits) < 1)
      bad(g, name, "unexpected member (expected layer<l>, l >= 1)");
    w.layer = std::stoi(digits);
    std::vector<hsize_t> dims;
    Id ds = open_dataset(g, name, H5T_FLOAT, 2, dims);
    w.rows = static_cast<int64_t>(dims[0]), w.cols = static_cast<int64_t>(dims[1]);
    w.values.resize(count_of(dims));
    if (!w.values.empty() && H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.values.data()) < 0)
      bad(g, name, "cannot be read (damaged file?)");
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.layer < b.layer; });
  return out;
}

// ---- the /summary table ---------------------------------------------------------------------

// A /summary row as HDF5 reads and writes it (variable-length strings are char*).
struct SummaryRecord {
  char* run_id;
  char* task;
  char* entry;
  char* model;
  int64_t seed;
  char* grid;
  char* status;
  double id_acc, ood_length_acc, shift_acc, shortcut_gap;
  int64_t steps_to_target;
  double final_train_loss, wall_s, tokens_per_s;
};

Id summary_memory_type() {
  Id str = string_type();
  Id t(H5Tcreate(H5T_COMPOUND, sizeof(SummaryRecord)));
  auto str_field = [&](const char* name, size_t off) { H5Tinsert(t, name, off, str); };
  auto int_field = [&](const char* name, size_t off) { H5Tinsert(t, name, off, H5T_NATIVE_INT64); };
  auto dbl_field = [&](const char* name, size_t off) { H5Tinsert(t, name, off, H5T_NATIVE_DOUBLE); };
  str_field("run_id", offsetof(SummaryRecord, run_id));
  str_field("task", offsetof(SummaryRecord, task));
  str_field("entry", offsetof(SummaryRecord, entry));
  str_field("model", offsetof(SummaryRecord, model));
  int_field("seed", offsetof(SummaryRecord, seed));
  str_field("grid", offsetof(SummaryRecord, grid));
  str_field("status", offsetof(SummaryRecord, status));
  dbl_field("id_acc", offsetof(SummaryRecord, id_acc));
  dbl_field("ood_length_acc", offsetof(SummaryRecord, ood_length_acc));
  dbl_field("shift_acc", offsetof(SummaryRecord, shift_acc));
  dbl_field("shortcut_gap", offsetof(SummaryRecord, shortcut_gap));
  int_field("steps_to_target", offsetof(SummaryRecord, steps_to_target));
  dbl_field("final_train_loss", offsetof(SummaryRecord, final_train_loss));
  dbl_field("wall_s", offsetof(SummaryRecord, wall_s));
  dbl_field("tokens_per_s", offsetof(SummaryRecord, tokens_per_s));
  return t;
}

void write_summary(hid_t file, const std::vector<SummaryRow>& rows) {
  std::vector<SummaryRecord> recs;
  auto text = [](const std::string& s) { return const_cast<char*>(s.c_str()); };  // only read by H5Dwrite
  for (const auto& r : rows)
    recs.push_back({text(r.run_id), text(r.task), text(r.entry), text(r.model), r.seed, text(r.grid), text(r.status),
                    r.id_acc, r.ood_length_acc, r.shift_acc, r.shortcut_gap, r.steps_to_target, r.final_train_loss,
                    r.wall_s, r.tokens_per_s});
  Id mem = summary_memory_type();
  Id file_type(H5Tcopy(mem));
  H5Tpack(file_type);
  write_array(file, "summary", file_type, mem, recs.data(), {recs.size()});
}

std::vector<SummaryRow> read_summary(hid_t file) {
  std::vector<hsize_t> dims;
  Id ds = open_dataset(file, "summary", H5T_COMPOUND, 1, dims);
  Id mem = summary_memory_type();
  std::vector<SummaryRecord> recs(count_of(dims));
  std::vector<SummaryRow> rows;
  if (recs.empty()) return rows;
  if (H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, recs.data()) < 0)
    bad(file, "summary", "cannot be read as srbench's summary table (missing fields or damaged?)");
  auto str = [](const char* p) { return std::string(p ? p : ""); };
  for (const auto& r : recs)
    rows.push_back({str(r.run_id), str(r.task), str(r.entry), str(r.model), r.seed, str(r.grid), str(r.status),
                    r.id_acc, r.ood_length_acc, r.shift_acc, r.shortcut_gap, r.steps_to_target, r.final_train_loss,
                    r.wall_s, r.tokens_per_s});
  Id space(H5Dget_space(ds));
  reclaim(mem, space, recs.data());
  return rows;
}

}  // namespace

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// ---- one run --------------------------------------------------------------------------------

void write_run_group(hid_t file, const RunResult& r, const model::Model* checkpoint) {
  if (r.run_id.empty()) throw std::runtime_error("write_run_group: the run has no run_id");
  Id runs(has_link(file, "runs") ? H5Gopen2(file, "runs", H5P_DEFAULT) : H5Gcreate2(file, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!runs.valid()) write_failed(file, "runs");
  Id g = create_group(runs, r.run_id);

  write_attr(g, "config", r.config_yaml);
  write_attr(g, "task", r.task);
  write_attr(g, "entry", r.entry);
  write_attr(g, "model", r.model);
  write_attr(g, "grid", r.grid);
  write_attr(g, "seed", static_cast<int64_t>(r.seed));
  write_attr(g, "status", r.status);
  write_attr(g, "message", r.message);
  write_attr(g, "wall_s", r.wall_s);
  write_attr(g, "tokens_per_s", r.tokens_per_s);
  write_attr(g, "id_acc", r.metrics.id_acc);
  write_attr(g, "ood_length_acc", r.metrics.ood_length_acc);
  write_attr(g, "shift_acc", r.metrics.shift_acc);
  write_attr(g, "shortcut_gap", r.metrics.shortcut_gap);
  write_attr(g, "steps_to_target", r.metrics.steps_to_target);
  write_attr(g, "final_train_loss", r.metrics.final_train_loss);
  write_attr(g, "bits_per_byte", static_cast<int64_t>(r.bits_per_byte ? 1 : 0));

  write_curve(g, r.curve);
  {
    Id eval = create_group(g, "eval");
    std::vector<int64_t> length, condition;
    std::vector<double> loss, token_acc, seq_acc;
    for (const auto& e : r.eval) {
      length.push_back(e.length);
      condition.push_back(e.condition);
      loss.push_back(e.loss);
      token_acc.push_back(e.token_acc);
      seq_acc.push_back(e.seq_acc);
    }
    write_int64s(eval, "length", length);
    write_int64s(eval, "condition", condition);
    write_doubles(eval, "loss", loss);
    write_doubles(eval, "token_acc", token_acc);
    write_doubles(eval, "seq_acc", seq_acc);
    if (!r.conditions.empty() && r.conditions[0] != "id")
      throw std::runtime_error("write_run_group: run " + r.run_id + ": the first condition must be \"id\", got \"" +
                               r.conditions[0] + "\"");
    for (const auto& e : r.eval)
      if (e.condition < 0 || static_cast<size_t>(e.condition) >= std::max<size_t>(1, r.conditions.size()))
        throw std::runtime_error("write_run_group: run " + r.run_id + ": an eval row has condition " +
                                 std::to_string(e.condition) + " but there are " +
                                 std::to_string(r.conditions.size()) + " conditions");
    write_strings(eval, "conditions", r.conditions.empty() ? std::vector<std::string>{"id"} : r.conditions);
  }
  if (!r.diag.empty()) {
    const auto& d = r.diag;
    const auto L = static_cast<size_t>(d.layers), H = static_cast<size_t>(d.heads);
    if (d.attn_entropy.size() != L * H || d.attn_max.size() != L * H || d.value_entropy.size() != L ||
        d.hidden_entropy.size() != L)
      throw std::runtime_error("write_run_group: run " + r.run_id + ": diagnostics do not match layers " +
                               std::to_string(L) + " × heads " + std::to_string(H));
    Id diag = create_group(g, "diag");
    write_doubles(diag, "attn_entropy", d.attn_entropy, {L, H});
    write_doubles(diag, "attn_max", d.attn_max, {L, H});
    write_doubles(diag, "value_entropy", d.value_entropy);
    write_doubles(diag, "hidden_entropy", d.hidden_entropy);
  }
  write_attr(g, "splines_from", r.splines_from);
  write_attr(g, "splines_task", r.splines_task);
  if (!r.splines.empty()) write_splines(create_group(g, "splines"), r.splines);
  write_routers(g, r);
  if (checkpoint) {
    Id ck = create_group(g, "checkpoint");
    model::write_checkpoint(ck, *checkpoint);
  }
}

void write_run_file(const std::string& path, const RunResult& result, const std::string& suite_yaml,
                    const model::Model* checkpoint) {
  model::h5::write_file_atomically(path, [&](hid_t file) {
    write_root_attributes(file, suite_yaml);
    write_run_group(file, result, checkpoint);
  });
}

RunResult read_run_group(hid_t file, const std::string& run_id) {
  Id runs = open_group(file, "runs");
  Id g = open_group(runs, run_id);
  RunResult r;
  r.run_id = run_id;
  r.config_yaml = read_string_attr(g, "config");
  r.task = read_string_attr(g, "task");
  r.entry = read_string_attr(g, "entry");
  r.model = read_string_attr(g, "model");
  r.grid = read_string_attr(g, "grid");
  r.seed = static_cast<uint64_t>(read_int_attr(g, "seed"));
  r.status = read_string_attr(g, "status");
  r.message = read_string_attr(g, "message");
  r.wall_s = read_double_attr(g, "wall_s");
  r.tokens_per_s = read_double_attr(g, "tokens_per_s");
  r.metrics.id_acc = read_double_attr(g, "id_acc");
  r.metrics.ood_length_acc = read_double_attr(g, "ood_length_acc");
  r.metrics.shift_acc = read_double_attr(g, "shift_acc");
  r.metrics.shortcut_gap = read_double_attr(g, "shortcut_gap");
  r.metrics.steps_to_target = read_int_attr(g, "steps_to_target");
  r.metrics.final_train_loss = read_double_attr(g, "final_train_loss");
  r.bits_per_byte = read_int_attr(g, "bits_per_byte") != 0;

  r.curve = read_curve(g);
  // absent in files written before spline searches existed
  if (H5Aexists(g, "splines_from") > 0) r.splines_from = read_string_attr(g, "splines_from");
  if (H5Aexists(g, "splines_task") > 0) r.splines_task = read_string_attr(g, "splines_task");
  if (has_link(g, "splines")) r.splines = read_splines(Id(H5Gopen2(g, "splines", H5P_DEFAULT)));
  {
    Id eval = open_group(g, "eval");
    const auto length = read_int64s(eval, "length");
    const auto condition = read_int64s(eval, "condition");
    const auto loss = read_doubles(eval, "loss");
    const auto token_acc = read_doubles(eval, "token_acc");
    const auto seq_acc = read_doubles(eval, "seq_acc");
    r.conditions = read_strings(eval, "conditions");
    const size_t n = length.size();
    if (condition.size() != n || loss.size() != n || token_acc.size() != n || seq_acc.size() != n)
      throw ResultsError(where(eval) + ": length, condition, loss, token_acc and seq_acc differ in length");
    if (r.conditions.empty() || r.conditions[0] != "id")
      throw ResultsError(where(eval, "conditions") + ": the first condition must be \"id\"");
    for (size_t i = 0; i < n; ++i) {
      if (condition[i] < 0 || static_cast<size_t>(condition[i]) >= r.conditions.size())
        throw ResultsError(where(eval, "condition") + ": row " + std::to_string(i) + " has condition " +
                           std::to_string(condition[i]) + ", outside [0, " + std::to_string(r.conditions.size()) + ")");
      r.eval.push_back({length[i], condition[i], loss[i], token_acc[i], seq_acc[i]});
    }
  }
  if (has_link(g, "diag")) {
    Id diag = open_group(g, "diag");
    std::vector<hsize_t> dims;
    r.diag.attn_entropy = read_doubles(diag, "attn_entropy", dims, 2);
    r.diag.layers = static_cast<int>(dims[0]);
    r.diag.heads = static_cast<int>(dims[1]);
    std::vector<hsize_t> dims2;
    r.diag.attn_max = read_doubles(diag, "attn_max", dims2, 2);
    r.diag.value_entropy = read_doubles(diag, "value_entropy");
    r.diag.hidden_entropy = read_doubles(diag, "hidden_entropy");
    const auto L = static_cast<size_t>(r.diag.layers);
    if (dims2 != dims || r.diag.value_entropy.size() != L || r.diag.hidden_entropy.size() != L)
      throw ResultsError(where(diag) + ": attn_entropy, attn_max [layers,heads] and value_entropy, hidden_entropy "
                         "[layers] disagree in shape");
  }
  r.routers = read_routers(g);
  return r;
}

RunResult read_run_file(const std::string& path, std::string* suite_yaml) {
  Id file = open_results_file(path, "run file");
  check_format_version(file);
  const std::string suite = read_string_attr(file, "suite");
  Id runs = open_group(file, "runs");
  const auto names = child_names(runs);
  if (names.size() != 1)
    throw ResultsError(where(runs) + ": a run file holds exactly one run, this one has " + std::to_string(names.size()));
  RunResult r = read_run_group(file, names[0]);
  if (suite_yaml) *suite_yaml = suite;
  return r;
}

// ---- the suite file -------------------------------------------------------------------------

SummaryRow summary_row(const RunResult& r) {
  return {r.run_id, r.task, r.entry, r.model, static_cast<int64_t>(r.seed), r.grid, r.status,
          r.metrics.id_acc, r.metrics.ood_length_acc, r.metrics.shift_acc, r.metrics.shortcut_gap,
          r.metrics.steps_to_target, r.metrics.final_train_loss, r.wall_s, r.tokens_per_s};
}

void write_suite_file(const std::string& out_path, const std::string& suite_yaml,
                      const std::vector<std::string>& run_file_paths, const std::vector<std::string>& splines_file_paths) {
  // Read every run first: a damaged run file stops us before anything is written.
  std::vector<SummaryRow> rows;
  std::vector<RunResult> results;
  std::set<std::string> seen;
  for (const auto& path : run_file_paths) {
    results.push_back(read_run_file(path));
    rows.push_back(summary_row(results.back()));
    if (!seen.insert(rows.back().run_id).second)
      throw ResultsError("run file " + path + ": run " + rows.back().run_id + " is given twice");
  }
  std::vector<std::string> search_names;
  for (const auto& path : splines_file_paths) {
    search_names.push_back(read_splines_file(path).name);
    if (search_names.back().empty()) throw ResultsError("splines file " + path + ": /splines has no attribute 'name'");
    if (std::count(search_names.begin(), search_names.end(), search_names.back()) > 1)
      throw ResultsError("splines file " + path + ": search " + search_names.back() + " is given twice");
  }
  const TransferMatrix transfer = compute_transfer(results);
  model::h5::write_file_atomically(out_path, [&](hid_t file) {
    write_root_attributes(file, suite_yaml);
    write_summary(file, rows);
    Id runs = create_group(file, "runs");
    for (size_t i = 0; i < run_file_paths.size(); ++i) {
      Id src = open_results_file(run_file_paths[i], "run file");
      const std::string from = "/runs/" + rows[i].run_id;
      if (H5Ocopy(src, from.c_str(), runs, rows[i].run_id.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
        throw std::runtime_error("cannot copy " + run_file_paths[i] + ":" + from + " into " + out_path);
    }
    if (!splines_file_paths.empty()) {
      Id splines = create_group(file, "splines");
      for (size_t i = 0; i < splines_file_paths.size(); ++i) {
        Id src = open_results_file(splines_file_paths[i], "splines file");
        if (H5Ocopy(src, "/splines", splines, search_names[i].c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
          throw std::runtime_error("cannot copy " + splines_file_paths[i] + ":/splines into " + out_path);
      }
    }
    if (!transfer.empty()) {
      Id g = create_group(file, "transfer");
      write_strings(g, "searched_on", transfer.searched_on);
      write_strings(g, "trained_on", transfer.trained_on);
      const hsize_t R = transfer.searched_on.size(), C = transfer.trained_on.size();
      write_doubles(g, "id_acc_delta", transfer.id_acc_delta, {R, C});
      write_doubles(g, "steps_ratio", transfer.steps_ratio, {R, C});
    }
  });
}

SuiteFile read_suite_file(const std::string& path) {
  Id file = open_results_file(path, "suite file");
  SuiteFile s;
  if (!has_link(file, "summary") || !has_link(file, "runs"))
    throw ResultsError("suite file " + path + ": not an srbench suite file (it lacks /summary or /runs; a run file "
                       "from <dir>/<suite>/runs/ is joined into one by `srbench merge`)");
  check_format_version(file);
  s.format_version = kResultsFormatVersion;
  s.suite_yaml = read_string_attr(file, "suite");
  s.srbench_version = read_string_attr(file, "srbench_version");
  s.created = read_string_attr(file, "created");
  s.summary = read_summary(file);
  for (const auto& row : s.summary) s.runs.push_back(read_run_group(file, row.run_id));
  if (has_link(file, "splines")) {
    Id splines = open_group(file, "splines");
    for (const auto& name : child_names(splines))
      s.searches.push_back(read_search_group(open_group(splines, name), "suite file " + path + ": /splines/" + name));
  }
  return s;
}

}  // namespace srbench::harness
