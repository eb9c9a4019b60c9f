#include "model/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace srbench::model {

void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

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

Id open_file(const std::string& path, const std::string& what) {
  silence_hdf5_errors();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw ModelError(what + " " + path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw ModelError(what + " " + path + ": is a directory, not a file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw ModelError(what + " " + path + ": not an HDF5 file");
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) throw ModelError(what + " " + path + ": cannot be opened as HDF5 (unreadable or damaged)");
  return f;
}

void write_file_atomically(const std::string& path, const std::function<void(hid_t file)>& write) {
  silence_hdf5_errors();
  static std::atomic<uint64_t> counter{0};  // two writers in one process never share a name
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);  // closing the file closes everything in it
  Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
  if (!file.valid()) throw std::runtime_error("cannot create " + tmp + " (does the folder exist, is it writable?)");
  try {
    write(file);
    if (!file.close()) throw std::runtime_error("cannot finish writing " + tmp + " (disk full?)");
    std::filesystem::rename(tmp, path);
  } catch (...) {
    file.reset();
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

bool has_link(hid_t loc, const std::string& name) {
  silence_hdf5_errors();
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;  // < 0 when a parent group is missing
}

Id create_group(hid_t loc, const std::string& name) {
  silence_hdf5_errors();
  Id g(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!g.valid()) throw std::runtime_error("cannot create group " + where(loc, name) + " (does it exist already?)");
  return g;
}

Id open_group(hid_t loc, const std::string& name) {
  if (!has_link(loc, name)) throw ModelError(where(loc, name) + ": no such group");
  Id g(H5Gopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!g.valid()) throw ModelError(where(loc, name) + ": is not a group");
  return g;
}

namespace {

void write_raw(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type, const void* data,
               const std::vector<int64_t>& shape) {
  silence_hdf5_errors();
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Id space(shape.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Id ds(H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!space.valid() || !ds.valid() || H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw std::runtime_error("cannot write dataset " + where(loc, name));
}

}  // namespace

void write_dataset(hid_t loc, const std::string& name, const float* data, const std::vector<int64_t>& shape) {
  write_raw(loc, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, data, shape);
}

void write_dataset(hid_t loc, const std::string& name, const int32_t* data, const std::vector<int64_t>& shape) {
  write_raw(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, data, shape);
}

std::vector<std::string> link_names(hid_t group) {
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) throw ModelError(where(group) + ": cannot list its contents");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t n = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0) throw ModelError(where(group) + ": cannot list its contents");
    std::string name(static_cast<size_t>(n) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<size_t>(n));
    names.push_back(std::move(name));
  }
  return names;
}

std::vector<int64_t> shape_of(hid_t dataset) {
  Id space(H5Dget_space(dataset));
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw ModelError(where(dataset) + ": cannot read its shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return {dims.begin(), dims.end()};
}

}  // namespace h5

namespace {

using h5::Id;
using h5::where;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// ---- attributes ----

void write_string_attribute(hid_t loc, const char* name, const std::string& value) {
  Id type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
  const char* text = value.c_str();
  if (!attr.valid() || H5Awrite(attr, type, &text) < 0)
    throw std::runtime_error("cannot write attribute '" + std::string(name) + "' of " + where(loc));
}

void write_int_attribute(hid_t loc, const char* name, int64_t value) {
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate2(loc, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid() || H5Awrite(attr, H5T_NATIVE_INT64, &value) < 0)
    throw std::runtime_error("cannot write attribute '" + std::string(name) + "' of " + where(loc));
}

void write_double_attribute(hid_t loc, const char* name, double value) {
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate2(loc, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid() || H5Awrite(attr, H5T_NATIVE_DOUBLE, &value) < 0)
    throw std::runtime_error("cannot write attribute '" + std::string(name) + "' of " + where(loc));
}

// Opens a scalar attribute; ModelError naming it when absent or not a single value.
Id open_scalar_attribute(hid_t loc, const char* name, const char* expected) {
  const std::string what = where(loc) + " attribute '" + name + "'";
  if (H5Aexists(loc, name) <= 0) throw ModelError(what + ": missing (expected " + expected + "; not an srbench checkpoint?)");
  Id attr(H5Aopen(loc, name, H5P_DEFAULT));
  Id space(H5Aget_space(attr));
  if (!attr.valid() || H5Sget_simple_extent_npoints(space) != 1)
    throw ModelError(what + ": expected a single value (" + expected + ")");
  return attr;
}

std::string read_string_attribute(hid_t loc, const char* name) {
  Id attr = open_scalar_attribute(loc, name, "a string");
  Id type(H5Aget_type(attr));
  if (H5Tget_class(type) != H5T_STRING) throw ModelError(where(loc) + " attribute '" + name + "': expected a string");
  std::string out;
  if (H5Tis_variable_str(type) > 0) {
    Id mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5Tget_cset(type));
    char* text = nullptr;
    if (H5Aread(attr, mem, &text) < 0) throw ModelError(where(loc) + " attribute '" + name + "': cannot be read");
    out = text ? text : "";
    H5free_memory(text);
  } else {
    Id mem(H5Tcopy(type));
    out.assign(H5Tget_size(type), '\0');
    if (H5Aread(attr, mem, out.data()) < 0) throw ModelError(where(loc) + " attribute '" + name + "': cannot be read");
    out.resize(std::min(out.size(), out.find('\0')));
  }
  return out;
}

int64_t read_int_attribute(hid_t loc, const char* name) {
  Id attr = open_scalar_attribute(loc, name, "an integer");
  Id type(H5Aget_type(attr));
  int64_t value = 0;
  if (H5Tget_class(type) != H5T_INTEGER || H5Aread(attr, H5T_NATIVE_INT64, &value) < 0)
    throw ModelError(where(loc) + " attribute '" + name + "': expected an integer");
  return value;
}

double read_double_attribute(hid_t loc, const char* name) {
  Id attr = open_scalar_attribute(loc, name, "a number");
  Id type(H5Aget_type(attr));
  double value = 0;
  const auto cls = H5Tget_class(type);
  if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || H5Aread(attr, H5T_NATIVE_DOUBLE, &value) < 0)
    throw ModelError(where(loc) + " attribute '" + name + "': expected a number");
  return value;
}

const SplineConfig& spline_config_of(const ModelConfig& cfg, const ParamInfo& p) {
  return p.spline == SplineSite::Mlp ? cfg.mlp_spline : cfg.attn_spline;
}

// A spline dataset's attributes (model.md): range (R), keypoints (K), extrapolate.
void write_spline_attributes(hid_t dataset, const SplineConfig& sc) {
  write_double_attribute(dataset, "range", sc.range);
  write_int_attribute(dataset, "keypoints", sc.keypoints);
  write_string_attribute(dataset, "extrapolate", to_string(sc.extrapolate));
}

// ModelError naming the dataset and attribute when they disagree with the config.
void check_spline_attributes(hid_t dataset, const SplineConfig& sc) {
  const std::string what = where(dataset);
  const double range = read_double_attribute(dataset, "range");
  if (range != sc.range)
    throw ModelError(what + " attribute 'range': " + std::to_string(range) + " but the config says range " +
                     std::to_string(sc.range));
  const int64_t k = read_int_attribute(dataset, "keypoints");
  if (k != sc.keypoints)
    throw ModelError(what + " attribute 'keypoints': " + std::to_string(k) + " but the config says keypoints " +
                     std::to_string(sc.keypoints));
  const std::string e = read_string_attribute(dataset, "extrapolate");
  if (e != to_string(sc.extrapolate))
    throw ModelError(what + " attribute 'extrapolate': '" + e + "' but the config says extrapolate " +
                     to_string(sc.extrapolate));
}

std::string join_names(const std::vector<std::string>& names, size_t most = 5) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < most; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > most) s += ", … (" + std::to_string(names.size()) + " in all)";
  return s;
}


}  // namespace

// ---- checkpoints ----

void write_checkpoint(hid_t group, const Model& model) {
  silence_hdf5_errors();
  write_string_attribute(group, "config", model.config().to_yaml());
  write_int_attribute(group, "vocab", model.config().vocab);
  Id params = h5::create_group(group, "params");
  for (const ParamInfo& p : model.layout().tensors()) {
    h5::write_dataset(params, p.name, model.params() + p.offset, p.shape);
    if (p.spline == SplineSite::None) continue;
    Id ds(H5Dopen2(params, p.name.c_str(), H5P_DEFAULT));
    write_spline_attributes(ds, spline_config_of(model.config(), p));
  }
}

void save_checkpoint(const Model& model, const std::string& path) {
  h5::write_file_atomically(path, [&](hid_t file) {
    Id group = h5::create_group(file, "model");
    write_checkpoint(group, model);
  });
}

ModelConfig read_checkpoint_config(hid_t group) {
  silence_hdf5_errors();
  const std::string yaml = read_string_attribute(group, "config");
  const int64_t vocab = read_int_attribute(group, "vocab");
  try {
    ModelConfig cfg = ModelConfig::from_yaml(yaml);
    if (cfg.vocab == 0) cfg.vocab = static_cast<int>(vocab);
    if (cfg.vocab != vocab)
      throw ModelError("the attribute vocab is " + std::to_string(vocab) + " but the config says vocab " +
                       std::to_string(cfg.vocab));
    cfg.validate();
    return cfg;
  } catch (const ModelError& e) {
    throw ModelError(where(group) + " attribute 'config': " + e.what());
  }
}

Model read_checkpoint(hid_t group) {
  Model model(read_checkpoint_config(group));
  const ParamLayout& layout = model.layout();
  Id params = h5::open_group(group, "params");

  // Names first, so that a renamed dataset is reported as such rather than as "missing".
  const std::vector<std::string> present = h5::link_names(params);
  const std::set<std::string> present_set(present.begin(), present.end());
  std::vector<std::string> unexpected, missing;
  for (const auto& n : present)
    if (!layout.find(n)) unexpected.push_back(n);
  for (const auto& p : layout.tensors())
    if (!present_set.count(p.name)) missing.push_back(p.name);
  if (!unexpected.empty() || !missing.empty()) {
    std::string msg = where(params) + ": the parameters do not match the config";
    if (!unexpected.empty()) msg += "; unexpected dataset(s): " + join_names(unexpected);
    if (!missing.empty()) msg += "; missing dataset(s): " + join_names(missing);
    throw ModelError(msg);
  }

  for (const ParamInfo& p : layout.tensors()) {
    const std::string what = where(params, p.name);
    Id ds(H5Dopen2(params, p.name.c_str(), H5P_DEFAULT));
    if (!ds.valid()) throw ModelError(what + ": is not a dataset");
    Id type(H5Dget_type(ds));
    if (H5Tget_class(type) != H5T_FLOAT || H5Tget_size(type) != 4)
      throw ModelError(what + ": is not float32 (parameters are stored as float32)");
    const auto shape = h5::shape_of(ds);
    if (shape != p.shape)
      throw ModelError(what + ": shape " + shape_text(shape) + " does not match the config, which needs " +
                       shape_text(p.shape));
    if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, model.params() + p.offset) < 0)
      throw ModelError(what + ": cannot be read (damaged file?)");
    if (p.spline != SplineSite::None) check_spline_attributes(ds, spline_config_of(model.config(), p));
  }
  return model;
}

Model load_checkpoint(const std::string& path) {
  Id file = h5::open_file(path, "checkpoint");
  if (!h5::has_link(file, "model"))
    throw ModelError("checkpoint " + path + ": no group /model (not an srbench checkpoint)");
  Id group = h5::open_group(file, "model");
  return read_checkpoint(group);
}

// ---- batch files ----

namespace {

// An integer dataset of rank 2, read as int64; its shape in `shape`.
std::vector<int64_t> read_int_matrix(hid_t file, const std::string& path, const char* name,
                                     std::vector<int64_t>& shape) {
  if (!h5::has_link(file, name))
    throw ModelError("batch " + path + ": no dataset '" + name + "' (expected int32 [B,T])");
  Id ds(H5Dopen2(file, name, H5P_DEFAULT));
  if (!ds.valid()) throw ModelError("batch " + path + ": '" + name + "' is not a dataset");
  Id type(H5Dget_type(ds));
  if (H5Tget_class(type) != H5T_INTEGER)
    throw ModelError("batch " + path + ": dataset '" + name + "' is not of an integer type (expected int32 [B,T])");
  shape = h5::shape_of(ds);
  if (shape.size() != 2)
    throw ModelError("batch " + path + ": dataset '" + name + "' has shape " + shape_text(shape) +
                     ", expected 2 dimensions [B,T]");
  std::vector<int64_t> values(static_cast<size_t>(shape[0] * shape[1]));
  if (!values.empty() && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    throw ModelError("batch " + path + ": dataset '" + name + "' cannot be read");
  return values;
}

}  // namespace

TokenBatch read_token_batch(const std::string& path, const ModelConfig& cfg) {
  Id file = h5::open_file(path, "batch");
  std::vector<int64_t> token_shape, target_shape;
  const auto tokens = read_int_matrix(file, path, "tokens", token_shape);
  const auto targets = read_int_matrix(file, path, "targets", target_shape);
  if (token_shape != target_shape)
    throw ModelError("batch " + path + ": tokens " + shape_text(token_shape) + " and targets " +
                     shape_text(target_shape) + " differ in shape");
  const int64_t B = token_shape[0], T = token_shape[1];
  if (B < 1 || T < 1) throw ModelError("batch " + path + ": empty batch " + shape_text(token_shape));
  if (T > cfg.max_len)
    throw ModelError("batch " + path + ": T = " + std::to_string(T) + " positions exceed the model's max_len " +
                     std::to_string(cfg.max_len));
  auto at = [&](const char* name, int64_t i) {
    return std::string(name) + "[" + std::to_string(i / T) + "][" + std::to_string(i % T) + "]";
  };
  TokenBatch batch;
  batch.B = static_cast<int>(B);
  batch.T = static_cast<int>(T);
  batch.tokens.resize(tokens.size());
  batch.targets.resize(targets.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= cfg.vocab)
      throw ModelError("batch " + path + ": " + at("tokens", static_cast<int64_t>(i)) + " = " +
                       std::to_string(tokens[i]) + " is outside the vocabulary [0, " + std::to_string(cfg.vocab) + ")");
    if (targets[i] != kNotScored && (targets[i] < 0 || targets[i] >= cfg.vocab))
      throw ModelError("batch " + path + ": " + at("targets", static_cast<int64_t>(i)) + " = " +
                       std::to_string(targets[i]) + " is neither -1 (not scored) nor in the vocabulary [0, " +
                       std::to_string(cfg.vocab) + ")");
    batch.tokens[i] = static_cast<int32_t>(tokens[i]);
    batch.targets[i] = static_cast<int32_t>(targets[i]);
  }
  return batch;
}

}  // namespace srbench::model
