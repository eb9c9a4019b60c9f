#include "tasks/params.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/suggest.hpp"

namespace srbench::tasks {

const char* param_type_name(ParamType t) {
  switch (t) {
    case ParamType::Int: return "integer";
    case ParamType::Real: return "number";
    case ParamType::Bool: return "boolean";
    case ParamType::String: return "string";
    case ParamType::Choice: return "choice";
    case ParamType::IntList: return "list of integers";
    case ParamType::RealList: return "list of numbers";
  }
  return "?";
}

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool parse_int(const std::string& text, int64_t& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

bool parse_real(const std::string& text, double& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text) {
  std::string t = trim(text);
  if (!t.empty() && t.front() == '[') {
    if (t.back() != ']') return {"["};  // unbalanced: reported by the caller as unparsable
    t = t.substr(1, t.size() - 2);
  }
  std::vector<std::string> items;
  if (trim(t).empty()) return items;
  size_t start = 0;
  while (true) {
    const size_t comma = t.find(',', start);
    items.push_back(trim(t.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

ParamReader::ParamReader(std::string task, const std::vector<ParamSpec>& specs, const RawParams& raw)
    : task_(std::move(task)), specs_(specs), raw_(raw) {
  std::vector<std::string> names;
  for (const auto& s : specs_) names.push_back(s.name);
  for (const auto& [key, value] : raw_) {
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    std::string msg = "unknown parameter";
    const std::string near = closest_name(key, names);
    if (!near.empty()) msg += " (did you mean '" + near + "'?)";
    if (names.empty())
      msg += "; this task takes no parameters";
    else {
      msg += "; valid parameters:";
      for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : " ") + names[i];
    }
    throw TaskError(task_, key, msg);
  }
  for (const auto& s : specs_) {
    if (s.default_text.empty() && !raw_.count(s.name)) throw TaskError(task_, s.name, "is required");
    if (s.type == ParamType::Choice) string(s.name);  // validate early
  }
}

const ParamSpec& ParamReader::spec(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return s;
  throw std::logic_error("task '" + task_ + "' reads undeclared parameter '" + name + "'");
}

std::string ParamReader::text(const std::string& name) const {
  const auto it = raw_.find(name);
  return it != raw_.end() ? it->second : spec(name).default_text;
}

void ParamReader::fail(const std::string& name, const std::string& message) const {
  throw TaskError(task_, name, message);
}

int64_t ParamReader::integer(const std::string& name) const {
  int64_t v;
  if (!parse_int(text(name), v)) fail(name, "expected an integer, got '" + text(name) + "'");
  return v;
}

double ParamReader::real(const std::string& name) const {
  double v;
  if (!parse_real(text(name), v)) fail(name, "expected a number, got '" + text(name) + "'");
  return v;
}

bool ParamReader::boolean(const std::string& name) const {
  const std::string t = trim(text(name));
  if (t == "true" || t == "True" || t == "1" || t == "yes") return true;
  if (t == "false" || t == "False" || t == "0" || t == "no") return false;
  fail(name, "expected true or false, got '" + t + "'");
}

std::string ParamReader::string(const std::string& name) const {
  const ParamSpec& s = spec(name);
  const std::string t = trim(text(name));
  if (s.type == ParamType::Choice &&
      std::find(s.choices.begin(), s.choices.end(), t) == s.choices.end()) {
    std::string msg = "'" + t + "' is not one of";
    for (size_t i = 0; i < s.choices.size(); ++i) msg += (i ? ", " : " ") + s.choices[i];
    fail(name, msg);
  }
  return t;
}

std::vector<int64_t> ParamReader::int_list(const std::string& name) const {
  std::vector<int64_t> out;
  for (const auto& item : split_list(text(name))) {
    int64_t v;
    if (!parse_int(item, v)) fail(name, "expected a list of integers, got '" + text(name) + "'");
    out.push_back(v);
  }
  return out;
}

std::vector<double> ParamReader::real_list(const std::string& name) const {
  std::vector<double> out;
  for (const auto& item : split_list(text(name))) {
    double v;
    if (!parse_real(item, v)) fail(name, "expected a list of numbers, got '" + text(name) + "'");
    out.push_back(v);
  }
  return out;
}

double ParamReader::probability(const std::string& name) const {
  const double p = real(name);
  if (p < 0.0 || p > 1.0) fail(name, text(name) + " is outside [0, 1]");
  return p;
}

int64_t ParamReader::integer_in(const std::string& name, int64_t lo, int64_t hi) const {
  const int64_t v = integer(name);
  if (v < lo || v > hi)
    fail(name, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

}  // namespace srbench::tasks
