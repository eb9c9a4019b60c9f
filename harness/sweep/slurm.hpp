// The Slurm scripts of a suite (`srbench slurm`): a job array whose task I runs shard I of the
// suite, a merge job after it, and — for a suite with spline searches — a searches array before
// it. The command (cli/cmd_slurm.cpp) validates the options and submits; this writes the text.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace srbench::harness {

// Everything the scripts are made of, resolved to absolute paths.
struct SlurmPlan {
  std::string suite_name, suite_source;  // name, and the file it was read from (as given)
  size_t runs = 0;
  size_t searches = 0;                   // spline searches of the suite
  int search_tasks = 0;                  // tasks of the searches array (0: no such array)
  int tasks = 0;                         // array tasks
  int throttle = 0;                      // at most this many at once (0: no limit)
  int signal_grace = 120;                // seconds before the time limit at which Slurm warns a task (USR1)
  std::filesystem::path srbench;         // the srbench binary
  std::filesystem::path workdir;         // where `srbench slurm` was run; the jobs cd there
  std::filesystem::path out;             // the suite file the merge job writes
  std::filesystem::path suite_dir;       // <dir>/<suite>: runs/, logs/, slurm/
  std::filesystem::path snapshot;        // suite_dir/slurm/suite-<hash>.yaml
  std::vector<std::string> sbatch_args;  // --sbatch-arg, in order
  std::string command_line;              // how to write the scripts again
};

// The array scripts survive preemption and time limits: they ask for --requeue and for a USR1
// warning `signal_grace` seconds before the time limit (--signal=B:USR1@grace). The batch shell
// runs the sweep as its child and forwards SIGTERM, SIGINT and SIGHUP to it (Slurm sends
// SIGTERM to every process of the job on preemption, scancel and requeue: the sweep leaves its
// runs unfinished, never failed); on the warning it stops the sweep with SIGTERM and requeues
// its own task (scontrol requeue), which resumes the shard: finished runs are skipped, the
// claims of the task's earlier start (same job, earlier SLURM_RESTART_COUNT) are taken over.
std::string sweep_array_script(const SlurmPlan& p);
std::string searches_array_script(const SlurmPlan& p);
std::string merge_job_script(const SlurmPlan& p);

// 'text' quoted for a POSIX shell.
std::string shell_quote(const std::string& s);

}  // namespace srbench::harness
