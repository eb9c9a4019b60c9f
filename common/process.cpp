#include "common/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace srbench {

namespace {

// In the child, after fork: the environment changed, stdin/stdout/stderr set, argv executed;
// a failure to execute is reported on `report` (errno) and the child ends.
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const EnvChanges& env, int in_fd, int out_fd,
                             int err_fd, int report) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  for (const auto& [k, v] : env) {
    if (v.empty()) unsetenv(k.c_str());
    else setenv(k.c_str(), v.c_str(), 1);
  }
  if (in_fd >= 0) dup2(in_fd, 0);
  if (out_fd >= 0) dup2(out_fd, 1);
  if (err_fd >= 0) dup2(err_fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  const int e = errno;
  (void)!write(report, &e, sizeof e);
  _exit(127);
}

// Waits for the child's exec (the report pipe closes) and throws what kept it from starting.
void check_started(int report, pid_t pid, const std::string& program) {
  int e = 0;
  ssize_t n;
  while ((n = read(report, &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close(report);
  if (n == static_cast<ssize_t>(sizeof e)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("cannot run " + program + ": " + std::strerror(e));
  }
}

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
}

// Writes `input` to `fd` (blocking) and closes it; a reader that went away ends the writing.
void feed(int fd, const std::string& input) {
  size_t at = 0;
  while (at < input.size()) {
    const ssize_t n = write(fd, input.data() + at, input.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  close(fd);
}

}  // namespace

bool ProcessResult::exited_ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

std::string ProcessResult::describe() const {
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return "killed by signal " + std::to_string(WTERMSIG(status)) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input, const EnvChanges& env) {
  if (argv.empty()) throw std::invalid_argument("run_process: no program");
  int in[2], out[2], err[2], report[2];
  make_pipe(in), make_pipe(out), make_pipe(err), make_pipe(report);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a process (fork: ") + std::strerror(errno) + ")");
  if (pid == 0) exec_child(argv, env, in[0], out[1], err[1], report[1]);
  close(in[0]), close(out[1]), close(err[1]), close(report[1]);
  try {
    check_started(report[0], pid, argv[0]);
  } catch (...) {
    close(in[1]), close(out[0]), close(err[0]);
    throw;
  }
  // stdin written while stdout and stderr are drained, so that no pipe fills and blocks
  ProcessResult r;
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) close(in_fd), in_fd = -1;
  int open_fds = 2;
  pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in_fd, POLLOUT, 0}};
  char buf[65536];
  while (open_fds > 0 || in_fd >= 0) {
    fds[2].fd = in_fd;
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) close(in_fd), in_fd = -1;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[k].fd, buf, sizeof buf);
      if (n > 0) (k == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      else if (n == 0 || (errno != EINTR && errno != EAGAIN)) close(fds[k].fd), fds[k].fd = -1, --open_fds;
    }
  }
  while (waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
  }
  return r;
}

pid_t start_process(const std::vector<std::string>& argv, const std::string& input, const EnvChanges& env) {
  if (argv.empty()) throw std::invalid_argument("start_process: no program");
  int in[2], report[2];
  make_pipe(in), make_pipe(report);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a process (fork: ") + std::strerror(errno) + ")");
  if (pid == 0) exec_child(argv, env, in[0], -1, -1, report[1]);
  close(in[0]), close(report[1]);
  try {
    check_started(report[0], pid, argv[0]);
  } catch (...) {
    close(in[1]);
    throw;
  }
  const auto old = signal(SIGPIPE, SIG_IGN);  // a child that ends before reading it all
  feed(in[1], input);
  signal(SIGPIPE, old);
  return pid;
}

std::string executable_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.string();
}

std::vector<std::string> proc_stat_fields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');  // the command name may hold spaces and parentheses
  std::vector<std::string> fields;
  if (paren == std::string::npos) return fields;
  std::istringstream rest(text.substr(paren + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

}  // namespace srbench
