// common/process: running another program (the Python models of a suite start this way).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "common/process.hpp"

using srbench::run_process;
using srbench::start_process;

TEST_CASE("run_process: stdin in, stdout and stderr out, through more than a pipe holds") {
  std::string input;  // 3 MiB, well past the 64 KiB a pipe buffers: no deadlock between writing and reading
  for (int i = 0; input.size() < (3u << 20); ++i) input += "line " + std::to_string(i) + "\n";
  const auto r = run_process({"/bin/sh", "-c", "cat; echo to-stderr >&2; exit 3"}, input);
  CHECK(r.out == input);
  CHECK(r.err == "to-stderr\n");
  CHECK_FALSE(r.exited_ok());
  CHECK(r.describe() == "exited with code 3");
  const auto ok = run_process({"/bin/echo", "a b"});
  CHECK(ok.exited_ok());
  CHECK(ok.out == "a b\n");
}

TEST_CASE("run_process: environment changes, PATH lookup, a program that is not there") {
  const auto r = run_process({"sh", "-c", "echo \"$SRBENCH_PROCESS_TEST${HOME:-unset}\""}, "",
                             {{"SRBENCH_PROCESS_TEST", "set-"}, {"HOME", ""}});
  CHECK(r.out == "set-unset\n");
  try {
    run_process({"/no/such/program"});
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "cannot run /no/such/program: No such file or directory");
  }
}

TEST_CASE("run_process: a child killed by a signal is described by it") {
  const auto r = run_process({"/bin/sh", "-c", "kill -9 $$"});
  CHECK(r.describe() == "killed by signal 9 (SIGKILL)");
}

TEST_CASE("start_process: the child reads its input and dies with its parent") {
  // an intermediate process starts a long sleep through start_process, then dies: the sleep must go too
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t middle = fork();
  REQUIRE(middle >= 0);
  if (middle == 0) {
    close(fds[0]);
    const pid_t child = start_process({"/bin/sh", "-c", "read x; [ \"$x\" = hello ] && exec sleep 60"}, "hello\n");
    (void)!write(fds[1], &child, sizeof child);
    _exit(0);  // the child's parent is gone now
  }
  close(fds[1]);
  pid_t child = 0;
  REQUIRE(read(fds[0], &child, sizeof child) == static_cast<ssize_t>(sizeof child));
  close(fds[0]);
  int status = 0;
  waitpid(middle, &status, 0);
  // gone: no such process, or a zombie not yet reaped by whoever adopted it
  const auto dead = [](pid_t pid) {
    if (kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close_paren = text.rfind(')');
    return close_paren != std::string::npos && close_paren + 2 < text.size() && text[close_paren + 2] == 'Z';
  };
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // up to 2 s
    gone = dead(child);
    if (!gone) usleep(10000);
  }
  CHECK(gone);
}
