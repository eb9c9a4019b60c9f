// The phases of run_sweep (sweep.hpp) and what they share — internal to harness/sweep/:
//   - the plan (plan.cpp): this call's share of the suite, what is finished and what is to do,
//     after refusing a share that cannot fit in memory; the dry run prints it (dry_run.cpp);
//   - the searches (searches.cpp): each unfinished search in its own process;
//   - the runs (runs.cpp, RunPhase): each unfinished run in its own process;
//   - the finish (sweep.cpp): the suite file, or the shard's closing line.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "harness/core/records.hpp"
#include "harness/core/specs.hpp"
#include "harness/results/assemble.hpp"
#include "harness/run/resources.hpp"
#include "harness/sweep/children.hpp"
#include "harness/sweep/claims.hpp"
#include "harness/sweep/sweep.hpp"

namespace srbench::harness::sweep {

using Clock = std::chrono::steady_clock;

// ---- plan: this call's share of the suite, what is finished and what is to do ---------------

struct Plan {
  std::string runs_dir, splines_dir;
  std::vector<const RunSpec*> mine;              // this call's share (shard) of the runs
  std::vector<MemoryEstimate> estimates;         // of mine (not with searches_only)
  std::vector<const RunSpec*> todo;              // the unfinished runs of mine
  std::map<std::string, std::string> status;     // of every finished run of mine, by id
  size_t already = 0;                            // runs of mine finished before this call
  std::vector<const SearchSpec*> searches_todo;  // the unfinished searches this call needs
  size_t searches_done = 0;                      // ... and the finished ones
};

// The plan, after refusing a share whose runs or searches cannot fit in memory.
Plan plan_sweep(const Suite& suite, const SweepOptions& opts);

// The dry run: the plan printed.
void print_dry_run(const Suite& suite, const SweepOptions& opts, const Plan& plan);

// ---- searches: each unfinished search in its own process ------------------------------------

Stop run_searches(const Suite& suite, const SweepOptions& opts, const Plan& plan, StopSignals& signals);

// ---- runs: each unfinished run in its own process -------------------------------------------

// The runs phase: its claims, its count of finished runs and its progress lines.
class RunPhase {
 public:
  RunPhase(const Suite& suite, const SweepOptions& opts, Plan& plan)
      : suite_(suite), opts_(opts), plan_(plan), total_(plan.mine.size()), done_(plan.already),
        leave_claimed_(opts.shard_count > 1 || opts.sharded),
        claims_(plan.runs_dir, opts.claim_timeout) {}

  Stop run(StopSignals& signals);
  size_t done() const { return done_; }
  size_t left() const { return total_ - done_; }
  size_t elsewhere() const { return elsewhere_.size(); }
  RunFileCache& run_files() { return read_; }  // the run files read as their runs ended

 private:
  std::string path(const RunSpec& spec) const;
  Start start(const RunSpec& spec);
  // In a worker process: the run, its file written.
  void child(RunSpec spec);
  Stop done(const RunSpec& spec, pid_t pid, int wait_status, double run_s, bool stopping);
  // A run finished by another sweep while this one waited or worked.
  void finished_elsewhere(const RunSpec& spec, const std::string& s);
  void progress() const;

  const Suite& suite_;
  const SweepOptions& opts_;
  Plan& plan_;
  RunFileCache read_;
  const size_t total_;
  size_t done_, finished_here_ = 0, elsewhere_done_ = 0;
  std::map<std::string, Claim> elsewhere_;  // runs claimed by other live sweeps, by id
  const bool leave_claimed_;
  Claims claims_;
  Clock::time_point start_;
};

// ---- shared by the phases (sweep.cpp) --------------------------------------------------------

// A search is finished when its splines file opens and was written by this very search (its
// resolved config); a file left by an earlier version of the search is redone.
bool search_finished(const std::string& path, const SearchSpec& search);

// The end of a child that could not write its result: the message (naming the file and the
// reason) is on stderr; the sweep stops and records nothing.
[[noreturn]] void cannot_write(const std::string& what, const std::string& id, const std::exception& e);

std::string run_file(const std::string& runs_dir, const RunSpec& r);

// The status of a finished run ("ok", "diverged", "failed"), or "" when its file is missing or
// does not open cleanly (then it is redone).
std::string finished_status(const std::string& path);

// Removes the temporary files h5::write_file_atomically leaves of `file` (in `dir`) when killed:
// those of process `pid`, or (pid 0) of any process.
void remove_temporaries(const std::string& dir, const std::string& file, pid_t pid = 0);

std::string fmt_acc(double v);
std::string fmt_duration(double s);

// What to do with a child that ended without a readable result: nothing (it was interrupted or
// could not write), or record it as failed (its message).
struct ChildEnd {
  bool interrupted = false;  // by a stop signal, or by the sweep stopping
  Stop stop;                 // what it means for the sweep
  std::string failure;       // non-empty: record the item as failed with this message
};
ChildEnd judge_child(const std::string& what, const std::string& id, int status, bool stopping);

}  // namespace srbench::harness::sweep
