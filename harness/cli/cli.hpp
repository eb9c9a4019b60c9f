// The `srbench` command line: one binary, one function per subcommand.
//
// Exit codes (README, docs/harness.md): 0 ok, 1 runtime failure, 2 bad usage or config; `sweep`
// also 3 (it finished, but some runs are recorded failed) and 128 + N (interrupted by signal N:
// 129 SIGHUP, 130 SIGINT, 143 SIGTERM). A subcommand reports bad usage by throwing UsageError (or
// a TaskError for bad task input, a ModelError for a bad model config, checkpoint or batch);
// main() turns it into a one-line message on stderr and exit code 2.
#pragma once

#include <boost/program_options.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace srbench::harness {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // a runtime failure (an I/O error, a damaged file, …)
inline constexpr int kExitUsage = 2;       // bad usage or config
inline constexpr int kExitRunsFailed = 3;  // sweep: every run ended, some are recorded `failed`
inline int exit_code_of_signal(int sig) { return 128 + sig; }  // sweep: interrupted, as shells report it

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Args = std::vector<std::string>;  // the arguments after the subcommand's name

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

// Every subcommand, in the order `srbench --help` lists them.
const std::vector<Command>& commands();

int cmd_tasks(const Args& args);
int cmd_sample(const Args& args);
int cmd_init_checkpoint(const Args& args);  // cmd_model.cpp
int cmd_forward(const Args& args);          // cmd_model.cpp
int cmd_sweep(const Args& args);            // cmd_sweep.cpp
int cmd_eval(const Args& args);             // cmd_sweep.cpp
int cmd_merge(const Args& args);            // cmd_results.cpp
int cmd_slurm(const Args& args);            // cmd_slurm.cpp
int cmd_report(const Args& args);           // cmd_results.cpp

// Parses a subcommand's arguments into `vm` (with `positional`, if given, taking one bare
// argument). Returns false after printing the options when --help was asked for: the caller
// then returns 0. Otherwise the values are stored and notified.
bool parse_command_line(const Args& args, const boost::program_options::options_description& opts,
                        boost::program_options::variables_map& vm, const char* positional = nullptr);

// Splits "key=value" into its parts; UsageError naming `option` when there is no '='.
std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option);

// The suite file of `sweep` and `slurm`: `out`, or results/<suite>.h5 when it is empty.
// UsageError when `out` names an existing folder (refused before any run starts; the run files
// would otherwise go to <parent>/<suite>/runs and the sweep fail only at its end, renaming the
// suite file onto the folder).
std::string suite_file_out(const std::string& out, const std::string& suite_name);

}  // namespace srbench::harness
