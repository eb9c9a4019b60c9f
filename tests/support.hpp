// Helpers for tests: run the srbench binary and capture what it prints.
#pragma once

#include <string>
#include <vector>

namespace srbench::test {

struct RunResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `srbench ARGS...` (each argument shell-quoted) and waits for it.
RunResult run_srbench(const std::vector<std::string>& args);

// A fresh empty folder under the system's temporary directory, removed at exit of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& content);

}  // namespace srbench::test
