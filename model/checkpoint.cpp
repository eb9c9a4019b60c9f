#include "model/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace srbench::model {

namespace {

using h5::Id;
using h5::shape_text;
using h5::where;

// Runs `read`, turning the HDF5 layer's errors into ModelErrors: a checkpoint or batch that does
// not read is a bad input.
template <typename F>
auto reading(F&& read) {
  try {
    return read();
  } catch (const h5::Error& e) {
    throw ModelError(e.what());
  }
}

const SplineConfig& spline_config_of(const ModelConfig& cfg, const ParamInfo& p) {
  return p.spline == SplineSite::Mlp ? cfg.mlp_spline : cfg.attn_spline;
}

// A spline dataset's attributes (model.md): range (R), keypoints (K), extrapolate.
void write_spline_attributes(hid_t dataset, const SplineConfig& sc) {
  h5::write_attr(dataset, "range", sc.range);
  h5::write_attr(dataset, "keypoints", int64_t{sc.keypoints});
  h5::write_attr(dataset, "extrapolate", to_string(sc.extrapolate));
}

// ModelError naming the dataset and attribute when they disagree with the config.
void check_spline_attributes(hid_t dataset, const SplineConfig& sc) {
  const std::string what = where(dataset);
  const double range = h5::read_double_attr(dataset, "range");
  if (range != sc.range)
    throw ModelError(what + " attribute 'range': " + std::to_string(range) + " but the config says range " +
                     std::to_string(sc.range));
  const int64_t k = h5::read_int_attr(dataset, "keypoints");
  if (k != sc.keypoints)
    throw ModelError(what + " attribute 'keypoints': " + std::to_string(k) + " but the config says keypoints " +
                     std::to_string(sc.keypoints));
  const std::string e = h5::read_string_attr(dataset, "extrapolate");
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
  h5::write_attr(group, "config", model.config().to_yaml());
  h5::write_attr(group, "vocab", int64_t{model.config().vocab});
  Id params = h5::create_group(group, "params");
  for (const ParamInfo& p : model.layout().tensors()) {
    h5::write_array(params, p.name, model.params() + p.offset, p.shape);
    if (p.spline != SplineSite::None)
      write_spline_attributes(h5::open_dataset(params, p.name), spline_config_of(model.config(), p));
  }
}

void save_checkpoint(const Model& model, const std::string& path) {
  h5::write_file_atomically(path, [&](hid_t file) { write_checkpoint(h5::create_group(file, "model"), model); });
}

ModelConfig read_checkpoint_config(hid_t group) {
  const std::string yaml = reading([&] { return h5::read_string_attr(group, "config"); });
  const int64_t vocab = reading([&] { return h5::read_int_attr(group, "vocab"); });
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
  return reading([&] {
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
      const h5::DatasetInfo info = h5::dataset_info(params, p.name);
      if (info.cls != h5::DatasetInfo::Float || info.bytes != 4)
        throw ModelError(what + ": is not float32 (parameters are stored as float32)");
      if (info.shape != p.shape)
        throw ModelError(what + ": shape " + shape_text(info.shape) + " does not match the config, which needs " +
                         shape_text(p.shape));
      h5::read_array_into(params, p.name, model.params() + p.offset, p.size);
      if (p.spline != SplineSite::None)
        check_spline_attributes(h5::open_dataset(params, p.name), spline_config_of(model.config(), p));
    }
    return std::move(model);
  });
}

Model load_checkpoint(const std::string& path) {
  return reading([&] {
    Id file = h5::open_file(path, "checkpoint");
    if (!h5::has_link(file, "model"))
      throw ModelError("checkpoint " + path + ": no group /model (not an srbench checkpoint)");
    return read_checkpoint(h5::open_group(file, "model"));
  });
}

// ---- batch files ----

namespace {

// An integer dataset of rank 2, read as int64; its shape in `shape`.
std::vector<int64_t> read_int_matrix(hid_t file, const std::string& path, const char* name,
                                     std::vector<int64_t>& shape) {
  if (!h5::has_link(file, name))
    throw ModelError("batch " + path + ": no dataset '" + name + "' (expected int32 [B,T])");
  if (!h5::is_dataset(file, name)) throw ModelError("batch " + path + ": '" + name + "' is not a dataset");
  const h5::DatasetInfo info = h5::dataset_info(file, name);
  if (info.cls != h5::DatasetInfo::Integer)
    throw ModelError("batch " + path + ": dataset '" + name + "' is not of an integer type (expected int32 [B,T])");
  shape = info.shape;
  if (shape.size() != 2)
    throw ModelError("batch " + path + ": dataset '" + name + "' has shape " + shape_text(shape) +
                     ", expected 2 dimensions [B,T]");
  try {
    return h5::read_array<int64_t>(file, name, 2);
  } catch (const h5::Error&) {
    throw ModelError("batch " + path + ": dataset '" + name + "' cannot be read");
  }
}

}  // namespace

TokenBatch read_token_batch(const std::string& path, const ModelConfig& cfg) {
  Id file = reading([&] { return h5::open_file(path, "batch"); });
  std::vector<int64_t> token_shape, target_shape;
  const auto tokens = reading([&] { return read_int_matrix(file, path, "tokens", token_shape); });
  const auto targets = reading([&] { return read_int_matrix(file, path, "targets", target_shape); });
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
  // optional per-row lengths, [B] each, in [1, T]
  for (const auto& [name, out] : {std::pair{"lengths", &batch.lengths}, std::pair{"input_lengths", &batch.input_lengths}}) {
    if (!h5::has_link(file, name)) continue;
    const h5::DatasetInfo info = reading([&] { return h5::dataset_info(file, name); });
    if (info.cls != h5::DatasetInfo::Integer || info.shape != h5::Shape{B})
      throw ModelError("batch " + path + ": dataset '" + name + "' must be integer [" + std::to_string(B) + "], got " +
                       (info.cls == h5::DatasetInfo::Integer ? "shape " + shape_text(info.shape) : "another type"));
    const auto values = reading([&, n = name] { return h5::read_array<int64_t>(file, n, 1); });
    for (int64_t b = 0; b < B; ++b) {
      if (values[b] < 1 || values[b] > T)
        throw ModelError("batch " + path + ": " + name + "[" + std::to_string(b) + "] = " + std::to_string(values[b]) +
                         " is outside [1, " + std::to_string(T) + "]");
      out->push_back(static_cast<int32_t>(values[b]));
    }
  }
  return batch;
}

}  // namespace srbench::model
