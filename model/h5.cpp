#include "model/h5.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <limits>
#include <type_traits>

namespace srbench::model {

namespace h5_handle {

bool Id::close() {
  if (id_ < 0) return true;
  herr_t r = -1;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: r = H5Fclose(id_); break;
    case H5I_GROUP: r = H5Gclose(id_); break;
    case H5I_DATASET: r = H5Dclose(id_); break;
    case H5I_DATASPACE: r = H5Sclose(id_); break;
    case H5I_DATATYPE: r = H5Tclose(id_); break;
    case H5I_ATTR: r = H5Aclose(id_); break;
    case H5I_GENPROP_LST: r = H5Pclose(id_); break;
    default: r = H5Idec_ref(id_); break;
  }
  id_ = H5I_INVALID_HID;
  return r >= 0;
}

}  // namespace h5_handle

namespace h5 {

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string where(hid_t loc) {
  std::string file, path;
  if (const ssize_t n = H5Fget_name(loc, nullptr, 0); n > 0) {
    file.resize(static_cast<size_t>(n) + 1);
    H5Fget_name(loc, file.data(), file.size());
    file.resize(static_cast<size_t>(n));
  }
  if (const ssize_t n = H5Iget_name(loc, nullptr, 0); n > 0) {
    path.resize(static_cast<size_t>(n) + 1);
    H5Iget_name(loc, path.data(), path.size());
    path.resize(static_cast<size_t>(n));
  }
  return file + ":" + (path.empty() ? "/" : path);
}

std::string where(hid_t loc, const std::string& name) {
  std::string w = where(loc);
  return w + (w.back() == '/' ? "" : "/") + name;
}

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

[[noreturn]] void fail(hid_t loc, const std::string& name, const std::string& what) {
  throw Error(where(loc, name) + ": " + what);
}

[[noreturn]] void fail_attr(hid_t loc, const std::string& name, const std::string& what) {
  throw Error(where(loc) + " attribute '" + name + "': " + what);
}

// Variable-length UTF-8 strings (file and memory alike).
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

template <typename T>
struct TypeOf;
template <>
struct TypeOf<float> {
  static hid_t file() { return H5T_IEEE_F32LE; }
  static hid_t mem() { return H5T_NATIVE_FLOAT; }
};
template <>
struct TypeOf<double> {
  static hid_t file() { return H5T_IEEE_F64LE; }
  static hid_t mem() { return H5T_NATIVE_DOUBLE; }
};
template <>
struct TypeOf<int32_t> {
  static hid_t file() { return H5T_STD_I32LE; }
  static hid_t mem() { return H5T_NATIVE_INT32; }
};
template <>
struct TypeOf<int64_t> {
  static hid_t file() { return H5T_STD_I64LE; }
  static hid_t mem() { return H5T_NATIVE_INT64; }
};

void write_raw(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type, const void* data,
               const Shape& shape) {
  silence_errors();
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Id space(shape.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Id ds(space.valid() ? H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                      : H5I_INVALID_HID);
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  if (!ds.valid() || (count > 0 && H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
    throw Error("cannot write dataset " + where(loc, name));
}

void write_scalar_attr(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type, const void* value) {
  silence_errors();
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid() || H5Awrite(attr, mem_type, value) < 0)
    throw Error("cannot write attribute '" + name + "' of " + where(loc));
}

// Opens a scalar attribute of class `cls` (or, with `also`, that class).
Id open_scalar_attr(hid_t loc, const std::string& name, H5T_class_t cls, const char* expected,
                    H5T_class_t also = H5T_NO_CLASS) {
  silence_errors();
  if (H5Aexists(loc, name.c_str()) <= 0) fail_attr(loc, name, std::string("missing (expected ") + expected + ")");
  Id attr(H5Aopen(loc, name.c_str(), H5P_DEFAULT));
  Id space(attr.valid() ? H5Aget_space(attr) : H5I_INVALID_HID);
  Id type(attr.valid() ? H5Aget_type(attr) : H5I_INVALID_HID);
  if (!attr.valid() || !space.valid() || H5Sget_simple_extent_npoints(space) != 1)
    fail_attr(loc, name, std::string("expected a single value (") + expected + ")");
  const H5T_class_t c = H5Tget_class(type);
  if (c != cls && (also == H5T_NO_CLASS || c != also)) fail_attr(loc, name, std::string("expected ") + expected);
  return attr;
}

const char* class_name(DatasetInfo::Class c) {
  switch (c) {
    case DatasetInfo::Integer: return "integer";
    case DatasetInfo::Float: return "float";
    case DatasetInfo::String: return "string";
    case DatasetInfo::Compound: return "compound";
    case DatasetInfo::Other: break;
  }
  return "other";
}

// Opens dataset `name`, checks its class and rank; its element count goes to `count`.
Id open_checked(hid_t loc, const std::string& name, DatasetInfo::Class cls, int rank, Shape* shape, size_t& count) {
  const DatasetInfo info = dataset_info(loc, name);
  if (info.cls != cls) fail(loc, name, std::string("expected ") + class_name(cls) + " values");
  if (rank >= 0 && static_cast<int>(info.shape.size()) != rank)
    fail(loc, name, "expected " + std::to_string(rank) + " dimension(s), got shape " + shape_text(info.shape));
  count = 1;
  for (int64_t d : info.shape) count *= static_cast<size_t>(d);
  if (shape) *shape = info.shape;
  return open_dataset(loc, name);
}

}  // namespace

// ---- files ----------------------------------------------------------------------------------

Id open_file(const std::string& path, const std::string& what, bool writable) {
  silence_errors();
  std::error_code ec;
  const std::string head = what + " " + path + ": ";
  if (!std::filesystem::exists(path, ec)) throw Error(head + "no such file");
  if (std::filesystem::is_directory(path, ec)) throw Error(head + "is a directory, not a file");
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(head + "not a regular file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw Error(head + "not an HDF5 file (empty or damaged?)");
  Id f(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) throw Error(head + "cannot be opened as HDF5 (truncated or damaged)");
  return f;
}

void write_file_atomically(const std::string& path, const std::function<void(hid_t file)>& write) {
  silence_errors();
  static std::atomic<uint64_t> counter{0};  // two writers in one process never share a name
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);  // closing the file closes everything in it
  Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
  if (!file.valid()) throw Error("cannot create " + tmp + " (does the folder exist, is it writable?)");
  try {
    write(file);
    if (!file.close()) throw Error("cannot finish writing " + tmp + " (disk full?)");
    std::filesystem::rename(tmp, path);
  } catch (...) {
    file.reset();
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

// ---- groups and links -----------------------------------------------------------------------

bool has_link(hid_t loc, const std::string& name) {
  silence_errors();
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;  // < 0 when a parent group is missing
}

bool is_dataset(hid_t loc, const std::string& name) {
  if (!has_link(loc, name)) return false;
  H5O_info_t info;
#if H5_VERSION_GE(1, 12, 0)
  if (H5Oget_info_by_name3(loc, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#else
  if (H5Oget_info_by_name2(loc, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#endif
  return info.type == H5O_TYPE_DATASET;
}

Id create_group(hid_t loc, const std::string& name) {
  silence_errors();
  Id g(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!g.valid()) throw Error("cannot create group " + where(loc, name) + " (does it exist already?)");
  return g;
}

Id open_group(hid_t loc, const std::string& name) {
  if (!has_link(loc, name)) fail(loc, name, "missing group");
  Id g(H5Gopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!g.valid()) fail(loc, name, "is not a group (or cannot be opened)");
  return g;
}

Id open_or_create_group(hid_t loc, const std::string& name) {
  return has_link(loc, name) ? open_group(loc, name) : create_group(loc, name);
}

std::vector<std::string> link_names(hid_t group) {
  silence_errors();
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) throw Error(where(group) + ": cannot list its contents");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t n = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0) throw Error(where(group) + ": cannot list its contents");
    std::string name(static_cast<size_t>(n) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<size_t>(n));
    names.push_back(std::move(name));
  }
  return names;
}

void copy(hid_t src, const std::string& src_name, hid_t dst, const std::string& dst_name) {
  silence_errors();
  if (H5Ocopy(src, src_name.c_str(), dst, dst_name.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
    throw Error("cannot copy " + where(src, src_name) + " into " + where(dst, dst_name));
}

// ---- attributes -----------------------------------------------------------------------------

bool has_attr(hid_t loc, const std::string& name) {
  silence_errors();
  return H5Aexists(loc, name.c_str()) > 0;
}

void write_attr(hid_t loc, const std::string& name, const std::string& value) {
  Id type = string_type();
  const char* text = value.c_str();
  write_scalar_attr(loc, name, type, type, &text);
}
void write_attr(hid_t loc, const std::string& name, const char* value) { write_attr(loc, name, std::string(value)); }
void write_attr(hid_t loc, const std::string& name, int64_t value) {
  write_scalar_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}
void write_attr(hid_t loc, const std::string& name, double value) {
  write_scalar_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

std::string read_string_attr(hid_t loc, const std::string& name) {
  Id attr = open_scalar_attr(loc, name, H5T_STRING, "a string");
  Id type(H5Aget_type(attr));
  std::string out;
  if (H5Tis_variable_str(type) > 0) {
    Id mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5Tget_cset(type));
    char* text = nullptr;
    if (H5Aread(attr, mem, &text) < 0) fail_attr(loc, name, "cannot be read");
    out = text ? text : "";
    H5free_memory(text);
  } else {
    out.assign(H5Tget_size(type), '\0');
    Id mem(H5Tcopy(type));
    if (H5Aread(attr, mem, out.data()) < 0) fail_attr(loc, name, "cannot be read");
    out.resize(std::min(out.size(), out.find('\0')));
  }
  return out;
}

int64_t read_int_attr(hid_t loc, const std::string& name) {
  Id attr = open_scalar_attr(loc, name, H5T_INTEGER, "an integer");
  int64_t v = 0;
  if (H5Aread(attr, H5T_NATIVE_INT64, &v) < 0) fail_attr(loc, name, "cannot be read");
  return v;
}

double read_double_attr(hid_t loc, const std::string& name) {
  Id attr = open_scalar_attr(loc, name, H5T_FLOAT, "a number", H5T_INTEGER);
  double v = 0;
  if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) fail_attr(loc, name, "cannot be read");
  return v;
}

// ---- datasets -------------------------------------------------------------------------------

template <typename T>
void write_array(hid_t loc, const std::string& name, const T* data, const Shape& shape) {
  write_raw(loc, name, TypeOf<T>::file(), TypeOf<T>::mem(), data, shape);
}

void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> ptrs;
  for (const auto& s : values) ptrs.push_back(s.c_str());
  Id type = string_type();
  write_raw(loc, name, type, type, ptrs.data(), {static_cast<int64_t>(values.size())});
}

Id open_dataset(hid_t loc, const std::string& name) {
  silence_errors();
  if (!has_link(loc, name)) fail(loc, name, "missing dataset");
  Id ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!ds.valid()) fail(loc, name, "is not a dataset (or cannot be opened)");
  return ds;
}

Shape shape_of(hid_t dataset) {
  Id space(H5Dget_space(dataset));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank < 0) throw Error(where(dataset) + ": cannot read its shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return {dims.begin(), dims.end()};
}

DatasetInfo dataset_info(hid_t loc, const std::string& name) {
  Id ds = open_dataset(loc, name);
  Id type(H5Dget_type(ds));
  if (!type.valid()) fail(loc, name, "cannot read its type (damaged file?)");
  DatasetInfo info;
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: info.cls = DatasetInfo::Integer; break;
    case H5T_FLOAT: info.cls = DatasetInfo::Float; break;
    case H5T_STRING: info.cls = DatasetInfo::String; break;
    case H5T_COMPOUND: info.cls = DatasetInfo::Compound; break;
    default: info.cls = DatasetInfo::Other; break;
  }
  info.bytes = H5Tget_size(type);
  info.shape = shape_of(ds);
  return info;
}

template <typename T>
std::vector<T> read_array(hid_t loc, const std::string& name, int rank, Shape* shape) {
  size_t count = 0;
  const auto cls = std::is_floating_point_v<T> ? DatasetInfo::Float : DatasetInfo::Integer;
  Id ds = open_checked(loc, name, cls, rank, shape, count);
  std::vector<T> v(count);
  if (count > 0 && H5Dread(ds, TypeOf<T>::mem(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    fail(loc, name, "cannot be read (damaged file?)");
  return v;
}

template <typename T>
void read_array_into(hid_t loc, const std::string& name, T* out, size_t count) {
  size_t n = 0;
  const auto cls = std::is_floating_point_v<T> ? DatasetInfo::Float : DatasetInfo::Integer;
  Id ds = open_checked(loc, name, cls, -1, nullptr, n);
  if (n != count) fail(loc, name, "holds " + std::to_string(n) + " values, expected " + std::to_string(count));
  if (count > 0 && H5Dread(ds, TypeOf<T>::mem(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
    fail(loc, name, "cannot be read (damaged file?)");
}

std::vector<std::string> read_strings(hid_t loc, const std::string& name) {
  size_t count = 0;
  Id ds = open_checked(loc, name, DatasetInfo::String, 1, nullptr, count);
  Id file_type(H5Dget_type(ds));
  if (H5Tis_variable_str(file_type) <= 0) fail(loc, name, "expected variable-length strings");
  std::vector<char*> ptrs(count, nullptr);
  std::vector<std::string> out;
  if (ptrs.empty()) return out;
  Id mem = string_type();
  if (H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0) fail(loc, name, "cannot be read (damaged file?)");
  for (char* p : ptrs) out.emplace_back(p ? p : "");
  Id space(H5Dget_space(ds));
  reclaim(mem, space, ptrs.data());
  return out;
}

#define SRBENCH_H5_ARRAY(T)                                                                        \
  template void write_array<T>(hid_t, const std::string&, const T*, const Shape&);                \
  template std::vector<T> read_array<T>(hid_t, const std::string&, int, Shape*);                  \
  template void read_array_into<T>(hid_t, const std::string&, T*, size_t);
SRBENCH_H5_ARRAY(float)
SRBENCH_H5_ARRAY(double)
SRBENCH_H5_ARRAY(int32_t)
SRBENCH_H5_ARRAY(int64_t)
#undef SRBENCH_H5_ARRAY

// ---- compound tables ------------------------------------------------------------------------

namespace {

// In memory a row is one 8-byte slot per column: char* (strings), int64_t or double.
constexpr size_t kSlot = 8;
static_assert(sizeof(char*) == kSlot && sizeof(int64_t) == kSlot && sizeof(double) == kSlot);

Id table_memory_type(const std::vector<Column>& columns) {
  Id str = string_type();
  Id t(H5Tcreate(H5T_COMPOUND, kSlot * std::max<size_t>(1, columns.size())));
  for (size_t c = 0; c < columns.size(); ++c) {
    const hid_t type = columns[c].type == ColumnType::String  ? hid_t(str)
                       : columns[c].type == ColumnType::Int64 ? H5T_NATIVE_INT64
                                                              : H5T_NATIVE_DOUBLE;
    H5Tinsert(t, columns[c].name.c_str(), c * kSlot, type);
  }
  return t;
}

}  // namespace

void write_table(hid_t loc, const std::string& name, const std::vector<Column>& columns,
                 const std::vector<TableRow>& rows) {
  const size_t C = columns.size();
  std::vector<unsigned char> buf(rows.size() * C * kSlot);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != C) throw Error("cannot write table " + where(loc, name) + ": a row has the wrong width");
    for (size_t c = 0; c < C; ++c) {
      unsigned char* slot = buf.data() + (r * C + c) * kSlot;
      const Cell& cell = rows[r][c];
      switch (columns[c].type) {
        case ColumnType::String: {
          const char* p = std::get<std::string>(cell).c_str();  // only read by H5Dwrite
          std::memcpy(slot, &p, kSlot);
          break;
        }
        case ColumnType::Int64: std::memcpy(slot, &std::get<int64_t>(cell), kSlot); break;
        case ColumnType::Double: std::memcpy(slot, &std::get<double>(cell), kSlot); break;
      }
    }
  }
  Id mem = table_memory_type(columns);
  Id file_type(H5Tcopy(mem));
  H5Tpack(file_type);
  write_raw(loc, name, file_type, mem, buf.data(), {static_cast<int64_t>(rows.size())});
}

std::vector<TableRow> read_table(hid_t loc, const std::string& name, const std::vector<Column>& columns) {
  size_t count = 0;
  Id ds = open_checked(loc, name, DatasetInfo::Compound, 1, nullptr, count);
  // The columns the file has; an optional one it lacks is filled with its type's default.
  Id file_type(H5Dget_type(ds));
  std::vector<Column> present;
  std::vector<bool> has(columns.size(), false);
  for (size_t c = 0; c < columns.size(); ++c) {
    has[c] = H5Tget_member_index(file_type, columns[c].name.c_str()) >= 0;
    if (has[c]) present.push_back(columns[c]);
    else if (!columns[c].optional) fail(loc, name, "has no column '" + columns[c].name + "'");
  }
  const size_t P = present.size();
  std::vector<unsigned char> buf(count * P * kSlot);
  std::vector<TableRow> rows;
  if (count == 0) return rows;
  Id mem = table_memory_type(present);
  if (H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
    fail(loc, name, "cannot be read as the expected table (missing fields or damaged?)");
  for (size_t r = 0; r < count; ++r) {
    TableRow row;
    size_t p = 0;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!has[c]) {
        row.push_back(columns[c].missing);
        continue;
      }
      const unsigned char* slot = buf.data() + (r * P + p++) * kSlot;
      switch (columns[c].type) {
        case ColumnType::String: {
          const char* text = nullptr;
          std::memcpy(&text, slot, kSlot);
          row.emplace_back(std::string(text ? text : ""));
          break;
        }
        case ColumnType::Int64: {
          int64_t v = 0;
          std::memcpy(&v, slot, kSlot);
          row.emplace_back(v);
          break;
        }
        case ColumnType::Double: {
          double v = 0;
          std::memcpy(&v, slot, kSlot);
          row.emplace_back(v);
          break;
        }
      }
    }
    rows.push_back(std::move(row));
  }
  Id space(H5Dget_space(ds));
  reclaim(mem, space, buf.data());
  return rows;
}

}  // namespace h5
}  // namespace srbench::model
