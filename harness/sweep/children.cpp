#include "harness/sweep/children.hpp"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>
#include <vector>

namespace srbench::harness {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr auto kAskAgain = std::chrono::seconds(2);   // how often an item that said Later is asked again
constexpr auto kKillAfter = std::chrono::seconds(20);  // SIGKILL for a child that outlives SIGTERM so long

}  // namespace

bool is_stop_signal(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGHUP; }

bool killed_by_stop_signal(int status) { return WIFSIGNALED(status) && is_stop_signal(WTERMSIG(status)); }

StopSignals::StopSignals() {
  sigemptyset(&watched_);
  for (int sig : kStopSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup and the like
    sigaddset(&watched_, sig);
  }
  sigaddset(&watched_, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &watched_, &previous_);
}

StopSignals::~StopSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

int StopSignals::wait(int ms) {
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
  for (;;) {
    const int sig = sigtimedwait(&watched_, nullptr, &ts);
    if (sig > 0 && is_stop_signal(sig) && received_ == 0) received_ = sig;
    if (sig > 0 && ms > 0) break;          // one event is enough to look around
    if (sig < 0 && errno == EINTR) continue;
    if (sig < 0) break;                    // timeout
    ts = {0, 0};                           // ms == 0: take everything pending
  }
  return received_;
}

Stop run_in_children(size_t n, int jobs, StopSignals& signals, const ChildTasks& t) {
  enum class State { Waiting, Running, Over };
  struct Process {
    size_t item;
    Clock::time_point started;
  };
  std::vector<State> state(n, State::Waiting);
  std::vector<bool> later(n, false);
  std::map<pid_t, Process> running;
  size_t over = 0;
  Stop stop;
  Clock::time_point stop_since, last_ask, last_tick = Clock::now();
  bool killed = false, said_waiting = false;
  const pid_t parent = getpid();

  auto begin_stop = [&](Stop why) {
    if (stop || !why) return;
    stop = std::move(why);
    stop_since = Clock::now();
    for (const auto& [pid, p] : running) kill(pid, SIGTERM);
  };
  auto guarded = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::exception& e) {
      begin_stop({0, e.what()});
    }
  };

  for (;;) {
    if (const int sig = signals.stop_requested()) begin_stop({sig, ""});
    // Start what can start, in order.
    const bool ask_later = Clock::now() - last_ask >= kAskAgain;
    if (ask_later) last_ask = Clock::now();
    for (size_t i = 0; i < n && !stop && static_cast<int>(running.size()) < jobs; ++i) {
      if (state[i] != State::Waiting || (later[i] && !ask_later)) continue;
      Start s = Start::Later;
      guarded([&] { s = t.start(i); });
      if (stop) break;
      if (s == Start::Never) state[i] = State::Over, ++over;
      later[i] = s == Start::Later;
      if (s != Start::Now) continue;
      std::cout.flush();
      std::fflush(stdout);
      const pid_t pid = fork();
      if (pid < 0) {
        begin_stop({0, std::string("cannot start a run process (fork: ") + std::strerror(errno) + ")"});
        break;
      }
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed sweep takes its runs with it
        if (getppid() != parent) _exit(kChildOrphaned);
        signal(SIGTERM, SIG_DFL);
        pthread_sigmask(SIG_SETMASK, &signals.previous(), nullptr);
        t.child(i);
        _exit(0);
      }
      running[pid] = {i, Clock::now()};
      state[i] = State::Running;
      if (t.started) guarded([&] { t.started(i, pid); });
    }
    if (running.empty()) {
      if (stop || over == n) break;
      if (!said_waiting && t.waiting) guarded(t.waiting);  // all that is left waits for other sweeps
      said_waiting = true;
    }

    if (const int sig = signals.wait(1000)) begin_stop({sig, ""});
    for (;;) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      const auto it = running.find(pid);
      if (it == running.end()) continue;
      const Process p = it->second;
      running.erase(it);
      state[p.item] = State::Over, ++over;
      const double secs = std::chrono::duration<double>(Clock::now() - p.started).count();
      Stop why;
      guarded([&] { why = t.done(p.item, pid, status, secs, static_cast<bool>(stop)); });
      begin_stop(why);
    }
    if (Clock::now() - last_tick >= std::chrono::seconds(1)) {
      last_tick = Clock::now();
      if (t.tick) guarded(t.tick);
    }
    if (stop && !killed && !running.empty() && Clock::now() - stop_since > kKillAfter) {
      for (const auto& [pid, p] : running) kill(pid, SIGKILL);
      killed = true;
    }
  }
  return stop;
}

std::string signal_name(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

std::string exit_text(int status) {
  if (!WIFSIGNALED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + signal_name(WTERMSIG(status)) + ")";
}

}  // namespace srbench::harness
