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
  std::filesystem::path srbench;         // the srbench binary
  std::filesystem::path workdir;         // where `srbench slurm` was run; the jobs cd there
  std::filesystem::path out;             // the suite file the merge job writes
  std::filesystem::path suite_dir;       // <dir>/<suite>: runs/, logs/, slurm/
  std::filesystem::path snapshot;        // suite_dir/slurm/suite-<hash>.yaml
  std::vector<std::string> sbatch_args;  // --sbatch-arg, in order
  std::string command_line;              // how to write the scripts again
};

std::string sweep_array_script(const SlurmPlan& p);
std::string searches_array_script(const SlurmPlan& p);
std::string merge_job_script(const SlurmPlan& p);

// 'text' quoted for a POSIX shell.
std::string shell_quote(const std::string& s);

}  // namespace srbench::harness
