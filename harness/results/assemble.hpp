// The suite file's contents, assembled from a suite folder's run files and splines files: one
// rule for the sweep's last step and for `srbench merge`.
//   - Run files: every `*.h5` of the runs folder, by file name (temporary `*.tmp*` files of runs
//     being written are left out). One that does not open cleanly is skipped with a warning; a
//     run id in two files keeps the first file, the other is skipped with a warning.
//   - Rows: the suite's runs, by their index in it; then the runs it does not list (written from
//     another suite text), by run id — appended (merge) or left out (the sweep, whose suite file
//     holds its own suite's runs). Without a suite (a stored text that does not expand): every
//     run, by run id.
//   - Splines files: every `*.h5` of the splines folder, by file name, that opens and holds one
//     of the suite's searches (its name and resolved config; without a suite, every one that
//     opens); the others are skipped with a warning. A search in two files makes the suite file
//     fail to write ("given twice"), as `srbench merge` always has.
//
//   RunFiles found = read_run_files(runs_dir);            // print found.warnings
//   SuiteContents c = assemble_suite(std::move(found), splines_dir, suite.text, &suite, OtherRuns::Leave);
//   write_suite_file(out, c, compute_transfer(c.results()));
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/core/specs.hpp"
#include "harness/results/results.hpp"

namespace srbench::harness {

// The results files (`*.h5`, not `*.tmp*`) directly in `dir`, sorted by path; none if `dir` is
// not a folder.
std::vector<std::string> results_files_in(const std::string& dir);

// The run files of a runs folder that open cleanly, a run id once, in file-name order.
struct RunFiles {
  size_t found = 0;                   // results files in the folder, read or not
  std::vector<RunFile> files;
  std::vector<std::string> warnings;  // "skipping PATH: why", one per file left out
};
// The run files read so far, each with the identity of the file it came from (device, inode,
// size, modification time): a path is read again only when its file changed (a run file is
// replaced by a rename, never written in place). A sweep reads each run's file as the run ends,
// to report it; the suite file at the end then takes the same reads from here.
class RunFileCache {
 public:
  RunFile read(const std::string& path);  // as read_run_file_at

 private:
  struct Entry {
    uint64_t dev = 0, ino = 0;
    int64_t size = 0, mtime_ns = 0;
    RunFile file;
  };
  std::map<std::string, Entry> entries_;
};

// `cache` (may be null): files read before and unchanged since are taken from it.
RunFiles read_run_files(const std::string& runs_dir, RunFileCache* cache = nullptr);

// The suite text most run files carry (ties: the first file's). `runs` is not empty.
std::string common_suite_text(const std::vector<RunFile>& runs);

enum class OtherRuns { Append, Leave };  // runs the suite does not list

struct SuiteContents {
  std::string suite_yaml;
  std::vector<RunFile> runs;          // the rows, in order
  std::vector<std::string> splines;   // the splines files that count, by file name
  std::vector<std::string> warnings;  // "skipping PATH: why", one per splines file left out
  std::vector<RunResult> results() const;
};

// The suite file's contents by the rules above; `suite` (may be null: no expanded suite) gives
// the runs' order and the searches whose splines files count.
SuiteContents assemble_suite(RunFiles runs, const std::string& splines_dir, const std::string& suite_yaml,
                             const Suite* suite, OtherRuns other);

// Writes the assembled suite file (write_suite_file) with its transfer matrix.
void write_suite_file(const std::string& out_path, const SuiteContents& contents, const TransferMatrix& transfer);

}  // namespace srbench::harness
