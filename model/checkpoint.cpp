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

// A checkpoint that does not read is a bad input: the HDF5 layer's errors become ModelErrors.
template <typename F>
auto reading(F&& read) {
  return h5::errors_as<ModelError>(read);
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

}  // namespace srbench::model
