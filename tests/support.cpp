#include "tests/support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace srbench::test {

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "srbench-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

RunResult run_srbench(const std::vector<std::string>& args) {
  TempDir dir;
  std::string cmd = shell_quote(SRBENCH_BIN);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(dir.file("out")) + " 2>" + shell_quote(dir.file("err")) + " </dev/null";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, read_file(dir.file("out")), read_file(dir.file("err"))};
}

}  // namespace srbench::test
