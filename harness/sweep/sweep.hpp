// Running a suite: every run of the suite (or of one shard of it) as its own child process, a
// few at a time; each finished run written atomically to <dir>/<suite>/runs/<run_id>.h5; the
// suite file assembled from them at the end.
//
// A run is a child process so that nothing a run does — an exception, a crash, running out of
// memory — can take the sweep down: a child that dies without writing its file is recorded as
// `failed` with the reason. What else a cluster does to a sweep (docs/harness.md, "What survives
// what"):
//   - a stop signal (SIGTERM, SIGINT, SIGHUP) to the sweep or to any run process, in any order,
//     stops the sweep: its runs in progress are left unfinished (no run file, no temporary
//     file), nothing is recorded as failed, and the outcome says which signal (children.hpp);
//   - SIGKILL loses only the runs in progress: re-running the same command skips every run whose
//     file opens cleanly and redoes the rest;
//   - a result that cannot be written (a full disk) stops the sweep with the file and the
//     operating system's reason; finished runs stay as they were;
//   - sweeps sharing a results folder train every run once between them (claims.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/specs.hpp"

namespace srbench::harness {

struct SweepOptions {
  int jobs = 1;          // runs at once
  int threads = 1;       // OpenMP threads per run
  int shard_index = 0;   // run the runs whose index % shard_count == shard_index
  int shard_count = 1;
  bool sharded = false;  // a shard was asked for (--shard, Slurm), even 0/1: leave runs claimed elsewhere to their claimer
  std::string out;       // the suite file; its folder holds <suite>/runs/
  bool dry_run = false;
  bool quiet = false;    // no per-run lines (tests)
  bool searches_only = false;  // run only the searches whose index % shard_count == shard_index
  uint64_t memory = 0;   // bytes the runs may share (0: the machine's, harness/run/resources.hpp)
  double claim_timeout = 300;  // seconds without a heartbeat after which another host's claim is taken over
};

// What a sweep did.
struct SweepOutcome {
  int signal = 0;         // the stop signal that interrupted it (then nothing more was done), or 0
  size_t failed = 0;      // runs of this call's share (shard) recorded `failed`, now or before
  size_t diverged = 0;    // ... and `diverged`
  size_t elsewhere = 0;   // runs left to other sweeps that claim them (a shard does not wait for them)
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
// Runs claimed by another live sweep are not run here: an unsharded sweep waits for them (and
// takes over a claim whose sweep dies), a shard (sharded or shard_count > 1) leaves them to their
// claimer.
// First, before anything runs: refuses (ConfigError) a suite in which a run of this call's share
// needs more memory (estimate_memory) than `memory` divided by the runs at once, naming the entry,
// the model and the estimate; the dry run prints every run's estimate.
// Writes the suite file `out` unless sharded (then `srbench merge` assembles the shards) or
// interrupted. Throws (after stopping its children) when a result cannot be written.
SweepOutcome run_sweep(const Suite& suite, const SweepOptions& opts);

}  // namespace srbench::harness
