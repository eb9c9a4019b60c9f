// The report's one table model: a header and rows of text cells, rendered as an aligned text
// table, a markdown table, csv or a LaTeX tabular — and the number formats every report uses. The report kinds
// (report.cpp) build tables; only this file knows how each format looks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/report/stats.hpp"

namespace srbench::harness {

enum class ReportFormat { table, markdown, csv, latex };
std::optional<ReportFormat> parse_report_format(const std::string& text);

struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
};

// A report's title (one or more lines): the text form (and LaTeX, whose lines outside the tabular
// become comments: paper.hpp) prints it and a blank line; markdown makes the first line a heading
// (`level` #s) and the rest a paragraph; csv has no title.
std::string heading(const std::string& title, ReportFormat format, int level = 2);

// Aligned text: the first `label_cols` columns left-aligned, the rest right-aligned, two spaces
// apart; with `trim`, each line's trailing spaces are cut.
std::string render_text(const Table& t, size_t label_cols, bool trim = true);
std::string render_markdown(const Table& t);
std::string render_csv(const Table& t);
// A booktabs tabular (\usepackage{booktabs}): the first `label_cols` columns l, the rest r;
// LaTeX's special characters escaped, and ±, ·, −, ≥, ≤, –, ×, ² as math or text commands.
std::string render_latex(const Table& t, size_t label_cols);
// A matrix — column 0 the row labels (its header the corner), the rest values — as text in
// chunks of columns that fit 100 characters, each chunk repeating the label column: labels
// left-aligned at least `label_width` wide (and 2 wider than the longest), values right-aligned
// `col_width` wide, every line indented by two spaces.
std::string render_chunked(const Table& t, size_t label_width, size_t col_width);
// One format's rendering of a table: text (render_text), markdown, csv or LaTeX.
std::string render(const Table& t, ReportFormat format, size_t label_cols, bool trim = true);

// ---- numbers and cells ----------------------------------------------------------------------

std::string fixed(double v, int decimals);  // fixed decimals; NaN as "-"
std::string exact(double v);                // round-trips (csv); NaN as "nan", which pandas reads as NaN
// "0.983±0.012 [0.950, 0.983, 1.000] CI [0.960, 1.000]" — mean±std [min, median, max] and the
// 95% bootstrap interval of the mean (left out for one seed); "-" without values.
std::string stats_text(const SeedStats& s, int decimals, const char* pm = "±");
// n, mean, std, min, median, max, ci_lo, ci_hi as csv cells.
std::vector<std::string> stats_cells(const SeedStats& s);
inline const std::vector<std::string> kStatsColumns = {"n", "mean", "std", "min", "median", "max", "ci_lo", "ci_hi"};

// Display width of UTF-8 text (code points; "±" and "·" count as one), and padding to a width.
size_t width(const std::string& s);
std::string pad_right(const std::string& s, size_t w);
std::string pad_left(const std::string& s, size_t w);

}  // namespace srbench::harness
