// The transfer matrix of spline searches, computed from a suite's runs (the suite file stores
// it as /transfer; `srbench report --transfer` prints it).
#pragma once

#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/report/table.hpp"

namespace srbench::harness {

// The transfer matrix (spline-search.md, "Transfer"). A *variant* run took its splines from a
// search (splines_from set, and the task searched on known: RunResult::splines_task); its
// *baseline* is the plain model at the same task entry and grid point: the runs whose model has
// no splines at all and no splines_from — of the first such model entry (in run order) when
// several qualify. Rows: the tasks searched on; columns: the task entries trained on (both in
// order of first appearance). Over the variant runs with status ok of a cell:
//   id_acc_delta = mean of (run id_acc − mean id_acc of its baseline's ok seeds);
//   steps_ratio  = mean of (run steps_to_target / mean steps_to_target of its baseline's seeds
//                  that reached the target), over the variant runs that reached the target.
// NaN where undefined (no variant run, no baseline, nobody reached the target).
TransferMatrix compute_transfer(const std::vector<RunResult>& runs);

// Empty text for an empty matrix.
std::string format_transfer(const TransferMatrix& t, ReportFormat format);

}  // namespace srbench::harness
