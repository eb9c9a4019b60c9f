#include "harness/sweep/children.hpp"

#include <malloc.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <utility>
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
  // A SIGCHLD that a look without waiting (stop_requested) took is not waited for again: the
  // child's news is there to read, so this wait only takes what else is pending.
  const bool waits = ms > 0;
  if (waits && std::exchange(child_taken_, false)) ms = 0;
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
  for (;;) {
    const int sig = sigtimedwait(&watched_, nullptr, &ts);
    if (sig > 0 && is_stop_signal(sig) && received_ == 0) received_ = sig;
    if (sig == SIGCHLD && !waits) child_taken_ = true;
    if (sig > 0 && ms > 0) break;          // one event is enough to look around
    if (sig < 0 && errno == EINTR) continue;
    if (sig < 0) break;                    // timeout
    ts = {0, 0};                           // ms == 0: take everything pending
  }
  return received_;
}

namespace {

// One worker process, as the sweep sees it.
struct Worker {
  pid_t pid;
  int fd;                  // the sweep's end of the socket pair
  long item = -1;          // the item it works on; -1: idle
  Clock::time_point since;  // when it was given that item
};

// `n` bytes from `fd` (a stream socket), through interruptions and partial reads; false at its
// end (or an error) before all of them came.
bool read_exactly(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= static_cast<size_t>(r);
  }
  return true;
}

// In a worker: items from the sweep one after another until the sweep closes its end; each
// index sent back once its item's result is written, and the sweep woken (a SIGCHLD, as a
// child's end would wake it). Never returns.
[[noreturn]] void worker_loop(int fd, pid_t parent, const ChildTasks& t) {
  // A worker runs one run after another, each building its model and buffers anew. glibc serves
  // blocks of 128 KiB and more with fresh mmaps and hands them back when freed, so every run would
  // fault in (and zero) its buffers again: half a tiny run's time (bench/run_bench.py --tiny-only).
  // Blocks up to kKeep come from the heap instead, and up to kKeep of freed heap stays for the
  // next run; after a larger run the rest goes back to the kernel (malloc_trim), so a worker does
  // not hold a big run's memory through the small runs after it. Larger blocks (a run that big
  // spends far longer computing) are mapped and unmapped as before. Numbers do not depend on where
  // memory comes from.
  constexpr int kKeep = 32 << 20;
  mallopt(M_MMAP_THRESHOLD, kKeep);
  mallopt(M_TRIM_THRESHOLD, 2 * kKeep);
  for (;;) {
    if (mallinfo2().fordblks > static_cast<size_t>(kKeep)) malloc_trim(kKeep);
    uint64_t item = 0;
    if (!read_exactly(fd, &item, sizeof item)) _exit(0);  // no more work, or the sweep is gone
    try {
      t.child(static_cast<size_t>(item));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "srbench sweep: worker process: %s\n", e.what());
      std::fflush(stderr);
      _exit(1);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    if (send(fd, &item, sizeof item, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof item)) _exit(0);
    kill(parent, SIGCHLD);
  }
}

// The items, the workers and the sweep's state while run_in_children runs.
class Pool {
 public:
  Pool(size_t n, int jobs, StopSignals& signals, const ChildTasks& t)
      : n_(n), jobs_(jobs), signals_(signals), t_(t), state_(n, State::Waiting), later_(n, false) {}

  Stop run() {
    for (;;) {
      if (const int sig = signals_.stop_requested()) begin_stop({sig, ""});
      start_what_can_start();
      if (busy() == 0) {
        if (stop_ || over_ == n_) break;
        if (!said_waiting_ && t_.waiting) guarded(t_.waiting);  // all that is left waits for other sweeps
        said_waiting_ = true;
      }
      if (const int sig = signals_.wait(1000)) begin_stop({sig, ""});
      for (Worker& w : workers_) take_answers(w);
      // The idle workers get their next runs before the answered runs are looked at (their run
      // files read, their progress printed): a worker waits for the sweep only as long as its
      // next run takes to claim.
      start_what_can_start();
      report_answered();
      reap();
      if (Clock::now() - last_tick_ >= std::chrono::seconds(1)) {
        last_tick_ = Clock::now();
        if (t_.tick) guarded(t_.tick);
      }
      if (stop_ && !killed_ && busy() > 0 && Clock::now() - stop_since_ > kKillAfter) {
        for (const Worker& w : workers_) kill(w.pid, SIGKILL);
        killed_ = true;
      }
    }
    // Idle workers end when their socket closes (or have been stopped with the sweep).
    for (Worker& w : workers_) {
      if (w.fd >= 0) close(w.fd);
      int status = 0;
      while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    return stop_;
  }

 private:
  enum class State { Waiting, Running, Over };

  // The workers working on an item.
  int busy() const {
    return static_cast<int>(std::count_if(workers_.begin(), workers_.end(), [](const Worker& w) { return w.item >= 0; }));
  }

  void begin_stop(Stop why) {
    if (stop_ || !why) return;
    stop_ = std::move(why);
    stop_since_ = Clock::now();
    for (const Worker& w : workers_) kill(w.pid, SIGTERM);
  }
  void guarded(const std::function<void()>& f) {
    try {
      f();
    } catch (const std::exception& e) {
      begin_stop({0, e.what()});
    }
  }

  // Asks the waiting items, in order, and gives those that start now to workers.
  void start_what_can_start() {
    const bool ask_later = Clock::now() - last_ask_ >= kAskAgain;
    if (ask_later) last_ask_ = Clock::now();
    for (size_t i = 0; i < n_ && !stop_ && busy() < jobs_; ++i) {
      if (state_[i] != State::Waiting || (later_[i] && !ask_later)) continue;
      Start s = Start::Later;
      guarded([&] { s = t_.start(i); });
      if (stop_) break;
      if (s == Start::Never) state_[i] = State::Over, ++over_;
      later_[i] = s == Start::Later;
      if (s != Start::Now) continue;
      const pid_t pid = dispatch(i);
      if (pid == 0) break;
      state_[i] = State::Running;
      if (t_.started) guarded([&] { t_.started(i, pid); });
    }
  }

  // Item i to an idle worker (a new one if none is idle): that worker's pid, or 0 if none could
  // take it (the sweep is then stopping).
  pid_t dispatch(size_t i) {
    for (int attempt = 0; attempt < 2 && !stop_; ++attempt) {
      Worker* w = nullptr;
      for (Worker& x : workers_)
        if (x.item < 0 && x.fd >= 0) w = &x;
      if (!w && !(w = spawn())) return 0;
      const uint64_t item = i;
      if (send(w->fd, &item, sizeof item, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof item)) {
        w->item = static_cast<long>(i), w->since = Clock::now();
        return w->pid;
      }
      close(w->fd), w->fd = -1;  // it died idle; it is reaped later, another takes the item
    }
    begin_stop({0, "cannot start a worker process that takes work"});
    return 0;
  }

  // A new worker (at the back of workers_), or null (the sweep is stopping, and says why).
  Worker* spawn() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
      begin_stop({0, std::string("cannot start a worker process (socketpair: ") + std::strerror(errno) + ")"});
      return nullptr;
    }
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
      close(sv[0]), close(sv[1]);
      begin_stop({0, std::string("cannot start a worker process (fork: ") + std::strerror(errno) + ")"});
      return nullptr;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed sweep takes its workers with it
      if (getppid() != parent_) _exit(kChildOrphaned);
      signal(SIGTERM, SIG_DFL);
      pthread_sigmask(SIG_SETMASK, &signals_.previous(), nullptr);
      close(sv[0]);
      for (const Worker& w : workers_)  // the other workers' sockets: each must see its end when the sweep closes it
        if (w.fd >= 0) close(w.fd);
      worker_loop(sv[1], parent_, t_);
    }
    close(sv[1]);
    workers_.push_back({pid, sv[0], -1, Clock::now()});
    return &workers_.back();
  }

  // The runs whose workers answered (take_answers), in the order they answered, judged as
  // finished by a worker that is alive (wait status 0).
  void report_answered() {
    for (size_t k = 0; k < answered_.size(); ++k) {
      const Answered a = answered_[k];
      Stop why;
      guarded([&] { why = t_.done(a.item, a.pid, 0, a.secs, static_cast<bool>(stop_)); });
      begin_stop(why);
    }
    answered_.clear();
  }

  // Worker w's item has ended with the worker (its wait status).
  void finish(Worker& w, int status) {
    const auto i = static_cast<size_t>(w.item);
    w.item = -1;
    state_[i] = State::Over, ++over_;
    const double secs = std::chrono::duration<double>(Clock::now() - w.since).count();
    Stop why;
    guarded([&] { why = t_.done(i, w.pid, status, secs, static_cast<bool>(stop_)); });
    begin_stop(why);
  }

  // The indices worker w has sent back so far: its item, finished (answered_, for report_answered).
  void take_answers(Worker& w) {
    uint64_t item = 0;
    while (w.fd >= 0 &&
           recv(w.fd, &item, sizeof item, MSG_DONTWAIT | MSG_PEEK) == static_cast<ssize_t>(sizeof item)) {
      read_exactly(w.fd, &item, sizeof item);
      if (w.item < 0 || static_cast<uint64_t>(w.item) != item) continue;
      const auto i = static_cast<size_t>(w.item);
      answered_.push_back({i, w.pid, std::chrono::duration<double>(Clock::now() - w.since).count()});
      w.item = -1;
      state_[i] = State::Over, ++over_;
    }
  }

  // The workers that have ended: the item of one that was working is judged by its wait status.
  void reap() {
    for (;;) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      const auto it = std::find_if(workers_.begin(), workers_.end(), [&](const Worker& w) { return w.pid == pid; });
      if (it == workers_.end()) continue;
      take_answers(*it);  // what it sent before it ended counts
      report_answered();
      if (it->item >= 0) finish(*it, status);
      else if (killed_by_stop_signal(status)) begin_stop({WTERMSIG(status), ""});  // idle, stopped from outside
      if (it->fd >= 0) close(it->fd);
      workers_.erase(it);
    }
  }

  const size_t n_;
  const int jobs_;
  StopSignals& signals_;
  const ChildTasks& t_;
  const pid_t parent_ = getpid();
  std::vector<State> state_;
  std::vector<bool> later_;
  std::vector<Worker> workers_;
  struct Answered {
    size_t item;
    pid_t pid;
    double secs;
  };
  std::vector<Answered> answered_;  // take_answers → report_answered
  size_t over_ = 0;
  Stop stop_;
  Clock::time_point stop_since_, last_ask_, last_tick_ = Clock::now();
  bool killed_ = false, said_waiting_ = false;
};

}  // namespace

Stop run_in_children(size_t n, int jobs, StopSignals& signals, const ChildTasks& t) {
  return Pool(n, jobs, signals, t).run();
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
