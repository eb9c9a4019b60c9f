// Running a suite: every run of the suite (or of one shard of it) as its own child process, a
// few at a time; each finished run written atomically to <dir>/<suite>/runs/<run_id>.h5; the
// suite file assembled from them at the end.
//
// A run is a child process so that nothing a run does — an exception, a crash, running out of
// memory — can take the sweep down: a child that dies without writing its file is recorded as
// `failed` with the reason. A killed sweep loses only the runs in progress: re-running the same
// command skips every run whose file opens cleanly and redoes the rest.
#pragma once

#include <string>
#include <vector>

#include "harness/core/specs.hpp"

namespace srbench::harness {

struct SweepOptions {
  int jobs = 1;          // runs at once
  int threads = 1;       // OpenMP threads per run
  int shard_index = 0;   // run the runs whose index % shard_count == shard_index
  int shard_count = 1;
  std::string out;       // the suite file; its folder holds <suite>/runs/
  bool dry_run = false;
  bool quiet = false;    // no per-run lines (tests)
  bool searches_only = false;  // run only the searches whose index % shard_count == shard_index
};

// Where the run files of a suite go: <folder of out>/<suite name>/runs.
std::string runs_dir_for(const std::string& out, const std::string& suite_name);

// Where a search's splines file goes: <folder of out>/<suite name>/splines/<search>.h5.
std::string splines_file_for(const std::string& out, const std::string& suite_name, const std::string& search);

// Runs the suite: first the searches it needs (spline-search.md; a finished search — its
// splines file opens and holds this search's config — is not redone), then its runs, a stage-2
// run reading its search's splines file. Unsharded: every search; with a shard: the searches
// that its unfinished runs need (deterministic and written atomically, so two shards doing the
// same search is harmless); searches_only: only searches, sharded by their index.
// Runs the suite; returns the number of runs that ended `failed` or `diverged` in this call.
// Writes the suite file `out` unless sharded (then `srbench merge` assembles the shards).
int run_sweep(const Suite& suite, const SweepOptions& opts);

}  // namespace srbench::harness
