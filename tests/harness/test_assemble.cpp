// The suite file's contents from a suite folder (harness/results/assemble.hpp): which run files
// count, in which order, and the warnings for those left out — the one rule of sweep and merge.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "harness/results/assemble.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::TempDir;

namespace {

RunResult tiny_run(const std::string& id, uint64_t seed) {
  RunResult r;
  r.run_id = id;
  r.task = "parity";
  r.entry = "parity";
  r.model = "m";
  r.seed = seed;
  r.status = "ok";
  return r;
}

std::vector<std::string> ids_of(const std::vector<RunFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.result.run_id);
  return out;
}

}  // namespace

TEST_CASE("assemble_suite: the suite's runs by index, the others by id or left out; damaged and duplicate files skipped",
          "[results][assemble]") {
  TempDir dir;
  const std::string runs = dir.file("runs");
  std::filesystem::create_directories(runs);
  // File names in another order than the runs' index and ids; one foreign run ("f0"), one copy.
  write_run_file(runs + "/a.h5", tiny_run("id2", 2), "name: s\n", nullptr);
  write_run_file(runs + "/b.h5", tiny_run("zz-foreign", 7), "name: other\n", nullptr);
  write_run_file(runs + "/c.h5", tiny_run("id0", 0), "name: s\n", nullptr);
  write_run_file(runs + "/d.h5", tiny_run("aa-foreign", 8), "name: other\n", nullptr);
  write_run_file(runs + "/e.h5", tiny_run("id2", 2), "name: s\n", nullptr);  // id2 again
  std::ofstream(runs + "/0-broken.h5") << "not hdf5";
  std::ofstream(runs + "/c.h5.tmp-123-1") << "a run being written";

  Suite suite;
  suite.text = "name: s\n";
  for (size_t i = 0; i < 3; ++i) {
    RunSpec r;
    r.id = "id" + std::to_string(i);
    r.index = i;
    suite.runs.push_back(r);
  }
  RunFiles found = read_run_files(runs);
  CHECK(found.found == 6);  // the temporary file is not a results file
  CHECK(ids_of(found.files) == std::vector<std::string>{"id2", "zz-foreign", "id0", "aa-foreign"});
  REQUIRE(found.warnings.size() == 2);
  CHECK(found.warnings[0].rfind("skipping " + runs + "/0-broken.h5: ", 0) == 0);
  CHECK(found.warnings[1] == "skipping " + runs + "/e.h5: run id2 is already in another file");
  CHECK(common_suite_text(found.files) == "name: s\n");

  const SuiteContents merged = assemble_suite(found, dir.file("splines"), suite.text, &suite, OtherRuns::Append);
  CHECK(ids_of(merged.runs) == std::vector<std::string>{"id0", "id2", "aa-foreign", "zz-foreign"});
  CHECK(merged.runs[1].path == runs + "/a.h5");  // the first file of id2
  CHECK(merged.splines.empty());
  CHECK(merged.warnings.empty());
  const SuiteContents swept = assemble_suite(found, dir.file("splines"), suite.text, &suite, OtherRuns::Leave);
  CHECK(ids_of(swept.runs) == std::vector<std::string>{"id0", "id2"});
  const SuiteContents unexpanded = assemble_suite(found, dir.file("splines"), suite.text, nullptr, OtherRuns::Append);
  CHECK(ids_of(unexpanded.runs) == std::vector<std::string>{"aa-foreign", "id0", "id2", "zz-foreign"});
}

TEST_CASE("RunFileCache: a file read once is taken from the cache while unchanged, and read again once replaced",
          "[results][assemble]") {
  TempDir dir;
  const std::string runs = dir.file("runs");
  std::filesystem::create_directories(runs);
  write_run_file(runs + "/a.h5", tiny_run("id0", 0), "name: s\n", nullptr);
  write_run_file(runs + "/b.h5", tiny_run("id1", 1), "name: s\n", nullptr);
  RunFileCache cache;
  CHECK(cache.read(runs + "/a.h5").result.seed == 0);
  // Replaced as a run file is (a new file renamed over it): the new content, through the cache
  // and through read_run_files with it.
  RunResult changed = tiny_run("id0", 5);
  changed.status = "diverged";
  write_run_file(runs + "/a.h5", changed, "name: s2\n", nullptr);
  const RunFile again = cache.read(runs + "/a.h5");
  CHECK(again.result.seed == 5);
  CHECK(again.result.status == "diverged");
  CHECK(again.suite_yaml == "name: s2\n");
  const RunFiles found = read_run_files(runs, &cache);
  REQUIRE(found.files.size() == 2);
  CHECK(found.files[0].result.seed == 5);
  CHECK(found.files[1].result.seed == 1);
  // A file that is gone is an error naming it, as without the cache.
  std::filesystem::remove(runs + "/b.h5");
  CHECK_THROWS_WITH(cache.read(runs + "/b.h5"), Catch::Contains(runs + "/b.h5"));
}
