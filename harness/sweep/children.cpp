#include "harness/sweep/children.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <stdexcept>

namespace srbench::harness {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

void run_in_children(size_t n, int jobs, const std::function<void(size_t)>& child,
                     const std::function<void(size_t, int, double)>& done) {
  std::map<pid_t, std::pair<size_t, Clock::time_point>> running;
  size_t next = 0;
  while (next < n || !running.empty()) {
    while (next < n && static_cast<int>(running.size()) < jobs) {
      std::cout.flush();
      std::fflush(stdout);
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("fork failed: cannot start a run process");
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed sweep takes its runs with it
        if (getppid() == 1) _exit(3);
        child(next);
        _exit(0);
      }
      running[pid] = {next++, Clock::now()};
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t i = it->second.first;
    const double secs = std::chrono::duration<double>(Clock::now() - it->second.second).count();
    running.erase(it);
    done(i, status, secs);
  }
}

std::string exit_text(int status) {
  return WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                             : "exited with code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace srbench::harness
