// common/process: running another program (the Python models of a suite start this way).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
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
    const std::vector<std::string> f = srbench::proc_stat_fields(pid);  // field 3: the state
    return !f.empty() && f[0] == "Z";
  };
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // up to 2 s
    gone = dead(child);
    if (!gone) usleep(10000);
  }
  CHECK(gone);
}

TEST_CASE("proc_stat_fields: field n at [n - 3], past a command name with spaces and parentheses") {
  // a sleeping child whose command name (its program file's) is "a) (b c": state S, parent this
  // process
  char dir[] = "/tmp/srbench-stat-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string program = std::string(dir) + "/a) (b c";
  std::filesystem::copy_file("/bin/sleep", program);
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  const pid_t child = start_process({program, "60"});
  std::string name;
  std::getline(std::ifstream("/proc/" + std::to_string(child) + "/comm"), name);
  CHECK(name == "a) (b c");
  std::vector<std::string> f;
  for (int i = 0; i < 200; ++i) {  // until the child sleeps (up to 2 s)
    f = srbench::proc_stat_fields(child);
    if (!f.empty() && f[0] == "S") break;
    usleep(10000);
  }
  REQUIRE(f.size() > 22 - 3);
  CHECK(f[0] == "S");                           // field 3: the state
  CHECK(f[4 - 3] == std::to_string(getpid()));  // field 4: the parent
  CHECK(std::stoll(f[22 - 3]) > 0);             // field 22: the start time
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  CHECK(srbench::proc_stat_fields(child).empty());  // gone
  std::filesystem::remove_all(dir);
}
