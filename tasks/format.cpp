#include "tasks/format.hpp"

#include <algorithm>
#include <cstdio>

namespace srbench::tasks {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string example_jsonl(const Task& task, int n, const Example& ex) {
  const Vocab& v = task.vocab();
  std::string out = "{\"task\": " + json_quote(task.name()) + ", \"n\": " + std::to_string(n) + ", \"tokens\": [";
  for (size_t t = 0; t < ex.tokens.size(); ++t) out += (t ? "," : "") + json_quote(v.name(ex.tokens[t]));
  out += "], \"targets\": [";
  for (size_t t = 0; t < ex.targets.size(); ++t) {
    if (t) out += ",";
    out += ex.targets[t] == kNotScored ? "null" : json_quote(v.name(ex.targets[t]));
  }
  return out + "], \"input_length\": " + std::to_string(ex.input_length) + "}";
}

std::string example_text(const Task& task, const Example& ex, size_t width) {
  const Vocab& v = task.vocab();
  const std::string tokens_label = "  tokens   ", targets_label = "  targets  ";
  std::string out, top = tokens_label, bottom = targets_label;
  size_t top_cols = top.size(), bottom_cols = bottom.size();  // display columns ("·" is one)
  auto flush = [&] {
    auto rstrip = [](std::string s) { return s.erase(s.find_last_not_of(' ') + 1); };
    out += rstrip(top) + "\n" + rstrip(bottom) + "\n";
    top = tokens_label, bottom = targets_label;
    top_cols = top.size(), bottom_cols = bottom.size();
  };
  for (size_t t = 0; t < ex.tokens.size(); ++t) {
    const std::string a = v.name(ex.tokens[t]);
    const bool scored = ex.targets[t] != kNotScored;
    const std::string b = scored ? v.name(ex.targets[t]) : "\u00b7";
    const size_t cell = std::max(a.size(), scored ? b.size() : size_t{1});
    if (top_cols + cell > width && top_cols > tokens_label.size()) flush();
    top += a + std::string(cell - a.size() + 1, ' ');
    bottom += b + std::string(cell - (scored ? b.size() : 1) + 1, ' ');
    top_cols += cell + 1, bottom_cols += cell + 1;
  }
  flush();
  return out;
}

}  // namespace srbench::tasks
