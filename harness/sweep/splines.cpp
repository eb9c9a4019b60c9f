#include "harness/sweep/splines.hpp"

#include <map>

#include "harness/core/splines.hpp"
#include "harness/results/results.hpp"
#include "harness/suite/suite.hpp"

namespace srbench::harness {

void resolve_splines_files(Suite& suite) {
  std::map<std::string, SplinesFile> files;  // each file read once
  for (auto& r : suite.runs) {
    if (!r.needs_splines_file()) continue;
    auto it = files.find(r.splines_from);
    if (it == files.end()) {
      try {
        it = files.emplace(r.splines_from, read_splines_file(r.splines_from)).first;
      } catch (const ResultsError& e) {
        r.splines_from_loc.fail(e.what());
      }
    }
    const SplinesFile& f = it->second;
    const std::string why = splines_mismatch(f.splines, r.model);
    if (!why.empty()) r.splines_from_loc.fail("splines file " + r.splines_from + " does not fit this model: " + why);
    r.splines = f.splines;
    r.splines_task = f.task;
    complete_run(r, suite, splines_hash(f.splines));
  }
}

void take_search_splines(RunSpec& run, const std::string& splines_file) {
  const SplinesFile f = read_splines_file(splines_file);
  run.splines = f.splines;
  run.splines_task = f.task;
}

}  // namespace srbench::harness
