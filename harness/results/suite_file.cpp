// The suite file: /summary (one compound row per run, summary_columns), the runs' groups copied
// from their files, the searches' groups, and the transfer matrix.
#include <algorithm>
#include <ctime>
#include <functional>
#include <set>
#include <type_traits>

#include "harness/core/metric_fields.hpp"
#include "harness/results/groups.hpp"
#include "harness/results/results.hpp"

namespace srbench::harness {

using namespace results;
using h5::Id;

namespace {

// The /summary table: one column per SummaryRow field.
struct SummaryColumn {
  h5::Column column;
  std::function<h5::Cell(const SummaryRow&)> get;
  std::function<void(SummaryRow&, const h5::Cell&)> set;
};

template <typename T, typename Get>
SummaryColumn column(const std::string& name, h5::ColumnType type, Get get, bool optional = false) {
  const SummaryRow defaults;
  return {{name, type, optional, h5::Cell(T(get(defaults)))},  // missing: the field's default
          [=](const SummaryRow& r) { return h5::Cell(T(get(r))); },
          [=](SummaryRow& r, const h5::Cell& c) { get(r) = std::get<T>(c); }};
}
template <typename Get>
SummaryColumn text(const std::string& name, Get get) {
  return column<std::string>(name, h5::ColumnType::String, get);
}
template <typename Get>
SummaryColumn integer(const std::string& name, Get get, bool optional = false) {
  return column<int64_t>(name, h5::ColumnType::Int64, get, optional);
}
template <typename Get>
SummaryColumn real(const std::string& name, Get get, bool optional = false) {
  return column<double>(name, h5::ColumnType::Double, get, optional);
}

// The column of a metric (metric_fields()); an optional one reads as its default from older files.
SummaryColumn metric_column(const MetricField& f) {
  return std::visit(
      [&](auto member) {
        auto get = [member](auto& r) -> auto& { return r.metrics.*member; };
        if constexpr (std::is_same_v<decltype(member), int64_t RunMetrics::*>) return integer(f.name, get, f.optional);
        else return real(f.name, get, f.optional);
      },
      f.member);
}

// The metrics the first suite files had (metric_fields() with optional false), or those added later.
void add_metric_columns(std::vector<SummaryColumn>& t, bool added_later) {
  for (const auto& f : metric_fields())
    if (f.optional == added_later) t.push_back(metric_column(f));
}

// run_id … status, the first files' metrics, wall_s, tokens_per_s, then the metrics added later.
const std::vector<SummaryColumn>& summary_table() {
  static const std::vector<SummaryColumn> t = [] {
    std::vector<SummaryColumn> t = {
        text("run_id", [](auto& r) -> auto& { return r.run_id; }),
        text("task", [](auto& r) -> auto& { return r.task; }),
        text("entry", [](auto& r) -> auto& { return r.entry; }),
        text("model", [](auto& r) -> auto& { return r.model; }),
        integer("seed", [](auto& r) -> auto& { return r.seed; }),
        text("grid", [](auto& r) -> auto& { return r.grid; }),
        text("status", [](auto& r) -> auto& { return r.status; }),
    };
    add_metric_columns(t, false);
    t.push_back(real("wall_s", [](auto& r) -> auto& { return r.wall_s; }));
    t.push_back(real("tokens_per_s", [](auto& r) -> auto& { return r.tokens_per_s; }));
    add_metric_columns(t, true);
    return t;
  }();
  return t;
}

void write_summary(hid_t file, const std::vector<SummaryRow>& rows) {
  std::vector<h5::TableRow> cells;
  for (const auto& r : rows) {
    h5::TableRow row;
    for (const auto& c : summary_table()) row.push_back(c.get(r));
    cells.push_back(std::move(row));
  }
  h5::write_table(file, "summary", summary_columns(), cells);
}

std::vector<SummaryRow> read_summary(hid_t file) {
  std::vector<SummaryRow> rows;
  for (const auto& cells : h5::read_table(file, "summary", summary_columns())) {
    SummaryRow r;
    for (size_t i = 0; i < cells.size(); ++i) summary_table()[i].set(r, cells[i]);
    rows.push_back(std::move(r));
  }
  return rows;
}

void write_transfer(hid_t file, const TransferMatrix& transfer) {
  if (transfer.empty()) return;
  Id g = h5::create_group(file, "transfer");
  h5::write_strings(g, "searched_on", transfer.searched_on);
  h5::write_strings(g, "trained_on", transfer.trained_on);
  const auto R = static_cast<int64_t>(transfer.searched_on.size()), C = static_cast<int64_t>(transfer.trained_on.size());
  h5::write_array(g, "id_acc_delta", transfer.id_acc_delta.data(), {R, C});
  h5::write_array(g, "steps_ratio", transfer.steps_ratio.data(), {R, C});
  h5::write_array(g, "id_acc_delta_lo", transfer.id_acc_delta_lo.data(), {R, C});
  h5::write_array(g, "id_acc_delta_hi", transfer.id_acc_delta_hi.data(), {R, C});
  h5::write_array(g, "paired", transfer.paired.data(), {R, C});
}

}  // namespace

std::vector<h5::Column> summary_columns() {
  std::vector<h5::Column> out;
  for (const auto& c : summary_table()) out.push_back(c.column);
  return out;
}

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

SummaryRow summary_row(const RunResult& r) {
  return {r.run_id, r.task, r.entry, r.model, static_cast<int64_t>(r.seed), r.grid, r.status, r.metrics, r.wall_s,
          r.tokens_per_s};
}

void write_suite_file(const std::string& out_path, const std::string& suite_yaml, const std::vector<RunFile>& runs,
                      const std::vector<std::string>& splines_file_paths, const TransferMatrix& transfer) {
  // Check everything first: a damaged splines file or a duplicate stops us before anything is written.
  std::vector<SummaryRow> rows;
  std::set<std::string> seen;
  for (const auto& f : runs) {
    rows.push_back(summary_row(f.result));
    if (!seen.insert(rows.back().run_id).second)
      throw ResultsError("run file " + f.path + ": run " + rows.back().run_id + " is given twice");
  }
  std::vector<std::string> search_names;
  for (const auto& path : splines_file_paths) {
    search_names.push_back(read_splines_file(path).name);
    if (search_names.back().empty()) throw ResultsError("splines file " + path + ": /splines has no attribute 'name'");
    if (std::count(search_names.begin(), search_names.end(), search_names.back()) > 1)
      throw ResultsError("splines file " + path + ": search " + search_names.back() + " is given twice");
  }
  h5::write_file_atomically(out_path, [&](hid_t file) {
    write_root_attributes(file, suite_yaml);
    write_summary(file, rows);
    Id group = h5::create_group(file, "runs");
    for (size_t i = 0; i < runs.size(); ++i)
      h5::copy(open_results_file(runs[i].path, "run file"), "/runs/" + rows[i].run_id, group, rows[i].run_id);
    if (!splines_file_paths.empty()) {
      Id splines = h5::create_group(file, "splines");
      for (size_t i = 0; i < splines_file_paths.size(); ++i)
        h5::copy(open_results_file(splines_file_paths[i], "splines file"), "/splines", splines, search_names[i]);
    }
    write_transfer(file, transfer);
  }, h5::Checksum::Yes);
}

SuiteFile read_suite_file(const std::string& path) {
  Id file = open_results_file(path, "suite file");
  SuiteFile s;
  if (!h5::has_link(file, "summary") || !h5::has_link(file, "runs"))
    throw ResultsError("suite file " + path + ": not an srbench suite file (it lacks /summary or /runs; a run file "
                       "from <dir>/<suite>/runs/ is joined into one by `srbench merge`)");
  check_format_version(file);
  s.format_version = kResultsFormatVersion;
  s.suite_yaml = h5::read_string_attr(file, "suite");
  s.srbench_version = h5::read_string_attr(file, "srbench_version");
  if (h5::has_attr(file, "srbench_commit")) s.srbench_commit = h5::read_string_attr(file, "srbench_commit");
  s.created = h5::read_string_attr(file, "created");
  s.summary = read_summary(file);
  for (const auto& row : s.summary) s.runs.push_back(read_run_group(file, row.run_id));
  if (h5::has_link(file, "splines")) {
    Id splines = h5::open_group(file, "splines");
    for (const auto& name : h5::link_names(splines))
      s.searches.push_back(read_search_group(h5::open_group(splines, name), "suite file " + path + ": /splines/" + name));
  }
  return s;
}

}  // namespace srbench::harness
