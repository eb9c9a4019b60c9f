#include "harness/results/groups.hpp"

#include <cmath>

#include "harness/results/results.hpp"
#include "common/version.hpp"

namespace srbench::harness::results {

void write_root_attributes(hid_t file, const std::string& suite_yaml) {
  h5::write_attr(file, "format_version", kResultsFormatVersion);
  h5::write_attr(file, "srbench_version", std::string(srbench::version()));
  h5::write_attr(file, "srbench_commit", std::string(srbench::commit()));
  h5::write_attr(file, "suite", suite_yaml);
  h5::write_attr(file, "created", utc_timestamp_now());
}

h5::Id open_results_file(const std::string& path, const char* what) { return h5::open_file(path, what); }

void check_format_version(hid_t file) {
  const int64_t v = h5::read_int_attr(file, "format_version");
  if (v != kResultsFormatVersion)
    throw ResultsError(h5::where(file) + " attribute 'format_version': is " + std::to_string(v) +
                       "; this srbench reads format " + std::to_string(kResultsFormatVersion));
}

void write_curve(hid_t g, const std::vector<CurvePoint>& points) {
  h5::Id curve = h5::create_group(g, "curve");
  std::vector<int64_t> step;
  std::vector<double> train_loss, val_acc, lr, grad_norm;
  for (const auto& p : points) {
    step.push_back(p.step);
    train_loss.push_back(p.train_loss);
    val_acc.push_back(p.val_acc);
    lr.push_back(p.lr);
    grad_norm.push_back(p.grad_norm);
  }
  h5::write_array(curve, "step", step);
  h5::write_array(curve, "train_loss", train_loss);
  h5::write_array(curve, "val_acc", val_acc);
  h5::write_array(curve, "lr", lr);
  h5::write_array(curve, "grad_norm", grad_norm);
  // val_token_acc: only where measured (train.fit_metric: token_acc), so other runs' files are as before
  std::vector<double> val_token_acc;
  bool measured = false;
  for (const auto& p : points) {
    val_token_acc.push_back(p.val_token_acc);
    measured = measured || !std::isnan(p.val_token_acc);
  }
  if (measured) h5::write_array(curve, "val_token_acc", val_token_acc);
}

std::vector<CurvePoint> read_curve(hid_t g) {
  h5::Id curve = h5::open_group(g, "curve");
  const auto step = h5::read_array<int64_t>(curve, "step");
  const auto train_loss = h5::read_array<double>(curve, "train_loss");
  const auto val_acc = h5::read_array<double>(curve, "val_acc");
  const auto lr = h5::read_array<double>(curve, "lr");
  const auto grad_norm = h5::read_array<double>(curve, "grad_norm");
  const size_t n = step.size();
  if (train_loss.size() != n || val_acc.size() != n || lr.size() != n || grad_norm.size() != n)
    throw ResultsError(h5::where(curve) + ": step, train_loss, val_acc, lr and grad_norm differ in length");
  std::vector<CurvePoint> out;
  for (size_t i = 0; i < n; ++i) out.push_back({step[i], train_loss[i], val_acc[i], lr[i], grad_norm[i]});
  if (h5::has_link(curve, "val_token_acc")) {
    const auto val_token_acc = h5::read_array<double>(curve, "val_token_acc");
    if (val_token_acc.size() != n) throw ResultsError(h5::where(curve) + ": val_token_acc and step differ in length");
    for (size_t i = 0; i < n; ++i) out[i].val_token_acc = val_token_acc[i];
  }
  return out;
}

void write_splines(hid_t g, const std::vector<SplineTensor>& splines) {
  for (const auto& t : splines) {
    h5::write_array(g, t.name, t.values.data(), {static_cast<int64_t>(t.values.size())});
    h5::Id ds = h5::open_dataset(g, t.name);
    h5::write_attr(ds, "range", t.range);
    h5::write_attr(ds, "keypoints", t.keypoints);
    h5::write_attr(ds, "extrapolate", t.extrapolate);
  }
}

std::vector<SplineTensor> read_splines(hid_t g) {
  std::vector<SplineTensor> out;
  for (const auto& name : h5::link_names(g)) {
    if (!h5::is_dataset(g, name)) continue;
    SplineTensor t;
    t.name = name;
    const auto v = h5::read_array<double>(g, name);
    t.values.assign(v.begin(), v.end());
    h5::Id ds = h5::open_dataset(g, name);
    t.range = h5::read_double_attr(ds, "range");
    t.keypoints = h5::read_int_attr(ds, "keypoints");
    t.extrapolate = h5::read_string_attr(ds, "extrapolate");
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace srbench::harness::results
