#include "harness/results/assemble.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace srbench::harness {

std::vector<std::string> results_files_in(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.find(".tmp") != std::string::npos) continue;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".h5") == 0) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

RunFile RunFileCache::read(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return read_run_file_at(path);  // its error names the file
  const auto mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  const auto it = entries_.find(path);
  if (it != entries_.end() && it->second.dev == st.st_dev && it->second.ino == st.st_ino &&
      it->second.size == st.st_size && it->second.mtime_ns == mtime)
    return it->second.file;
  Entry e{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_size), mtime,
          read_run_file_at(path)};
  RunFile f = e.file;
  entries_[path] = std::move(e);
  return f;
}

RunFiles read_run_files(const std::string& runs_dir, RunFileCache* cache) {
  RunFiles out;
  const auto paths = results_files_in(runs_dir);
  out.found = paths.size();
  std::set<std::string> seen;
  for (const auto& path : paths) {
    try {
      RunFile f = cache ? cache->read(path) : read_run_file_at(path);
      if (!seen.insert(f.result.run_id).second) {
        out.warnings.push_back("skipping " + path + ": run " + f.result.run_id + " is already in another file");
        continue;
      }
      out.files.push_back(std::move(f));
    } catch (const std::exception& e) {
      out.warnings.push_back("skipping " + path + ": " + e.what());
    }
  }
  return out;
}

std::string common_suite_text(const std::vector<RunFile>& runs) {
  std::map<std::string, int> count;
  for (const auto& r : runs) ++count[r.suite_yaml];
  std::string best = runs.front().suite_yaml;
  for (const auto& r : runs)
    if (count[r.suite_yaml] > count[best]) best = r.suite_yaml;
  return best;
}

std::vector<RunResult> SuiteContents::results() const {
  std::vector<RunResult> out;
  for (const auto& f : runs) out.push_back(f.result);
  return out;
}

namespace {

// The rows: the suite's runs by index, then the others by run id (or none of them).
std::vector<RunFile> order_runs(std::vector<RunFile> files, const Suite* suite, OtherRuns other) {
  std::map<std::string, size_t> index_of;
  if (suite)
    for (const auto& s : suite->runs) index_of.emplace(s.id, s.index);
  const auto listed = [&](const RunFile& f) { return index_of.count(f.result.run_id) > 0; };
  if (suite && other == OtherRuns::Leave)
    files.erase(std::remove_if(files.begin(), files.end(), [&](const RunFile& f) { return !listed(f); }), files.end());
  std::stable_sort(files.begin(), files.end(), [&](const RunFile& a, const RunFile& b) {
    const bool ka = listed(a), kb = listed(b);
    if (ka != kb) return ka;
    if (ka) return index_of.at(a.result.run_id) < index_of.at(b.result.run_id);
    return a.result.run_id < b.result.run_id;
  });
  return files;
}

// The splines files that count, and a warning for each one left out. Two files of one search both
// count, so that writing the suite file fails naming them, as `srbench merge` always has.
void take_splines_files(const std::string& splines_dir, const Suite* suite, SuiteContents& c) {
  for (const auto& path : results_files_in(splines_dir)) {
    try {
      const SplinesFile f = read_splines_file(path);
      const bool belongs = !suite || std::any_of(suite->searches.begin(), suite->searches.end(), [&](const SearchSpec& sp) {
        return sp.name == f.name && sp.resolved_yaml == f.config;
      });
      if (!belongs) c.warnings.push_back("skipping " + path + ": not a search of the stored suite");
      else c.splines.push_back(path);  // a search in two files: write_suite_file refuses it ("given twice")
    } catch (const std::exception& e) {
      c.warnings.push_back("skipping " + path + ": " + e.what());
    }
  }
}

}  // namespace

SuiteContents assemble_suite(RunFiles runs, const std::string& splines_dir, const std::string& suite_yaml,
                             const Suite* suite, OtherRuns other) {
  SuiteContents c;
  c.suite_yaml = suite_yaml;
  c.runs = order_runs(std::move(runs.files), suite, other);
  take_splines_files(splines_dir, suite, c);
  return c;
}

void write_suite_file(const std::string& out_path, const SuiteContents& contents, const TransferMatrix& transfer) {
  write_suite_file(out_path, contents.suite_yaml, contents.runs, contents.splines, transfer);
}

}  // namespace srbench::harness
