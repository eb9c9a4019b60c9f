#include "harness/report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

namespace srbench::harness {

namespace {

std::string group_title(const GroupReport& g) {
  std::string t = g.entry == g.task ? g.task : g.task + "/" + g.entry;
  t += " · model " + g.model + " (" + g.arch + ")";
  if (!g.grid.empty()) t += " · " + g.grid;
  return t;
}

std::string target_text(const GroupReport& g) {
  return std::to_string(g.reached) + "/" + std::to_string(g.runs) + " (" + fixed(g.frac_target(), 2) + ")";
}

// k/n, naming the criterion when it is not the default (seq_acc)
std::string fitted_text(const GroupReport& g) {
  return std::to_string(g.fitted) + "/" + std::to_string(g.runs) +
         (g.fit_metric == "seq_acc" ? "" : " by " + g.fit_metric);
}

// report --fitted's criterion, as the summary's preamble states it
std::string fitted_criterion(const std::vector<GroupReport>& groups) {
  for (const auto& g : groups)
    if (g.fit_metric != "seq_acc") return "the id rows' mean train.fit_metric >= target, as 'fitted' names it";
  return "id_acc >= target";
}

// A cell most of whose evaluation inputs also occurred in training (the mean seen_frac over seeds).
constexpr double kMostlySeen = 0.5;
bool mostly_seen(const EvalCell& c) { return c.seen_frac.n > 0 && c.seen_frac.mean >= kMostlySeen; }

// Conditions in order of first appearance, and the sorted lengths, of a group's cells.
std::vector<std::string> conditions_of(const GroupReport& g) {
  std::vector<std::string> out;
  for (const auto& c : g.eval)
    if (std::find(out.begin(), out.end(), c.condition) == out.end()) out.push_back(c.condition);
  return out;
}
std::vector<int64_t> lengths_of(const GroupReport& g) {
  std::set<int64_t> s;
  for (const auto& c : g.eval) s.insert(c.length);
  return {s.begin(), s.end()};
}
const EvalCell* find_cell(const GroupReport& g, int64_t length, const std::string& condition) {
  for (const auto& c : g.eval)
    if (c.length == length && c.condition == condition) return &c;
  return nullptr;
}
const SeedStats* metric_stats(const GroupReport& g, const std::string& name) {
  for (const auto& m : g.metrics)
    if (m.name == name) return &m.stats;
  return nullptr;
}

// The csv forms: the group's columns, the row's own key columns, then the statistics.
const std::vector<std::string> kGroupColumns = {"task", "entry", "model", "arch", "grid"};
const std::vector<std::string> kCountColumns = {"runs", "ok", "diverged", "failed", "fitted"};

Table csv_table(const std::vector<std::string>& keys, bool counts) {
  Table t{kGroupColumns, {}};
  if (counts) t.head.insert(t.head.end(), kCountColumns.begin(), kCountColumns.end());
  t.head.insert(t.head.end(), keys.begin(), keys.end());
  t.head.insert(t.head.end(), kStatsColumns.begin(), kStatsColumns.end());
  if (counts) t.head.push_back("frac_target");
  return t;
}

void csv_add(Table& t, const GroupReport& g, const std::vector<std::string>& keys, const SeedStats& s, bool counts,
             const std::string& frac = "") {
  std::vector<std::string> row = {g.task, g.entry, g.model, g.arch, g.grid};
  if (counts)
    for (int v : {g.runs, g.ok, g.diverged, g.failed, g.fitted}) row.push_back(std::to_string(v));
  row.insert(row.end(), keys.begin(), keys.end());
  const auto stats = stats_cells(s);
  row.insert(row.end(), stats.begin(), stats.end());
  if (counts) row.push_back(frac);
  t.rows.push_back(std::move(row));
}

// ---- the summary report ---------------------------------------------------------------------

// A condition × length matrix of seq_acc (or bits per byte) means, for the text form.
std::string eval_matrix(const GroupReport& g, bool bits) {
  Table t{{bits ? "bpb \\ len" : "cond \\ len"}, {}};
  const auto lengths = lengths_of(g);
  for (const auto len : lengths) t.head.push_back(std::to_string(len));
  for (const auto& cond : conditions_of(g)) {
    std::vector<std::string> row = {cond};
    for (const auto len : lengths) {
      const EvalCell* c = find_cell(g, len, cond);
      row.push_back(!c ? "" : fixed(bits ? c->bits_per_byte.mean : c->seq_acc.mean, 3) + (mostly_seen(*c) ? "*" : ""));
    }
    t.rows.push_back(std::move(row));
  }
  return render_chunked(t, 10, 8);
}

std::string summary_text(const std::vector<GroupReport>& groups, const std::string& title) {
  std::ostringstream os;
  os << heading(title, ReportFormat::table);
  os << "Across seeds: mean±std [min, median, max] CI [95% bootstrap interval of the mean];\n"
        "steps_to_target over the seeds that reached the target"
     << (!groups.empty() && groups.front().fitted_only
             ? ";\nevery statistic over the fitted seeds only (" + fitted_criterion(groups) + ")"
             : "")
     << "\n";
  for (const auto& g : groups) {
    os << "\n" << group_title(g) << "\n";
    os << "  runs " << g.runs << ": ok " << g.ok << ", diverged " << g.diverged << ", failed " << g.failed
       << "; reached target " << target_text(g) << "; fitted " << fitted_text(g) << "\n";
    for (const auto& m : g.metrics)
      os << "  " << pad_right(m.name, 18) << pad_left("n=" + std::to_string(m.stats.n), 5) << "  "
         << stats_text(m.stats, metric_decimals(m.name)) << "\n";
  }
  bool any_seen = false;
  for (const auto& g : groups)
    for (const auto& c : g.eval) any_seen = any_seen || mostly_seen(c);
  os << "\nseq_acc by condition and length (mean over seeds)"
     << (any_seen ? "; * most evaluation inputs (seen_frac >= 0.5) also occurred in training" : "") << "\n";
  for (const auto& g : groups) {
    os << "\n" << group_title(g) << "\n";
    if (g.eval.empty()) {
      os << "  (no evaluation rows)\n";
      continue;
    }
    os << eval_matrix(g, false);
    if (g.bits_per_byte) os << eval_matrix(g, true);
  }
  return os.str();
}

std::string summary_markdown(const std::vector<GroupReport>& groups, const std::string& title) {
  std::ostringstream os;
  os << heading(title, ReportFormat::markdown);
  os << "Across seeds: mean ± std [min, median, max] CI [95% bootstrap interval of the mean]; steps_to_target over "
        "the seeds that reached the target"
     << (!groups.empty() && groups.front().fitted_only ? "; every statistic over the fitted seeds only" : "") << ".\n\n";
  Table t{{"task", "entry", "model", "arch", "grid", "runs", "ok", "diverged", "failed", "reached target", "fitted"}, {}};
  if (!groups.empty())
    for (const auto& m : groups.front().metrics) t.head.push_back(m.name);
  for (const auto& g : groups) {
    std::vector<std::string> row = {g.task, g.entry, g.model, g.arch, g.grid, std::to_string(g.runs), std::to_string(g.ok),
                                    std::to_string(g.diverged), std::to_string(g.failed), target_text(g), fitted_text(g)};
    for (const auto& m : g.metrics) row.push_back(stats_text(m.stats, metric_decimals(m.name), " ± "));
    t.rows.push_back(std::move(row));
  }
  os << render_markdown(t);
  os << "\nseq_acc per evaluated length and condition (over seeds)\n\n";
  Table cells{{"entry", "model", "arch", "grid", "condition", "length", "n", "seq_acc", "bits_per_byte", "seen_frac"}, {}};
  for (const auto& g : groups)
    for (const auto& c : g.eval)
      cells.rows.push_back({g.entry, g.model, g.arch, g.grid, c.condition, std::to_string(c.length),
                            std::to_string(c.seq_acc.n), stats_text(c.seq_acc, 3, " ± "),
                            g.bits_per_byte ? stats_text(c.bits_per_byte, 3, " ± ") : "",
                            c.seen_frac.n > 0 ? fixed(c.seen_frac.mean, 3) : ""});
  os << render_markdown(cells);
  return os.str();
}

std::string summary_csv(const std::vector<GroupReport>& groups) {
  Table t = csv_table({"metric"}, true);
  for (const auto& g : groups) {
    const std::string frac = exact(g.frac_target());
    for (const auto& m : g.metrics) csv_add(t, g, {m.name}, m.stats, true, frac);
    for (const auto& c : g.eval) {
      csv_add(t, g, {eval_metric_name("seq_acc", c.length, c.condition)}, c.seq_acc, true);
      if (g.bits_per_byte)
        csv_add(t, g, {eval_metric_name("bits_per_byte", c.length, c.condition)}, c.bits_per_byte, true);
      if (c.seen_frac.n > 0) csv_add(t, g, {eval_metric_name("seen_frac", c.length, c.condition)}, c.seen_frac, true);
    }
  }
  return render_csv(t);
}

// ---- diagnostics ------------------------------------------------------------------------------

const char* kDiagLegend =
    "attn_entropy: mean normalised entropy of a head's attention rows (1 = uniform over the keys,\n"
    "0 = one key); attn_max: mean largest weight of a row; value_entropy, hidden_entropy: mean matrix\n"
    "entropy of a sequence's values / block outputs (log T = orthogonal, 0 = collapsed); value_lime,\n"
    "hidden_lime: LIMe's measure of the same vectors (features standardised over the batch, Renyi\n"
    "entropy of order 1/2; \"-\" for runs written before it)";

// A layer's row of the layer table: value_entropy, hidden_entropy and LIMe's measure of each
// ("-" where a model has no values, or its runs predate LIMe's measure).
std::vector<std::string> layer_row(const DiagnosticsStats& d, int l) {
  auto cell = [&](const std::vector<SeedStats>& v) {
    return static_cast<size_t>(l) < v.size() && v[l].n > 0 ? fixed(v[l].mean, 3) : std::string("-");
  };
  return {std::to_string(l), cell(d.value_entropy), cell(d.hidden_entropy), cell(d.value_entropy_lime),
          cell(d.hidden_entropy_lime)};
}
const std::vector<std::string> kLayerHead = {"layer", "value_entropy", "hidden_entropy", "value_lime", "hidden_lime"};

std::string diag_count_text(const GroupReport& g) {
  return "runs with diagnostics: " + std::to_string(g.diag.runs) + " of " + std::to_string(g.runs);
}

// A layer × head matrix of means, rows "layer 0", "layer 1", …
Table head_matrix(const std::string& name, const std::vector<SeedStats>& v, int layers, int heads) {
  Table t{{name}, {}};
  for (int h = 0; h < heads; ++h) t.head.push_back("h" + std::to_string(h));
  for (int l = 0; l < layers; ++l) {
    std::vector<std::string> row = {"layer " + std::to_string(l)};
    for (int h = 0; h < heads; ++h) row.push_back(fixed(v[static_cast<size_t>(l) * heads + h].mean, 3));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// When the diagnostics were measured: "after training", or "at initialisation (before the first step)".
std::string diag_when(bool at_init) { return at_init ? "at initialisation (before the first step)" : "after training"; }

std::string diag_text(const std::vector<GroupReport>& groups, const std::string& title, bool at_init) {
  std::ostringstream os;
  os << heading(title, ReportFormat::table);
  os << "Diagnostics on a fixed ID batch " << diag_when(at_init) << ", mean over seeds\n" << kDiagLegend << "\n";
  for (const auto& g : groups) {
    os << "\n" << group_title(g) << "\n  " << diag_count_text(g) << "\n";
    if (g.diag.empty()) continue;
    const auto& d = g.diag;
    // value_entropy "-" for a model without attention (a recurrent arch): it has no values
    os << "  " << pad_right(kLayerHead[0], 14);
    const int width[] = {0, 15, 16, 13, 13};
    for (size_t k = 1; k < kLayerHead.size(); ++k) os << pad_left(kLayerHead[k], width[k]);
    os << "\n";
    for (int l = 0; l < d.layers; ++l) {
      const auto row = layer_row(d, l);
      os << "  " << pad_right("layer " + row[0], 14);
      for (size_t k = 1; k < row.size(); ++k) os << pad_left(row[k], width[k]);
      os << "\n";
    }
    if (!d.has_attention()) {
      os << "  (no attention: attn_entropy, attn_max and value_entropy do not exist)\n";
      continue;
    }
    os << render_chunked(head_matrix("attn_entropy", d.attn_entropy, d.layers, d.heads), 14, 7);
    os << render_chunked(head_matrix("attn_max", d.attn_max, d.layers, d.heads), 14, 7);
  }
  return os.str();
}

std::string diag_markdown(const std::vector<GroupReport>& groups, const std::string& title, bool at_init) {
  std::ostringstream os;
  os << heading(title, ReportFormat::markdown);
  os << "Diagnostics on a fixed ID batch " << diag_when(at_init) << ", mean over seeds.\n" << kDiagLegend << ".\n";
  for (const auto& g : groups) {
    os << "\n" << heading(group_title(g), ReportFormat::markdown, 3) << diag_count_text(g) << "\n\n";
    if (g.diag.empty()) continue;
    const auto& d = g.diag;
    Table layers{kLayerHead, {}};
    for (int l = 0; l < d.layers; ++l) layers.rows.push_back(layer_row(d, l));
    os << render_markdown(layers) << "\n";
    if (!d.has_attention()) {
      os << "No attention: attn_entropy, attn_max and value_entropy do not exist.\n";
      continue;
    }
    os << render_markdown(head_matrix("attn_entropy", d.attn_entropy, d.layers, d.heads)) << "\n";
    os << render_markdown(head_matrix("attn_max", d.attn_max, d.layers, d.heads)) << "\n";
  }
  return os.str();
}

std::string diag_csv(const std::vector<GroupReport>& groups) {
  Table t = csv_table({"metric"}, true);
  for (const auto& g : groups) {
    const auto& d = g.diag;
    for (int l = 0; l < d.layers; ++l) {
      const size_t row = static_cast<size_t>(l) * d.heads;
      for (int h = 0; h < d.heads; ++h) csv_add(t, g, {diag_metric_name("attn_entropy", l, h)}, d.attn_entropy[row + h], true);
      for (int h = 0; h < d.heads; ++h) csv_add(t, g, {diag_metric_name("attn_max", l, h)}, d.attn_max[row + h], true);
      if (d.has_attention()) csv_add(t, g, {diag_metric_name("value_entropy", l)}, d.value_entropy[l], true);
      csv_add(t, g, {diag_metric_name("hidden_entropy", l)}, d.hidden_entropy[l], true);
      if (d.has_attention() && d.value_entropy_lime[l].n > 0)
        csv_add(t, g, {diag_metric_name("value_entropy_lime", l)}, d.value_entropy_lime[l], true);
      if (d.hidden_entropy_lime[l].n > 0) csv_add(t, g, {diag_metric_name("hidden_entropy_lime", l)}, d.hidden_entropy_lime[l], true);
    }
  }
  return render_csv(t);
}

// "mean / max" of accuracies; blank when no seed has the value.
std::string mean_max_text(const SeedStats* s) {
  if (!s || s->n == 0) return "";
  return fixed(s->mean, 3) + " / " + fixed(s->max, 3);
}

}  // namespace

int metric_decimals(const std::string& metric) {
  if (metric == "steps_to_target") return 0;
  if (metric == "final_train_loss") return 4;
  if (metric == "gen_length") return 1;
  return 3;
}

std::string format_report(const std::vector<GroupReport>& groups, ReportFormat format, const std::string& title) {
  switch (format) {
    case ReportFormat::table: return summary_text(groups, title);
    case ReportFormat::markdown: return summary_markdown(groups, title);
    case ReportFormat::csv: return summary_csv(groups);
    case ReportFormat::latex: break;  // refused by `report` (no LaTeX form; --compact is the paper table)
  }
  throw std::logic_error("format_report: the summary has no LaTeX form");
}

std::string format_diagnostics_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                      const std::string& title, bool at_init) {
  switch (format) {
    case ReportFormat::table: return diag_text(groups, title, at_init);
    case ReportFormat::markdown: return diag_markdown(groups, title, at_init);
    case ReportFormat::csv: return diag_csv(groups);
    case ReportFormat::latex: break;  // refused by `report`
  }
  throw std::logic_error("format_diagnostics_report: the diagnostics have no LaTeX form");
}

std::string diag_metric_name(const std::string& quantity, int layer, int head) {
  return quantity + "[layer=" + std::to_string(layer) + (head >= 0 ? ",head=" + std::to_string(head) : "") + "]";
}

std::string eval_metric_name(const std::string& quantity, int64_t length, const std::string& condition) {
  return quantity + "[length=" + std::to_string(length) + ",condition=" + condition + "]";
}

std::string format_length_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                 const std::string& title) {
  if (format == ReportFormat::csv) {
    Table t = csv_table({"quantity", "length"}, false);
    for (const auto& g : groups) {
      for (const auto& c : g.eval)
        if (c.condition == "id") csv_add(t, g, {"seq_acc", std::to_string(c.length)}, c.seq_acc, false);
      if (const SeedStats* ood = metric_stats(g, "ood_length_acc")) csv_add(t, g, {"ood_length_acc", ""}, *ood, false);
    }
    return render_csv(t);
  }
  std::set<int64_t> all;
  for (const auto& g : groups)
    for (const auto& c : g.eval)
      if (c.condition == "id") all.insert(c.length);
  Table t{{"entry", "model", "arch", "grid"}, {}};
  for (const auto len : all) t.head.push_back(std::to_string(len));
  t.head.push_back("ood mean / max");
  for (const auto& g : groups) {
    std::vector<std::string> row = {g.entry, g.model, g.arch, g.grid};
    for (const auto len : all) {
      const EvalCell* c = find_cell(g, len, "id");
      row.push_back(mean_max_text(c ? &c->seq_acc : nullptr));
    }
    row.push_back(mean_max_text(metric_stats(g, "ood_length_acc")));
    t.rows.push_back(std::move(row));
  }
  return heading(title, format) +
         "seq_acc of condition id per evaluated length, mean / max over seeds; ood = each run's mean over the\n"
         "lengths beyond its training range, then mean / max over seeds\n\n" +
         render(t, format, 3);
}

std::string format_error_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                const std::string& title) {
  if (format == ReportFormat::csv) {
    Table t = csv_table({"condition", "length"}, false);
    for (const auto& g : groups)
      for (const auto& c : g.eval) csv_add(t, g, {c.condition, std::to_string(c.length)}, c.token_error, false);
    return render_csv(t);
  }
  auto err = [](double v) {  // small rates: scientific below 1e-3
    if (std::isnan(v)) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, v != 0 && v < 1e-3 ? "%.2e" : "%.4f", v);
    return std::string(buf);
  };
  Table t{{"entry", "model", "arch", "grid", "condition", "length", "n", "mean", "std", "min", "median", "max"}, {}};
  for (const auto& g : groups)
    for (const auto& c : g.eval) {
      const SeedStats& s = c.token_error;
      t.rows.push_back({g.entry, g.model, g.arch, g.grid, c.condition, std::to_string(c.length), std::to_string(s.n),
                        err(s.mean), err(s.std), err(s.min), err(s.median), err(s.max)});
    }
  return heading(title, format) + "error rate at scored positions (1 - token_acc; ffl: at the reads), over seeds\n\n" +
         render(t, format, 4);
}

std::string format_chomsky_report(const std::vector<ChomskyCell>& cells, ReportFormat format, const std::string& title,
                                  const std::string& over) {
  // a recurrent model's column names its arch (recurrent.md); transformer columns as before
  auto column_of = [](const ChomskyCell& c) {
    const std::string m = c.arch == "transformer" ? c.model : c.model + " (" + c.arch + ")";
    return c.grid.empty() ? m : m + " · " + c.grid;
  };
  if (format == ReportFormat::csv) {
    Table t{{"task", "entry", "level", "chance", "model", "arch", "grid", "runs"}, {}};
    t.head.insert(t.head.end(), kStatsColumns.begin(), kStatsColumns.end());
    for (const auto& c : cells) {
      std::vector<std::string> row = {c.task, c.entry, c.level, exact(c.chance), c.model, c.arch, c.grid,
                                         std::to_string(c.runs)};
      const auto stats = stats_cells(c.ood_token_acc);
      row.insert(row.end(), stats.begin(), stats.end());
      t.rows.push_back(std::move(row));
    }
    return render_csv(t);
  }
  std::vector<std::string> entries, columns;
  for (const auto& c : cells) {
    if (std::find(entries.begin(), entries.end(), c.entry) == entries.end()) entries.push_back(c.entry);
    if (std::find(columns.begin(), columns.end(), column_of(c)) == columns.end()) columns.push_back(column_of(c));
  }
  Table t{{"task", "level", "chance"}, {}};
  t.head.insert(t.head.end(), columns.begin(), columns.end());
  for (const auto& entry : entries) {
    std::vector<std::string> row(3 + columns.size());
    for (const auto& c : cells) {
      if (c.entry != entry) continue;
      row[0] = c.entry == c.task ? c.task : c.task + "/" + c.entry, row[1] = c.level, row[2] = fixed(c.chance, 3);
      const size_t col = static_cast<size_t>(std::find(columns.begin(), columns.end(), column_of(c)) - columns.begin());
      const SeedStats& s = c.ood_token_acc;
      row[3 + col] = s.n == 0 ? "-" : fixed(s.max, 3) + " / " + fixed(s.mean, 3) + " (" + std::to_string(s.n) + ")";
    }
    t.rows.push_back(std::move(row));
  }
  return heading(title, format) +
         "ood_token_acc (token accuracy at the scored positions, mean over the evaluated lengths beyond the training\n"
         "range; chomsky.md §7.1): max / mean (n) over the seeds" +
         (over.empty() ? std::string() : " and the values of " + over) +
         "; chance: a uniform guess's token accuracy\n\n" + render(t, format, 2);
}

std::string format_compare_report(const std::vector<PairedDiff>& diffs, const std::string& a, const std::string& b,
                                  ReportFormat format, const std::string& title) {
  if (format == ReportFormat::csv) {
    Table t{{"task", "entry", "grid", "metric", "model_a", "model_b", "mean_a", "mean_b"}, {}};
    for (const auto& c : kStatsColumns) t.head.push_back("diff_" + c);
    for (const auto& d : diffs) {
      std::vector<std::string> row = {d.task, d.entry, d.grid, d.metric, a, b, exact(d.mean_a), exact(d.mean_b)};
      const auto stats = stats_cells(d.diff);
      row.insert(row.end(), stats.begin(), stats.end());
      t.rows.push_back(std::move(row));
    }
    return render_csv(t);
  }
  Table t{{"entry", "grid", "metric", "n", a, b, a + " − " + b, "95% CI"}, {}};
  for (const auto& d : diffs) {
    const SeedStats& s = d.diff;
    const std::string sign = !std::isnan(s.mean) && s.mean >= 0 ? "+" : "";
    t.rows.push_back({d.entry, d.grid, d.metric, std::to_string(s.n), fixed(d.mean_a, 3), fixed(d.mean_b, 3),
                      s.n == 0 ? "-" : sign + fixed(s.mean, 3),
                      std::isnan(s.ci_lo) ? "-" : "[" + fixed(s.ci_lo, 3) + ", " + fixed(s.ci_hi, 3) + "]"});
  }
  return heading(title, format) + "Paired by seed: " + a + " − " + b +
         " on the same task entries and grid points; the interval is a percentile bootstrap over the paired seeds\n"
         "(10,000 resamples; it lies within the differences' range, so it needs several seeds to mean anything)\n\n" +
         render(t, format, 3);
}

}  // namespace srbench::harness
