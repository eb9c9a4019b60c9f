#include "harness/sweep/claims.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/h5.hpp"
#include "common/process.hpp"

namespace fs = std::filesystem;

namespace srbench::harness {

namespace {

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// A process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or -1.
int64_t process_start(pid_t pid) {
  const std::vector<std::string> f = proc_stat_fields(pid);
  return f.size() > 22 - 3 ? std::atoll(f[22 - 3].c_str()) : -1;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

int64_t now_s() { return static_cast<int64_t>(std::time(nullptr)); }

std::string claim_text(const Claim& c) {
  std::ostringstream s;
  s << "srbench claim\nhost: " << c.host << "\npid: " << c.pid << "\npid_start: " << c.pid_start
    << "\nstarted: " << c.started << "\nheartbeat: " << c.heartbeat << "\nrun_pid: " << c.run_pid << "\n";
  if (!c.slurm_job.empty()) s << "slurm_job: " << c.slurm_job << "\nslurm_restart: " << c.slurm_restart << "\n";
  return s.str();
}

// The same claim (not merely one for the same run): the same process made it at the same time.
bool same_claim(const Claim& a, const Claim& b) {
  return a.host == b.host && a.pid == b.pid && a.pid_start == b.pid_start && a.started == b.started;
}

// An unreadable claim file (damaged): judged by its age alone.
Claim unreadable_claim(const std::string& path) {
  Claim c;
  c.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) c.started = c.heartbeat = static_cast<int64_t>(st.st_mtime);
  return c;
}

std::string age_text(int64_t s) {
  if (s < 120) return std::to_string(s) + " s";
  if (s < 7200) return std::to_string(s / 60) + " min";
  return std::to_string(s / 3600) + " h";
}

std::atomic<uint64_t> g_counter{0};

std::string unique_suffix() {
  return this_host() + "-" + std::to_string(getpid()) + "-" + std::to_string(g_counter++);
}

}  // namespace

std::optional<Claim> read_claim(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line) || line != "srbench claim") return std::nullopt;
  Claim c;
  c.path = path;
  bool has_host = false, has_pid = false;
  while (std::getline(in, line)) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos) return std::nullopt;
    const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
    char* end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    const bool numeric = !value.empty() && *end == '\0';
    if (key == "host") c.host = value, has_host = !value.empty();
    else if (key == "slurm_job") c.slurm_job = value;
    else if (!numeric) return std::nullopt;
    else if (key == "pid") c.pid = static_cast<pid_t>(number), has_pid = number > 0;
    else if (key == "pid_start") c.pid_start = number;
    else if (key == "started") c.started = number;
    else if (key == "heartbeat") c.heartbeat = number;
    else if (key == "run_pid") c.run_pid = static_cast<pid_t>(number);
    else if (key == "slurm_restart") c.slurm_restart = number;
  }
  if (!has_host || !has_pid) return std::nullopt;
  return c;
}

bool claim_alive(const Claim& c, double timeout_s, std::string* why) {
  auto dead = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  const std::string job = env_or("SLURM_JOB_ID", "");
  const int64_t restart = std::atoll(env_or("SLURM_RESTART_COUNT", "0").c_str());
  if (!c.slurm_job.empty() && c.slurm_job == job && c.slurm_restart < restart)
    return dead("made by Slurm job " + job + " before it was requeued");
  if (!c.host.empty() && c.host == this_host()) {
    if (kill(c.pid, 0) != 0 && errno == ESRCH) return dead("pid " + std::to_string(c.pid) + " on this host is gone");
    const int64_t start = process_start(c.pid);
    if (start >= 0 && c.pid_start > 0 && start != c.pid_start)
      return dead("pid " + std::to_string(c.pid) + " on this host is now another process");
    return true;
  }
  const int64_t age = now_s() - c.heartbeat;
  if (static_cast<double>(age) > timeout_s)
    return dead("no heartbeat for " + age_text(age) + " (claim timeout " + age_text(static_cast<int64_t>(timeout_s)) + ")");
  return true;
}

std::string describe_claim(const Claim& c) {
  if (c.host.empty()) return "an unreadable claim file, last changed " + age_text(now_s() - c.heartbeat) + " ago";
  std::string s = "host " + c.host + ", pid " + std::to_string(c.pid);
  if (c.run_pid > 0) s += " (run process " + std::to_string(c.run_pid) + ")";
  if (!c.slurm_job.empty()) s += ", Slurm job " + c.slurm_job;
  return s + ", for " + age_text(now_s() - c.started) + " (heartbeat " + age_text(now_s() - c.heartbeat) + " ago)";
}

Claims::Claims(std::string dir, double timeout_s) : dir_(std::move(dir)), timeout_s_(timeout_s) {}

Claims::~Claims() {
  while (!held_.empty()) release(held_.begin()->first);
}

void Claims::write_claim(Held& h) {
  const std::string text = claim_text(h.claim);
  if (::pwrite(h.fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
      ::ftruncate(h.fd, static_cast<off_t>(text.size())) != 0)
    throw std::runtime_error("cannot write claim " + h.claim.path + ": " + h5::os_error_text(errno));
}

bool Claims::take(const std::string& name, Claim* holder, std::string* taken_over) {
  const std::string path = path_of(name);
  for (int attempt = 0; attempt < 4; ++attempt) {
    // A whole claim under a temporary name, then linked to its own name (fails if it exists).
    Held h;
    h.claim.path = path;
    h.claim.host = this_host();
    h.claim.pid = getpid();
    h.claim.pid_start = process_start(getpid());
    h.claim.started = h.claim.heartbeat = now_s();
    h.claim.slurm_job = env_or("SLURM_JOB_ID", "");
    h.claim.slurm_restart = std::atoll(env_or("SLURM_RESTART_COUNT", "0").c_str());
    const std::string fresh = path + ".new-" + unique_suffix();
    h.fd = ::open(fresh.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (h.fd < 0) throw std::runtime_error("cannot create claim " + fresh + ": " + h5::os_error_text(errno));
    int error = 0;
    bool linked = false;
    try {
      write_claim(h);
      linked = ::link(fresh.c_str(), path.c_str()) == 0;
      error = errno;
      struct stat st {};
      if (!linked && error != EEXIST && ::fstat(h.fd, &st) == 0 && st.st_nlink == 2) linked = true;  // NFS: done after all
    } catch (...) {
      ::unlink(fresh.c_str());
      ::close(h.fd);
      throw;
    }
    ::unlink(fresh.c_str());
    if (linked) {
      held_[name] = h;
      return true;
    }
    ::close(h.fd);
    if (error != EEXIST) throw std::runtime_error("cannot create claim " + path + ": " + h5::os_error_text(error));

    // Held: by a live process, or to be taken over.
    std::optional<Claim> c = read_claim(path);
    if (!c) {
      std::error_code ec;
      if (!fs::exists(path, ec)) continue;  // released meanwhile
      c = unreadable_claim(path);
    }
    std::string why;
    if (claim_alive(*c, timeout_s_, &why)) {
      if (holder) *holder = *c;
      return false;
    }
    // Renamed away, then checked: was it the claim judged dead, or one made since?
    const std::string away = path + ".dead-" + unique_suffix();
    if (::rename(path.c_str(), away.c_str()) != 0) continue;  // gone meanwhile
    const std::optional<Claim> moved = read_claim(away);
    const bool judged = moved ? same_claim(*moved, *c) : c->host.empty();
    if (!judged) {  // a live claim made since: put it back (unless yet another has taken its place)
      static_cast<void>(::link(away.c_str(), path.c_str()));
      ::unlink(away.c_str());
      if (holder && moved) *holder = *moved;
      return false;
    }
    ::unlink(away.c_str());
    if (taken_over) *taken_over = describe_claim(*c) + ": " + why;
  }
  if (holder) *holder = read_claim(path).value_or(unreadable_claim(path));
  return false;
}

void Claims::set_run_pid(const std::string& name, pid_t run_pid) {
  const auto it = held_.find(name);
  if (it == held_.end()) return;
  it->second.claim.run_pid = run_pid;
  try {
    write_claim(it->second);
  } catch (const std::exception&) {  // the run stays claimed; the claim only lacks the run's pid
  }
}

void Claims::heartbeat(double interval_s) {
  const int64_t now = now_s();
  for (auto& [name, h] : held_) {
    if (static_cast<double>(now - h.claim.heartbeat) < interval_s) continue;
    h.claim.heartbeat = now;
    try {
      write_claim(h);
    } catch (const std::exception&) {
      ::futimens(h.fd, nullptr);  // at least the file's time, which a reader of a damaged claim goes by
    }
  }
}

void Claims::release(const std::string& name) {
  const auto it = held_.find(name);
  if (it == held_.end()) return;
  struct stat mine {}, there {};
  if (::fstat(it->second.fd, &mine) == 0 && ::stat(it->second.claim.path.c_str(), &there) == 0 &&
      mine.st_dev == there.st_dev && mine.st_ino == there.st_ino)
    ::unlink(it->second.claim.path.c_str());
  ::close(it->second.fd);
  held_.erase(it);
}

std::vector<std::pair<std::string, Claim>> claims_in(const std::string& dir) {
  std::vector<std::pair<std::string, Claim>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string file = e.path().filename().string();
    if (file.size() <= 6 || file.compare(file.size() - 6, 6, ".claim") != 0) continue;
    out.emplace_back(file.substr(0, file.size() - 6), read_claim(e.path().string()).value_or(unreadable_claim(e.path().string())));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace srbench::harness
