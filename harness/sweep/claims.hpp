// Claims: which sweep is training which run, so that sweeps sharing a results folder (a re-run
// while the first is still going, two job arrays submitted by mistake, two users) train every
// run once between them.
//
// Before a sweep starts a run it creates `<runs>/<run_id>.claim` atomically (written under a
// temporary name, then hard-linked: link() fails when the claim exists, on NFS too). The file is
// a few lines of text:
//   srbench claim
//   host: node12              (gethostname)
//   pid: 4711                 the sweep's process
//   pid_start: 123456789      its start in clock ticks since boot (/proc/PID/stat), against pid reuse
//   started: 1796128274       when the claim was made (Unix seconds)
//   heartbeat: 1796128300     refreshed by the sweep every 15 s while the run trains
//   run_pid: 4712             the run's own process, once started
//   slurm_job: 123            SLURM_JOB_ID and SLURM_RESTART_COUNT, when under Slurm
//   slurm_restart: 0
// and it is removed when the run has ended (written, recorded as failed, or left unfinished by a
// signal). Another sweep that finds a claim
//   - skips the run while the claim's process lives;
//   - takes the claim over when its process is dead: same host and no such process (or another
//     process under that pid); same Slurm job at an earlier restart (a requeued task's own
//     claims); or, from another host, when its heartbeat is older than the claim timeout
//     (default 300 s; this needs the hosts' clocks to agree to well within it).
// Taking over renames the old claim away and checks that it was the one judged dead, so two
// sweeps taking over at once cannot both win. A sweep whose heartbeats stop for longer than the
// timeout (a stopped or frozen process) may lose its claim and train the run a second time: the
// run's results are the same and written atomically, so nothing is lost or mixed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace srbench::harness {

inline constexpr double kDefaultClaimTimeout = 300;  // seconds

struct Claim {
  std::string path;
  std::string host;
  pid_t pid = 0;
  int64_t pid_start = 0;
  int64_t started = 0, heartbeat = 0;  // Unix seconds
  pid_t run_pid = 0;
  std::string slurm_job;
  int64_t slurm_restart = 0;
};

// The claim file at `path`, or nothing when it is absent or unreadable (being written: a claim
// is written whole before it gets its name, so a reader sees it whole or not at all).
std::optional<Claim> read_claim(const std::string& path);

// Whether the claim's process is alive as far as this host can tell, with `why` ("pid 4711 on
// this host is gone", "no heartbeat for 412 s") when it is not.
bool claim_alive(const Claim& c, double timeout_s, std::string* why = nullptr);

// "host node12, pid 4711, for 3m12s (heartbeat 4 s ago)".
std::string describe_claim(const Claim& c);

// The claims this process holds in one folder.
class Claims {
 public:
  Claims(std::string dir, double timeout_s);
  ~Claims();  // releases every claim still held
  Claims(const Claims&) = delete;
  Claims& operator=(const Claims&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path_of(const std::string& name) const { return dir_ + "/" + name + ".claim"; }

  // Claims `name` (a run id): true when this process now holds it — freshly, or taken over from
  // a dead claimer (`taken_over` then describes it). False when a live process holds it
  // (`holder` gets its claim). Throws (naming the file and the OS error) when the claim cannot
  // be written.
  bool take(const std::string& name, Claim* holder = nullptr, std::string* taken_over = nullptr);
  // Records the run's own process in the claim.
  void set_run_pid(const std::string& name, pid_t run_pid);
  // Refreshes the heartbeat of every claim held whose last one is `interval_s` old or more.
  void heartbeat(double interval_s = 15);
  // Removes the claim (if it is still this process's).
  void release(const std::string& name);

 private:
  struct Held {
    int fd = -1;
    Claim claim;
  };
  void write_claim(Held& h);

  std::string dir_;
  double timeout_s_;
  std::map<std::string, Held> held_;
};

// Every claim file in `dir`, by name (the run id), sorted.
std::vector<std::pair<std::string, Claim>> claims_in(const std::string& dir);

}  // namespace srbench::harness
