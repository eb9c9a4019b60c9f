// Starting another program from srbench (the Python models of a suite, docs/python.md): run it
// to its end with text on its standard input and its output captured, or start it as a child
// that dies with its parent. Knows nothing of what the program is.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace srbench {

struct ProcessResult {
  int status = 0;            // as from waitpid
  std::string out, err;      // what it wrote to stdout and stderr
  bool exited_ok() const;    // exited with code 0
  std::string describe() const;  // "exited with code 1", "killed by signal 9 (SIGKILL)"
};

// Environment changes for a child: each (NAME, VALUE) set; VALUE empty: NAME removed.
using EnvChanges = std::vector<std::pair<std::string, std::string>>;

// Runs argv[0] (looked up on PATH when it has no '/') with `input` on its stdin and waits for
// it. Throws std::runtime_error when it cannot be started ("cannot run /usr/bin/python3: No
// such file or directory").
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input = "",
                          const EnvChanges& env = {});

// Starts argv[0] as a child whose stdin is `input` (written through a pipe, then closed) and
// whose stdout and stderr are this process's; the child is killed (SIGKILL) if this process
// dies. Returns its pid; throws std::runtime_error when it cannot be started. Wait for it with
// waitpid.
pid_t start_process(const std::vector<std::string>& argv, const std::string& input = "", const EnvChanges& env = {});

// The absolute path of the running executable (/proc/self/exe), or "" where it cannot be read.
std::string executable_path();

// The fields of /proc/PID/stat from the third on — field n of proc(5) (3 state, 4 ppid, 14 utime,
// 22 starttime, ...) at [n − 3] — read past the command name, which may hold spaces and
// parentheses; empty when the process is gone or its file does not read.
std::vector<std::string> proc_stat_fields(pid_t pid);

}  // namespace srbench
