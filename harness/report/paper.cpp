#include "harness/report/paper.hpp"

#include <set>
#include <sstream>

#include "harness/report/aggregate.hpp"
#include "harness/report/pooled_report.hpp"
#include "harness/report/stats.hpp"
#include "harness/suite/stored.hpp"

namespace srbench::harness {

namespace {

// One compact cell: the metric over the runs that have the length, and how many reached their target.
struct CompactCell {
  SeedStats stats;
  int k = 0, n = 0;
};

// `targets[i]`: runs[i]'s train.target_accuracy.
CompactCell compact_cell(const std::vector<const RunResult*>& runs, const std::vector<double>& targets, int64_t length,
                         const std::string& metric) {
  CompactCell c;
  std::vector<double> values;
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& e : runs[i]->eval) {
      if (e.condition != 0 || e.length != length) continue;
      const double v = metric == "token_acc" ? e.token_acc : e.seq_acc;
      values.push_back(v);
      ++c.n;
      c.k += v >= targets[i];
    }
  c.stats = seed_stats(values);
  return c;
}

std::set<int64_t> id_lengths(const std::vector<RunResult>& runs) {
  std::set<int64_t> out;
  for (const auto& r : runs)
    for (const auto& e : r.eval)
      if (e.condition == 0) out.insert(e.length);
  return out;
}

}  // namespace

std::string format_compact_report(const std::vector<RunResult>& runs, const std::string& metric, bool fitted_only,
                                  ReportFormat format, const std::string& title) {
  const std::set<int64_t> lengths = id_lengths(runs);
  const bool csv = format == ReportFormat::csv;
  Table t{csv ? std::vector<std::string>{"task", "entry", "model", "arch", "grid", "runs", "fitted", "length", "metric",
                                         "n", "mean", "ci_lo", "ci_hi", "k"}
              : std::vector<std::string>{"entry", "model", "arch", "grid", "fitted"},
          {}};
  if (!csv)
    for (const auto len : lengths) t.head.push_back(std::to_string(len));
  for (const auto& group : run_groups(runs)) {
    const RunResult& first = *group.front();
    int fitted = 0;
    std::vector<const RunResult*> over;
    std::vector<double> targets;
    for (const RunResult* r : group) {
      fitted += r->metrics.fitted == 1;
      if (!fitted_only || r->metrics.fitted == 1) over.push_back(r), targets.push_back(stored_target_accuracy(r->config_yaml));
    }
    const std::string runs_n = std::to_string(group.size()), fitted_n = std::to_string(fitted), arch = run_arch(first);
    std::vector<std::string> row = {first.entry, first.model, arch, first.grid, fitted_n + "/" + runs_n};
    for (const auto len : lengths) {
      const CompactCell c = compact_cell(over, targets, len, metric);
      if (csv) {
        if (c.n == 0) continue;
        t.rows.push_back({first.task, first.entry, first.model, arch, first.grid, runs_n, fitted_n,
                          std::to_string(len), metric, std::to_string(c.n), exact(c.stats.mean), exact(c.stats.ci_lo),
                          exact(c.stats.ci_hi), std::to_string(c.k)});
      } else {
        row.push_back(c.n == 0 ? "-"
                               : mean_interval_text(c.stats, 2) + " · " + std::to_string(c.k) + "/" +
                                     std::to_string(c.n));
      }
    }
    if (!csv) t.rows.push_back(std::move(row));
  }
  if (csv) return render_csv(t);
  return heading(title, format) + metric + " of condition id at each evaluated length: mean over the seeds [95% bootstrap " +
         "interval] · k/n, k runs at their target accuracy at that length of the n runs that have it" +
         (fitted_only ? " (fitted runs only)" : "") + "; fitted: runs fitted / runs\n\n" + render(t, format, 4);
}

std::string format_tidy_report(const std::vector<RunResult>& runs) {
  Table t{{"run_id", "task", "entry", "model", "arch", "grid", "seed", "status", "fitted", "length", "condition", "loss",
           "token_acc", "seq_acc", "seen_frac", "input_space"},
          {}};
  for (const auto& r : runs)
    for (const auto& e : r.eval)
      t.rows.push_back({r.run_id, r.task, r.entry, r.model, run_arch(r), r.grid, std::to_string(r.seed), r.status,
                        std::to_string(r.metrics.fitted), std::to_string(e.length),
                        r.conditions.at(static_cast<size_t>(e.condition)), exact(e.loss), exact(e.token_acc),
                        exact(e.seq_acc), exact(e.seen_frac), exact(e.input_space)});
  return render_csv(t);
}

std::string latex_comments_outside_tables(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("\\begin{tabular}", 0) == 0) inside = true;
    out += inside || line.empty() ? line : "% " + line;
    out += "\n";
    if (line.rfind("\\end{tabular}", 0) == 0) inside = false;
  }
  return out;
}

}  // namespace srbench::harness
