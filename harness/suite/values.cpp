#include "harness/suite/values.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/suggest.hpp"
#include "tasks/params.hpp"

namespace srbench::harness::suite {

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

std::string format_double(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

int64_t as_int(const YAML::Node& n) {
  if (!n.IsScalar()) throw FieldError{"expected an integer, got " + describe(n)};
  const std::string& s = n.Scalar();
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || *end != '\0') throw FieldError{"expected an integer, got '" + s + "'"};
  return v;
}

double as_real(const YAML::Node& n) {
  if (!n.IsScalar()) throw FieldError{"expected a number, got " + describe(n)};
  const std::string& s = n.Scalar();
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || *end != '\0' || !std::isfinite(v))
    throw FieldError{"expected a number, got '" + s + "'"};
  return v;
}

bool as_bool(const YAML::Node& n) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "yes") return true;
    if (s == "false" || s == "False" || s == "no") return false;
  }
  throw FieldError{"expected true or false, got " + describe(n)};
}

std::string as_string(const YAML::Node& n) {
  if (!n.IsScalar()) throw FieldError{"expected a string, got " + describe(n)};
  return n.Scalar();
}

std::string param_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) {
    std::string s = "[";
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsScalar()) throw FieldError{"expected a scalar or a list of scalars"};
      s += (i ? ", " : "") + n[i].Scalar();
    }
    return s + "]";
  }
  throw FieldError{"expected a scalar or a list, got " + describe(n)};
}

int64_t positive(int64_t v) {
  if (v < 1) throw FieldError{std::to_string(v) + " must be at least 1"};
  return v;
}
int64_t non_negative(int64_t v) {
  if (v < 0) throw FieldError{std::to_string(v) + " must not be negative"};
  return v;
}
double positive_real(double v) {
  if (!(v > 0)) throw FieldError{format_double(v) + " must be above 0"};
  return v;
}
double non_negative_real(double v) {
  if (v < 0) throw FieldError{format_double(v) + " must not be negative"};
  return v;
}

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

std::string strip_prefix(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
}

std::string unknown_key_message(const std::string& key, const std::vector<std::string>& valid, const std::string& what,
                                const std::string& in) {
  std::string msg = "unknown " + what + " '" + key + "'" + in;
  const std::string near = closest_name(key, valid);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  msg += "; valid keys:";
  for (size_t i = 0; i < valid.size(); ++i) msg += (i ? ", " : " ") + valid[i];
  return msg;
}

void Reader::check_map(const YAML::Node& n, const std::string& path, const std::vector<std::string>& allowed) const {
  if (!n.IsMap()) fail(n, path, "expected a map, got " + describe(n));
  for (const auto& kv : n) {
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(kv.first, join(path, key), unknown_key_message(key, allowed));
  }
}

std::string Reader::file_name(const YAML::Node& n, const std::string& path, const std::string& extra) const {
  std::string name;
  try {
    name = as_string(n);
  } catch (const FieldError& e) {
    fail(n, path, e.message);
  }
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!ok) fail(n, path, "'" + name + "' must be non-empty letters, digits, '-', '_' or '.'" + extra);
  return name;
}

}  // namespace srbench::harness::suite
