// What the results files share (internal to harness/results/): the root attributes, opening a
// results file, and the groups both run files and splines files hold — training curves and
// spline tensors.
#pragma once

#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/results/results.hpp"
#include "common/h5.hpp"

namespace srbench::harness::results {


// Root attributes format_version, srbench_version, srbench_commit, suite, created.
void write_root_attributes(hid_t file, const std::string& suite_yaml);
// Opens a results file read-only; `what` ("run file", "suite file", …) names it in messages.
h5::Id open_results_file(const std::string& path, const char* what);
// ResultsError unless the root's format_version is the one this srbench reads.
void check_format_version(hid_t file);

// curve/{step,train_loss,val_acc,lr,grad_norm} in group g, and curve/val_token_acc where some point has it.
void write_curve(hid_t g, const std::vector<CurvePoint>& points);
std::vector<CurvePoint> read_curve(hid_t g);

// One float32 dataset per spline in g, attrs range, keypoints, extrapolate.
void write_splines(hid_t g, const std::vector<SplineTensor>& splines);
// Every dataset directly in g (other members, such as a search's `models`, are skipped).
std::vector<SplineTensor> read_splines(hid_t g);

// A search's group (a splines file's /splines, a suite file's /splines/<name>); `what` names it.
SplinesFile read_search_group(hid_t g, const std::string& what);

}  // namespace srbench::harness::results
