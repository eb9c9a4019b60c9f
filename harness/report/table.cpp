#include "harness/report/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace srbench::harness {

std::optional<ReportFormat> parse_report_format(const std::string& text) {
  if (text == "table") return ReportFormat::table;
  if (text == "markdown") return ReportFormat::markdown;
  if (text == "csv") return ReportFormat::csv;
  if (text == "latex") return ReportFormat::latex;
  return std::nullopt;
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string exact(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string stats_text(const SeedStats& s, int decimals, const char* pm) {
  if (s.n == 0) return "-";
  std::string t = fixed(s.mean, decimals) + pm + fixed(s.std, decimals) + " [" + fixed(s.min, decimals) + ", " +
                  fixed(s.median, decimals) + ", " + fixed(s.max, decimals) + "]";
  if (!std::isnan(s.ci_lo)) t += " CI [" + fixed(s.ci_lo, decimals) + ", " + fixed(s.ci_hi, decimals) + "]";
  return t;
}

std::vector<std::string> stats_cells(const SeedStats& s) {
  return {std::to_string(s.n), exact(s.mean), exact(s.std), exact(s.min), exact(s.median), exact(s.max),
          exact(s.ci_lo), exact(s.ci_hi)};
}

size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}
std::string pad_right(const std::string& s, size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); }
std::string pad_left(const std::string& s, size_t w) { return std::string(w > width(s) ? w - width(s) : 0, ' ') + s; }

std::string heading(const std::string& title, ReportFormat format, int level) {
  if (title.empty() || format == ReportFormat::csv) return "";
  if (format == ReportFormat::table || format == ReportFormat::latex) return title + "\n\n";
  const auto nl = title.find('\n');
  return std::string(static_cast<size_t>(level), '#') + " " + title.substr(0, nl) + "\n\n" +
         (nl == std::string::npos ? "" : title.substr(nl + 1) + "\n\n");
}

namespace {

std::string trimmed(const std::string& line) { return line.substr(0, line.find_last_not_of(' ') + 1); }

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out.empty() ? " " : out;
}

void md_row(std::ostream& os, const std::vector<std::string>& cells) {
  os << "|";
  for (const auto& c : cells) os << " " << md_cell(c) << " |";
  os << "\n";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A cell as LaTeX text: the special characters escaped, the project's symbols as commands.
std::string latex_cell(const std::string& s) {
  static const std::vector<std::pair<std::string, std::string>> symbols = {
      {"±", "$\\pm$"}, {"·", "$\\cdot$"}, {"−", "$-$"}, {"≥", "$\\geq$"}, {"≤", "$\\leq$"},
      {"–", "--"}, {"×", "$\\times$"}, {"²", "$^2$"}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool replaced = false;
    for (const auto& [from, to] : symbols)
      if (s.compare(i, from.size(), from) == 0) {
        out += to, i += from.size(), replaced = true;
        break;
      }
    if (replaced) continue;
    const char c = s[i++];
    switch (c) {
      case '\\': out += "\\textbackslash{}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': out += std::string("\\") + c; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_latex(const Table& t, size_t label_cols) {
  std::ostringstream os;
  os << "\\begin{tabular}{";
  for (size_t i = 0; i < t.head.size(); ++i) os << (i < label_cols ? 'l' : 'r');
  os << "}\n\\toprule\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) os << (i ? " & " : "") << latex_cell(cells[i]);
    os << " \\\\\n";
  };
  line(t.head);
  os << "\\midrule\n";
  for (const auto& r : t.rows) line(r);
  os << "\\bottomrule\n\\end{tabular}\n";
  return os.str();
}

std::string render_text(const Table& t, size_t label_cols, bool trim) {
  std::vector<size_t> w(t.head.size(), 0);
  for (size_t i = 0; i < t.head.size(); ++i) w[i] = width(t.head[i]);
  for (const auto& r : t.rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  std::ostringstream os;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i)
      out += (i ? "  " : "") + (i < label_cols ? pad_right(cells[i], w[i]) : pad_left(cells[i], w[i]));
    os << (trim ? trimmed(out) : out) << "\n";
  };
  line(t.head);
  for (const auto& r : t.rows) line(r);
  return os.str();
}

std::string render_markdown(const Table& t) {
  std::ostringstream os;
  md_row(os, t.head);
  os << "|";
  for (size_t i = 0; i < t.head.size(); ++i) os << "---|";
  os << "\n";
  for (const auto& r : t.rows) md_row(os, r);
  return os.str();
}

std::string render_csv(const Table& t) {
  std::ostringstream os;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) os << (i ? "," : "") << csv_field(cells[i]);
    os << "\n";
  };
  line(t.head);
  for (const auto& r : t.rows) line(r);
  return os.str();
}

std::string render_chunked(const Table& t, size_t label_width, size_t col_width) {
  size_t label_w = label_width;
  for (const auto& r : t.rows) label_w = std::max(label_w, width(r.front()) + 2);
  const size_t values = t.head.size() - 1;
  const size_t per_chunk = std::max<size_t>(1, (100 - 2 - label_w) / col_width);
  std::ostringstream os;
  for (size_t start = 0; start < values; start += per_chunk) {
    const size_t end = std::min(values, start + per_chunk);
    auto line = [&](const std::vector<std::string>& cells) {
      std::string out = "  " + pad_right(cells.front(), label_w);
      for (size_t i = start; i < end; ++i) out += pad_left(cells[i + 1], col_width);
      os << trimmed(out) << "\n";
    };
    line(t.head);
    for (const auto& r : t.rows) line(r);
  }
  return os.str();
}

std::string render(const Table& t, ReportFormat format, size_t label_cols, bool trim) {
  switch (format) {
    case ReportFormat::table: return render_text(t, label_cols, trim);
    case ReportFormat::markdown: return render_markdown(t);
    case ReportFormat::csv: return render_csv(t);
    case ReportFormat::latex: return render_latex(t, label_cols);
  }
  return {};
}

}  // namespace srbench::harness
