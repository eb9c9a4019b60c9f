// A full disk (common/h5.hpp, harness/sweep/sweep.hpp): on a small tmpfs that fills up during a
// sweep, the sweep stops with the file and the operating system's reason ("no space left on
// device"), leaves no temporary file or claim, keeps the runs it finished intact, and — once space
// is freed — the same command completes the suite with results identical to a sweep on a roomy
// disk. Needs root (mount -t tmpfs), as the tests run for Slurm; where mounting is refused the
// test warns and passes outside CI and fails in CI (CI=true).
#include <sys/mount.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/results/results.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Six runs of a fraction of a second, about 19 KB of run file each.
const std::string kSuite =
    srbench::test::tiny_suite({.name = "full", .steps = 40, .eval_every = 20, .shift = false, .two_models = false});

// A tmpfs of `bytes` mounted at `dir` for the lifetime of the object.
struct Tmpfs {
  std::string dir;
  bool mounted = false;
  int error = 0;
  Tmpfs(std::string d, size_t bytes) : dir(std::move(d)) {
    fs::create_directories(dir);
    const std::string opts = "size=" + std::to_string(bytes) + ",mode=0755";
    mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0;
    error = errno;
  }
  ~Tmpfs() {
    if (mounted) ::umount2(dir.c_str(), MNT_DETACH);
  }
};

// Free bytes on the file system holding `dir`.
uintmax_t free_bytes(const std::string& dir) { return fs::space(dir).available; }

// Fills the file system of `dir` with `path` until `leave` bytes (rounded to pages) are free.
void fill_up(const std::string& dir, const std::string& path, uintmax_t leave) {
  const uintmax_t now = free_bytes(dir);
  REQUIRE(now > leave);
  std::ofstream out(path, std::ios::binary);
  const std::string page(4096, 'x');
  for (uintmax_t n = 0; n + leave < now; n += page.size()) out << page;
  out.close();
  REQUIRE(out.good());
}

}  // namespace

TEST_CASE("full disk: the sweep stops naming the file and 'no space left on device', leaves no temporary file, "
          "and completes identically once space is freed",
          "[harness][sweep][iofail]") {
  TempDir dir;
  srbench::test::write_file(dir.file("full.yaml"), kSuite);
  const auto ref = run_srbench({"sweep", dir.file("full.yaml"), "--out", dir.file("ref/full.h5"), "--jobs", "2"});
  INFO(ref.out << ref.err);
  REQUIRE(ref.exit_code == 0);

  Tmpfs disk(dir.file("disk"), size_t{1} << 20);
  if (!disk.mounted) {
    const std::string why = std::string("cannot mount a tmpfs (") + std::strerror(disk.error) + "; the test needs root)";
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL("CI=true and " << why);
    WARN("SKIPPED: " << why);
    return;
  }
  const std::string out = disk.dir + "/res/full.h5", runs = disk.dir + "/res/full/runs";
  fs::create_directories(runs);
  // Room for two run files or so (each run also takes a page for its claim).
  fill_up(disk.dir, disk.dir + "/filler", 48 * 1024);
  const auto full = run_srbench({"sweep", dir.file("full.yaml"), "--out", out, "--jobs", "2"});
  INFO(full.out << full.err);
  CHECK(full.exit_code == 1);
  CHECK_THAT(full.err, Catch::Contains("no space left on device") && Catch::Contains(runs + "/"));
  CHECK_THAT(full.err, !Catch::Contains("does the folder exist"));
  CHECK(srbench::test::list_runs_folder(runs).leftovers.empty());
  // What was finished is intact and equal to the reference run.
  size_t kept = 0;
  for (const auto& name : srbench::test::list_runs_folder(runs).finished) {
    srbench::test::require_same_run_but_timings(read_run_file(runs + "/" + name), read_run_file(dir.file("ref/full/runs/" + name)));
    ++kept;
  }
  CHECK(kept < 6);
  CHECK(!fs::exists(out));

  // Space freed: the same command completes the suite, identical to the reference.
  fs::remove(disk.dir + "/filler");
  const auto again = run_srbench({"sweep", dir.file("full.yaml"), "--out", out, "--jobs", "2"});
  INFO(again.out << again.err);
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains(std::to_string(kept) + " already finished, " + std::to_string(6 - kept) + " to run"));
  CHECK(srbench::test::list_runs_folder(runs).leftovers.empty());
  srbench::test::require_same_suite_files(dir.file("ref/full.h5"), out);
}
