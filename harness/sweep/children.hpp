// Child processes of a sweep: every run (and search) in a worker process, a few at a time, so
// that nothing a run does — an exception, a crash, running out of memory — can take the sweep
// down; and the signals that stop a sweep.
//
// A worker is forked once and takes runs one after another (the sweep sends it a run's index,
// it answers with the same index once that run's result is written), so that a sweep of many
// tiny runs does not pay a process's start and its first touch of memory per run. A worker that
// dies — a crash, the kernel's OOM killer, a result it could not write — takes only the run it
// was working on with it: that run is judged by the worker's wait status exactly as a process of
// its own would have been, and the next run goes to a new worker. A run's numbers do not depend
// on what its worker ran before (tests/golden checks it: its sweep runs 15 runs per worker).
//
// A sweep stops on SIGTERM (Slurm: preemption, time limit, scancel, requeue), SIGINT (Ctrl-C)
// and SIGHUP (a closed terminal), whichever process of the sweep receives it first: the sweep
// itself (it stops its children with SIGTERM) or one of its children (the child dies of it, and
// the sweep takes that as the signal to stop). Either way the runs in progress are left
// unfinished — never recorded as failed — and the sweep ends with exit code 128 + the signal.
// A signal the sweep was started with ignored (nohup: SIGHUP) stays ignored.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>

namespace srbench::harness {

// Exit codes of a worker process (beside 0: it ended when the sweep had no more work for it).
inline constexpr int kChildOrphaned = 3;     // the sweep was gone before the child started
inline constexpr int kChildCannotWrite = 4;  // its result could not be written (a full disk …)

// For its lifetime, holds SIGTERM, SIGINT, SIGHUP (those not ignored) and SIGCHLD pending
// instead of delivering them: the sweep takes them when it is ready (stop_requested(), and
// run_in_children's wait). A child process gets the mask back as it was (previous()).
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first stop signal received so far (taken from the pending set), or 0.
  int stop_requested() { return wait(0); }
  // Waits up to `ms` milliseconds for a stop signal or a child's end (SIGCHLD); returns the stop
  // signal received so far, or 0. It does not wait when stop_requested has taken a SIGCHLD since
  // the last wait (that child's end is there to look at).
  int wait(int ms);
  const sigset_t& previous() const { return previous_; }  // the mask before

 private:
  sigset_t watched_, previous_;
  int received_ = 0;
  bool child_taken_ = false;  // a SIGCHLD taken by stop_requested, not yet passed on by wait
};

bool is_stop_signal(int sig);  // SIGTERM, SIGINT or SIGHUP

// Why run_in_children stopped early: a stop signal (to the sweep, or one that killed a child), or
// an error (a result that could not be written). Neither: every item ran.
struct Stop {
  int signal = 0;
  std::string error;
  explicit operator bool() const { return signal != 0 || !error.empty(); }
};

// How one item is to be started, asked before starting it.
enum class Start {
  Now,    // start it now (the caller has claimed it)
  Later,  // not now (claimed by another sweep): ask again in a while
  Never,  // do not run it (finished meanwhile, or left to its claimer)
};

struct ChildTasks {
  // In the parent, before item i starts (and again every couple of seconds while it says Later).
  std::function<Start(size_t i)> start;
  // In a worker: runs item i and returns once its result is written (or _exits: the worker
  // dies, and item i is judged by its exit status).
  std::function<void(size_t i)> child;
  // In the parent, once item i has gone to the worker process `pid`.
  std::function<void(size_t i, pid_t pid)> started;
  // In the parent, when item i has ended in worker `pid` (`status`: as from waitpid — exited 0
  // when the worker finished it and lives on, else the worker's own wait status; `secs` it took;
  // `stopping`: the sweep is stopping and may have killed it). A Stop it returns (a signal that
  // killed the worker, an error) stops the sweep.
  std::function<Stop(size_t i, pid_t pid, int status, double secs, bool stopping)> done;
  // In the parent, about once a second (claims' heartbeats).
  std::function<void()> tick;
  // In the parent, once, when every item not yet finished waits for another sweep (Later).
  std::function<void()> waiting;
};

// Runs items 0..n-1 in at most `jobs` worker processes, `jobs` at a time, in order (an item that
// says Later is passed over and asked again). Returns when every item has run or been given up
// (Never), or — after stopping every worker with SIGTERM (SIGKILL 20 s later) and waiting for
// it — on a stop signal, a Stop returned by `done`, or an exception of a callback (as an error).
// Every worker has ended when it returns.
Stop run_in_children(size_t n, int jobs, StopSignals& signals, const ChildTasks& tasks);

// "SIGTERM" (or "signal 64" for one without a name).
std::string signal_name(int sig);

// "killed by signal 9 (SIGKILL)", "exited with code 1" of a wait status.
std::string exit_text(int status);

// Whether a wait status is a death by a stop signal (SIGTERM, SIGINT, SIGHUP).
bool killed_by_stop_signal(int status);

}  // namespace srbench::harness
