// Sweeps sharing one results folder (harness/sweep/claims.hpp): two started together train every
// run exactly once between them; a claim whose sweep is dead (this host) or silent past the
// timeout (another host) is taken over; a live one is left to its sweep (a shard) or waited for
// (an unsharded sweep); `merge` and the progress lines say what is claimed elsewhere.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "harness/results/results.hpp"
#include "harness/suite/suite.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kSuite =
    srbench::test::tiny_suite({.name = "cl", .steps = 2000, .eval_every = 500, .shift = false, .two_models = false});

// The runs a sweep trained itself: its "[k/n] entry  model  seed=S  id=…" lines, as
// "entry model seed" (a run finished by another sweep prints "(finished by another sweep)").
std::multiset<std::string> trained(const std::string& out) {
  std::multiset<std::string> runs;
  const std::regex line(R"(^\[\d+/\d+\] (\S+)  (\S+)  seed=(\d+)  id=)");
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) runs.insert(m[1].str() + " " + m[2].str() + " " + m[3].str());
  }
  return runs;
}

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// A claim file as a sweep writes it.
void write_claim(const std::string& path, const std::string& host, pid_t pid, int64_t pid_start, int64_t heartbeat) {
  std::ostringstream s;
  s << "srbench claim\nhost: " << host << "\npid: " << pid << "\npid_start: " << pid_start << "\nstarted: " << heartbeat
    << "\nheartbeat: " << heartbeat << "\nrun_pid: 0\n";
  srbench::test::write_file(path, s.str());
}

// A pid that no process has now: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

// The run ids of the suite, in run order.
std::vector<std::string> run_ids(const std::string& yaml_path) {
  std::vector<std::string> ids;
  for (const auto& r : load_suite(yaml_path).runs) ids.push_back(r.id);
  return ids;
}

}  // namespace

TEST_CASE("claims: two sweeps started together over one folder train every run exactly once", "[harness][sweep][claims]") {
  TempDir dir;
  srbench::test::write_file(dir.file("cl.yaml"), kSuite);
  const auto ref = run_srbench({"sweep", dir.file("cl.yaml"), "--out", dir.file("ref/cl.h5"), "--jobs", "2"});
  REQUIRE(ref.exit_code == 0);
  for (const char* shard : {"", "1/2"}) {  // a re-run while the first goes on; the same shard submitted twice
    INFO("shard '" << shard << "'");
    const std::string out = dir.file(std::string("both") + (*shard ? "-shard" : "") + "/cl.h5");
    std::vector<std::string> args = {"sweep", dir.file("cl.yaml"), "--out", out, "--jobs", "2"};
    if (*shard) args.insert(args.end(), {"--shard", shard});
    srbench::test::RunResult a, b;
    std::thread ta([&] { a = run_srbench(args); });
    std::thread tb([&] { b = run_srbench(args); });
    ta.join();
    tb.join();
    INFO(a.out << a.err << "----\n" << b.out << b.err);
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    auto all = trained(a.out);
    const auto other = trained(b.out);
    all.insert(other.begin(), other.end());
    const size_t n = *shard ? 3 : 6;
    CHECK(all.size() == n);                                            // n trainings between them ...
    CHECK(std::set<std::string>(all.begin(), all.end()).size() == n);  // ... of n different runs
    CHECK(!trained(a.out).empty());  // both took part
    CHECK(!trained(b.out).empty());
    CHECK(srbench::test::list_runs_folder((fs::path(out).parent_path() / "cl" / "runs").string()).leftovers.empty());
    if (!*shard) {  // both waited for the other's runs and wrote the whole suite file
      CHECK_THAT(a.out + b.out, Catch::Contains("finished by another sweep"));
      REQUIRE(read_suite_file(out).runs.size() == 6);
      srbench::test::require_same_suite_files(dir.file("ref/cl.h5"), out);
    }
  }
}

TEST_CASE("claims: dead and stale claims are taken over, live ones left to their sweep", "[harness][sweep][claims]") {
  TempDir dir;
  srbench::test::write_file(dir.file("cl.yaml"), kSuite);
  const auto ids = run_ids(dir.file("cl.yaml"));
  REQUIRE(ids.size() == 6);
  const std::string runs = dir.file("r/cl/runs");
  fs::create_directories(runs);
  const int64_t now = std::time(nullptr);
  write_claim(runs + "/" + ids[0] + ".claim", hostname(), dead_pid(), 0, now);                // dead, this host
  write_claim(runs + "/" + ids[1] + ".claim", "node-elsewhere", 4242, 1, now - 3600);         // silent for an hour
  write_claim(runs + "/" + ids[2] + ".claim", "node-elsewhere", 4242, 1, now + 3600);         // alive elsewhere
  write_claim(runs + "/" + ids[3] + ".claim", hostname(), getppid(), 0, now - 3600);          // alive here (old heartbeat)
  srbench::test::write_file(runs + "/" + ids[4] + ".claim", "not a claim\n");                 // damaged, just written

  // A shard leaves the live claims to their sweeps and takes over the others.
  const auto r = run_srbench({"sweep", dir.file("cl.yaml"), "--out", dir.file("r/cl.h5"), "--shard", "0/1", "--jobs", "2"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("run " + ids[0] + ": taking over the claim of host " + hostname()) &&
                        Catch::Contains("on this host is gone"));
  CHECK_THAT(r.out, Catch::Contains("run " + ids[1] + ": taking over the claim of host node-elsewhere") &&
                        Catch::Contains("no heartbeat for 60 min (claim timeout 5 min)"));
  CHECK_THAT(r.out, Catch::Contains("run " + ids[2] + " is claimed by another sweep (host node-elsewhere, pid 4242") &&
                        Catch::Contains("; left to it"));
  CHECK_THAT(r.out, Catch::Contains("run " + ids[3] + " is claimed by another sweep (host " + hostname()));
  CHECK_THAT(r.out, Catch::Contains("run " + ids[4] + " is claimed by another sweep (an unreadable claim file"));
  CHECK_THAT(r.out, Catch::Contains("3 run(s) left to the other sweeps that claim them"));
  for (size_t i = 0; i < 6; ++i) {
    INFO("run " << i);
    const bool left = i >= 2 && i <= 4;
    CHECK(fs::exists(runs + "/" + ids[i] + ".h5") == !left);
    CHECK(fs::exists(runs + "/" + ids[i] + ".claim") == left);
  }

  // merge says which runs are being trained elsewhere.
  const auto m = run_srbench({"merge", dir.file("r/cl"), "--out", dir.file("m.h5")});
  INFO(m.out << m.err);
  REQUIRE(m.exit_code == 0);
  CHECK_THAT(m.out, Catch::Contains("missing: 3 of 6") && Catch::Contains("claimed by a sweep now: 3 run(s)") &&
                        Catch::Contains(ids[2]) && Catch::Contains("host node-elsewhere"));

  // An unsharded sweep waits for a live claim, and takes it over once its heartbeat is older than
  // the timeout (here 3 s).
  fs::remove(runs + "/" + ids[3] + ".claim");
  fs::remove(runs + "/" + ids[4] + ".claim");
  write_claim(runs + "/" + ids[2] + ".claim", "node-elsewhere", 4242, 1, std::time(nullptr));
  const auto w = run_srbench({"sweep", dir.file("cl.yaml"), "--out", dir.file("r/cl.h5"), "--claim-timeout", "3"});
  INFO(w.out << w.err);
  REQUIRE(w.exit_code == 0);
  CHECK_THAT(w.out, Catch::Contains("run " + ids[2] + " is claimed by another sweep") && Catch::Contains("waiting for it"));
  CHECK_THAT(w.out, Catch::Contains("run " + ids[2] + ": taking over the claim of host node-elsewhere"));
  CHECK(read_suite_file(dir.file("r/cl.h5")).runs.size() == 6);
  CHECK(srbench::test::list_runs_folder(runs).leftovers.empty());
}
