// The per-run metrics (RunMetrics, records.hpp) as one table: each metric's name (in a run
// group's attributes, the suite file's /summary columns, the report and Python), its member,
// whether files written before it lack it, whether the report summarises it over seeds, and
// what it is. The run attributes, the /summary columns, the report's metric list, the tests'
// comparators and srbench.Results' columns are loops over it, so adding a metric is its member,
// one row here, its derivation (harness/run/metrics.cpp) and its test (docs/architecture.md,
// "Add a metric").
//
// Order: the report's. On disk the metrics the first files had (optional false) come first, in
// this order, and those added later after them (in /summary after wall_s and tokens_per_s, in a
// run group's attributes last), so a new metric's row goes last.
//
//   for (const MetricField& f : metric_fields())
//     std::visit([&](auto member) { out[f.name] = r.metrics.*member; }, f.member);
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "harness/core/records.hpp"

namespace srbench::harness {

struct MetricField {
  std::string name;                                                 // "id_acc"
  std::variant<double RunMetrics::*, int64_t RunMetrics::*> member;  // a real (float64) or an integer (int64)
  bool optional;    // files written before it lack it, and read it as its default in RunMetrics
  bool summarised;  // the report summarises it over each group's seeds (report_metrics())
  std::string doc;  // what it is, in one line
  bool integer() const { return std::holds_alternative<int64_t RunMetrics::*>(member); }
  // The metric of `m` as a double (an integer converted).
  double value(const RunMetrics& m) const;
};

const std::vector<MetricField>& metric_fields();

// The metric named `name`; std::invalid_argument naming it and the metrics there are otherwise.
const MetricField& metric_field(const std::string& name);

// The metrics the report summarises for every group (summarised), in the table's order.
std::vector<std::string> report_metrics();

}  // namespace srbench::harness
