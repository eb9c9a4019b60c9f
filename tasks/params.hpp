// Task parameters: a schema per task, raw key=value text from the command line or a suite, and a
// reader that checks every key against the schema and parses typed values with clear errors.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace srbench::tasks {

// Bad task input: names the task and, where there is one, the parameter.
class TaskError : public std::runtime_error {
 public:
  TaskError(std::string task, std::string param, const std::string& message)
      : std::runtime_error(format(task, param, message)),
        task_(std::move(task)),
        param_(std::move(param)) {}
  const std::string& task() const { return task_; }
  const std::string& param() const { return param_; }  // empty when not about one parameter

 private:
  static std::string format(const std::string& task, const std::string& param, const std::string& msg) {
    std::string s = "task '" + task + "'";
    if (!param.empty()) s += ": parameter '" + param + "'";
    return s + ": " + msg;
  }
  std::string task_, param_;
};

enum class ParamType { Int, Real, Bool, String, Choice, IntList, RealList };
const char* param_type_name(ParamType t);

struct ParamSpec {
  std::string name;
  ParamType type;
  std::string default_text;  // shown by `srbench tasks`; empty = required
  std::string help;
  std::vector<std::string> choices = {};  // for Choice
};

// Raw parameters: name -> value text. Lists are written "[1, 2, 3]" or "1,2,3".
using RawParams = std::map<std::string, std::string>;

// Reads the parameters of one task. Construction rejects unknown keys (suggesting the nearest
// valid one); each getter parses the value (or its default) and throws TaskError on bad text.
class ParamReader {
 public:
  ParamReader(std::string task, const std::vector<ParamSpec>& specs, const RawParams& raw);

  bool is_set(const std::string& name) const { return raw_.count(name) != 0; }
  int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  bool boolean(const std::string& name) const;
  std::string string(const std::string& name) const;  // String or Choice
  std::vector<int64_t> int_list(const std::string& name) const;
  std::vector<double> real_list(const std::string& name) const;
  // Text of the value as given, or the default (what the task was built with).
  std::string text(const std::string& name) const;

  // Range checks that throw TaskError naming the parameter.
  double probability(const std::string& name) const;  // real in [0, 1]
  int64_t integer_in(const std::string& name, int64_t lo, int64_t hi) const;

  [[noreturn]] void fail(const std::string& name, const std::string& message) const;
  const std::string& task() const { return task_; }

 private:
  const ParamSpec& spec(const std::string& name) const;
  std::string task_;
  const std::vector<ParamSpec>& specs_;
  RawParams raw_;
};

// Parses "[a, b]" / "a,b" into trimmed items ("[]" and "" give none).
std::vector<std::string> split_list(const std::string& text);

}  // namespace srbench::tasks
