#include "harness/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace srbench::harness {

namespace {

double run_metric(const RunResult& r, const std::string& name) {
  if (name == "id_acc") return r.metrics.id_acc;
  if (name == "ood_length_acc") return r.metrics.ood_length_acc;
  if (name == "shift_acc") return r.metrics.shift_acc;
  if (name == "shortcut_gap") return r.metrics.shortcut_gap;
  if (name == "final_train_loss") return r.metrics.final_train_loss;
  return kNaN;
}

// ---- number formatting ----------------------------------------------------------------------

// Fixed decimals; NaN as "-".
std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Exact enough to round-trip (csv); NaN as "nan", which pandas reads as NaN.
std::string exact(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

int decimals_of(const std::string& metric) {
  if (metric == "steps_to_target") return 0;
  if (metric == "final_train_loss") return 4;
  return 3;
}

// "0.983±0.012 [0.950, 0.983, 1.000]" — mean±std [min, median, max]
std::string stats_text(const SeedStats& s, int decimals, const char* pm = "±") {
  if (s.n == 0) return "-";
  return fixed(s.mean, decimals) + pm + fixed(s.std, decimals) + " [" + fixed(s.min, decimals) + ", " +
         fixed(s.median, decimals) + ", " + fixed(s.max, decimals) + "]";
}

// Display width of UTF-8 text (code points; "±" and "·" count as one).
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}
std::string pad_right(const std::string& s, size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); }
std::string pad_left(const std::string& s, size_t w) { return std::string(w > width(s) ? w - width(s) : 0, ' ') + s; }

std::string group_title(const GroupReport& g) {
  std::string t = g.entry == g.task ? g.task : g.task + "/" + g.entry;
  t += " · model " + g.model;
  if (!g.grid.empty()) t += " · " + g.grid;
  return t;
}

std::string target_text(const GroupReport& g) {
  return std::to_string(g.reached) + "/" + std::to_string(g.runs) + " (" + fixed(g.frac_target(), 2) + ")";
}

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

// ---- table (fits 100 columns) -----------------------------------------------------------------

// A condition × length matrix of `quantity` means, in column chunks that fit 100 characters.
void table_matrix(std::ostream& os, const GroupReport& g, bool bits) {
  const auto conds = conditions_of(g);
  const auto lengths = lengths_of(g);
  size_t label_w = 10;
  for (const auto& c : conds) label_w = std::max(label_w, width(c) + 2);
  const size_t col_w = 8;
  const size_t per_chunk = std::max<size_t>(1, (100 - 2 - label_w) / col_w);
  for (size_t start = 0; start < lengths.size(); start += per_chunk) {
    const size_t end = std::min(lengths.size(), start + per_chunk);
    os << "  " << pad_right(bits ? "bpb \\ len" : "cond \\ len", label_w);
    for (size_t i = start; i < end; ++i) os << pad_left(std::to_string(lengths[i]), col_w);
    os << "\n";
    for (const auto& cond : conds) {
      std::string line = "  " + pad_right(cond, label_w);
      for (size_t i = start; i < end; ++i) {
        const EvalCell* c = find_cell(g, lengths[i], cond);
        const double v = !c ? kNaN : bits ? c->bits_per_byte.mean : c->seq_acc.mean;
        line += pad_left(c ? fixed(v, 3) : "", col_w);
      }
      os << line.substr(0, line.find_last_not_of(' ') + 1) << "\n";
    }
  }
}

std::string format_table(const std::vector<GroupReport>& groups, const std::string& title) {
  std::ostringstream os;
  if (!title.empty()) os << title << "\n\n";
  os << "Across seeds: mean±std [min, median, max]; steps_to_target over the seeds that reached the target\n";
  for (const auto& g : groups) {
    os << "\n" << group_title(g) << "\n";
    os << "  runs " << g.runs << ": ok " << g.ok << ", diverged " << g.diverged << ", failed " << g.failed
       << "; reached target " << target_text(g) << "\n";
    for (const auto& m : g.metrics)
      os << "  " << pad_right(m.name, 18) << pad_left("n=" + std::to_string(m.stats.n), 5) << "  "
         << stats_text(m.stats, decimals_of(m.name)) << "\n";
  }
  os << "\nseq_acc by condition and length (mean over seeds)\n";
  for (const auto& g : groups) {
    os << "\n" << group_title(g) << "\n";
    if (g.eval.empty()) {
      os << "  (no evaluation rows)\n";
      continue;
    }
    table_matrix(os, g, false);
    if (g.bits_per_byte) table_matrix(os, g, true);
  }
  return os.str();
}

// ---- markdown ---------------------------------------------------------------------------------

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

void md_header(std::ostream& os, const std::vector<std::string>& names) {
  md_row(os, names);
  os << "|";
  for (size_t i = 0; i < names.size(); ++i) os << "---|";
  os << "\n";
}

std::string format_markdown(const std::vector<GroupReport>& groups, const std::string& title) {
  std::ostringstream os;
  if (!title.empty()) {
    const auto nl = title.find('\n');
    os << "## " << title.substr(0, nl) << "\n\n";
    if (nl != std::string::npos) os << title.substr(nl + 1) << "\n\n";
  }
  os << "Across seeds: mean ± std [min, median, max]; steps_to_target over the seeds that reached the target.\n\n";
  std::vector<std::string> head = {"task", "entry", "model", "grid", "runs", "ok", "diverged", "failed", "reached target"};
  if (!groups.empty())
    for (const auto& m : groups.front().metrics) head.push_back(m.name);
  md_header(os, head);
  for (const auto& g : groups) {
    std::vector<std::string> row = {g.task, g.entry, g.model, g.grid, std::to_string(g.runs), std::to_string(g.ok),
                                    std::to_string(g.diverged), std::to_string(g.failed), target_text(g)};
    for (const auto& m : g.metrics) row.push_back(stats_text(m.stats, decimals_of(m.name), " ± "));
    md_row(os, row);
  }
  os << "\nseq_acc per evaluated length and condition (over seeds)\n\n";
  md_header(os, {"entry", "model", "grid", "condition", "length", "n", "seq_acc", "bits_per_byte"});
  for (const auto& g : groups)
    for (const auto& c : g.eval)
      md_row(os, {g.entry, g.model, g.grid, c.condition, std::to_string(c.length), std::to_string(c.seq_acc.n),
                  stats_text(c.seq_acc, 3, " ± "), g.bits_per_byte ? stats_text(c.bits_per_byte, 3, " ± ") : ""});
  return os.str();
}

// ---- csv ----------------------------------------------------------------------------------------

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void csv_row(std::ostream& os, const GroupReport& g, const std::string& metric, const SeedStats& s,
             const std::string& frac) {
  os << csv_field(g.task) << "," << csv_field(g.entry) << "," << csv_field(g.model) << "," << csv_field(g.grid) << ","
     << g.runs << "," << g.ok << "," << g.diverged << "," << g.failed << "," << csv_field(metric) << "," << s.n << ","
     << exact(s.mean) << "," << exact(s.std) << "," << exact(s.min) << "," << exact(s.median) << "," << exact(s.max)
     << "," << frac << "\n";
}

std::string format_csv(const std::vector<GroupReport>& groups) {
  std::ostringstream os;
  os << "task,entry,model,grid,runs,ok,diverged,failed,metric,n,mean,std,min,median,max,frac_target\n";
  for (const auto& g : groups) {
    const std::string frac = exact(g.frac_target());
    for (const auto& m : g.metrics) csv_row(os, g, m.name, m.stats, frac);
    for (const auto& c : g.eval) {
      csv_row(os, g, eval_metric_name("seq_acc", c.length, c.condition), c.seq_acc, "");
      if (g.bits_per_byte) csv_row(os, g, eval_metric_name("bits_per_byte", c.length, c.condition), c.bits_per_byte, "");
    }
  }
  return os.str();
}

// ---- diagnostics ------------------------------------------------------------------------------

const char* kDiagLegend =
    "attn_entropy: mean normalised entropy of a head's attention rows (1 = uniform over the keys,\n"
    "0 = one key); attn_max: mean largest weight of a row; value_entropy, hidden_entropy: mean matrix\n"
    "entropy of a sequence's values / block outputs (log T = orthogonal, 0 = collapsed)";

std::string diag_count_text(const GroupReport& g) {
  return "runs with diagnostics: " + std::to_string(g.diag.runs) + " of " + std::to_string(g.runs);
}

// A layer × head matrix of means, in column chunks that fit 100 characters.
void table_heads(std::ostream& os, const std::string& name, const std::vector<SeedStats>& v, int layers, int heads) {
  const size_t label_w = std::max<size_t>(14, width(name) + 2), col_w = 7;
  const size_t per_chunk = std::max<size_t>(1, (100 - 2 - label_w) / col_w);
  for (size_t start = 0; start < static_cast<size_t>(heads); start += per_chunk) {
    const size_t end = std::min(static_cast<size_t>(heads), start + per_chunk);
    os << "  " << pad_right(name, label_w);
    for (size_t h = start; h < end; ++h) os << pad_left("h" + std::to_string(h), col_w);
    os << "\n";
    for (int l = 0; l < layers; ++l) {
      os << "  " << pad_right("layer " + std::to_string(l), label_w);
      for (size_t h = start; h < end; ++h) os << pad_left(fixed(v[static_cast<size_t>(l) * heads + h].mean, 3), col_w);
      os << "\n";
    }
  }
}

std::string format_diag_table(const std::vector<GroupReport>& groups, const std::string& title) {
  std::ostringstream os;
  if (!title.empty()) os << title << "\n\n";
  os << "Diagnostics on a fixed ID batch after training, mean over seeds\n" << kDiagLegend << "\n";
  for (const auto& g : groups) {
    os << "\n" << group_title(g) << "\n  " << diag_count_text(g) << "\n";
    if (g.diag.empty()) continue;
    const auto& d = g.diag;
    os << "  " << pad_right("layer", 14) << pad_left("value_entropy", 15) << pad_left("hidden_entropy", 16) << "\n";
    for (int l = 0; l < d.layers; ++l)
      os << "  " << pad_right("layer " + std::to_string(l), 14) << pad_left(fixed(d.value_entropy[l].mean, 3), 15)
         << pad_left(fixed(d.hidden_entropy[l].mean, 3), 16) << "\n";
    table_heads(os, "attn_entropy", d.attn_entropy, d.layers, d.heads);
    table_heads(os, "attn_max", d.attn_max, d.layers, d.heads);
  }
  return os.str();
}

void md_heads(std::ostream& os, const std::string& name, const std::vector<SeedStats>& v, int layers, int heads) {
  std::vector<std::string> head = {name};
  for (int h = 0; h < heads; ++h) head.push_back("h" + std::to_string(h));
  md_header(os, head);
  for (int l = 0; l < layers; ++l) {
    std::vector<std::string> row = {"layer " + std::to_string(l)};
    for (int h = 0; h < heads; ++h) row.push_back(fixed(v[static_cast<size_t>(l) * heads + h].mean, 3));
    md_row(os, row);
  }
  os << "\n";
}

std::string format_diag_markdown(const std::vector<GroupReport>& groups, const std::string& title) {
  std::ostringstream os;
  if (!title.empty()) {
    const auto nl = title.find('\n');
    os << "## " << title.substr(0, nl) << "\n\n";
    if (nl != std::string::npos) os << title.substr(nl + 1) << "\n\n";
  }
  os << "Diagnostics on a fixed ID batch after training, mean over seeds.\n" << kDiagLegend << ".\n";
  for (const auto& g : groups) {
    os << "\n### " << group_title(g) << "\n\n" << diag_count_text(g) << "\n\n";
    if (g.diag.empty()) continue;
    const auto& d = g.diag;
    md_header(os, {"layer", "value_entropy", "hidden_entropy"});
    for (int l = 0; l < d.layers; ++l)
      md_row(os, {std::to_string(l), fixed(d.value_entropy[l].mean, 3), fixed(d.hidden_entropy[l].mean, 3)});
    os << "\n";
    md_heads(os, "attn_entropy", d.attn_entropy, d.layers, d.heads);
    md_heads(os, "attn_max", d.attn_max, d.layers, d.heads);
  }
  return os.str();
}

std::string format_diag_csv(const std::vector<GroupReport>& groups) {
  std::ostringstream os;
  os << "task,entry,model,grid,runs,ok,diverged,failed,metric,n,mean,std,min,median,max,frac_target\n";
  for (const auto& g : groups) {
    const auto& d = g.diag;
    for (int l = 0; l < d.layers; ++l) {
      const size_t row = static_cast<size_t>(l) * d.heads;
      for (int h = 0; h < d.heads; ++h) csv_row(os, g, diag_metric_name("attn_entropy", l, h), d.attn_entropy[row + h], "");
      for (int h = 0; h < d.heads; ++h) csv_row(os, g, diag_metric_name("attn_max", l, h), d.attn_max[row + h], "");
      csv_row(os, g, diag_metric_name("value_entropy", l), d.value_entropy[l], "");
      csv_row(os, g, diag_metric_name("hidden_entropy", l), d.hidden_entropy[l], "");
    }
  }
  return os.str();
}

// The diagnostics of a group's runs, over seeds.
DiagnosticsStats aggregate_diagnostics(const std::vector<const RunResult*>& rs) {
  DiagnosticsStats out;
  std::vector<const Diagnostics*> ds;
  for (const RunResult* r : rs) {
    const Diagnostics& d = r->diag;
    if (d.empty()) continue;
    if (ds.empty()) out.layers = d.layers, out.heads = d.heads;
    if (d.layers != out.layers || d.heads != out.heads) continue;
    ds.push_back(&d);
  }
  out.runs = static_cast<int>(ds.size());
  if (ds.empty()) return {};
  auto over_seeds = [&](std::vector<double> Diagnostics::*field, size_t size) {
    std::vector<SeedStats> stats;
    for (size_t i = 0; i < size; ++i) {
      std::vector<double> values;
      for (const Diagnostics* d : ds) values.push_back((d->*field).at(i));
      stats.push_back(seed_stats(values));
    }
    return stats;
  };
  const auto L = static_cast<size_t>(out.layers), LH = L * static_cast<size_t>(out.heads);
  out.attn_entropy = over_seeds(&Diagnostics::attn_entropy, LH);
  out.attn_max = over_seeds(&Diagnostics::attn_max, LH);
  out.value_entropy = over_seeds(&Diagnostics::value_entropy, L);
  out.hidden_entropy = over_seeds(&Diagnostics::hidden_entropy, L);
  return out;
}

}  // namespace

std::string diag_metric_name(const std::string& quantity, int layer, int head) {
  return quantity + "[layer=" + std::to_string(layer) + (head >= 0 ? ",head=" + std::to_string(head) : "") + "]";
}

std::string format_diagnostics_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                      const std::string& title) {
  switch (format) {
    case ReportFormat::table: return format_diag_table(groups, title);
    case ReportFormat::markdown: return format_diag_markdown(groups, title);
    case ReportFormat::csv: return format_diag_csv(groups);
  }
  return {};
}

std::string eval_metric_name(const std::string& quantity, int64_t length, const std::string& condition) {
  return quantity + "[length=" + std::to_string(length) + ",condition=" + condition + "]";
}

std::vector<GroupReport> aggregate_runs(const std::vector<RunResult>& runs) {
  // Group membership, in order of first appearance.
  std::vector<std::vector<const RunResult*>> members;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (const auto& r : runs) {
    const auto key = std::make_tuple(r.entry, r.model, r.grid);
    auto [it, fresh] = index.emplace(key, members.size());
    if (fresh) members.emplace_back();
    members[it->second].push_back(&r);
  }
  std::vector<GroupReport> groups;
  for (const auto& rs : members) {
    GroupReport g;
    g.task = rs.front()->task;
    g.entry = rs.front()->entry;
    g.model = rs.front()->model;
    g.grid = rs.front()->grid;
    std::vector<double> steps;
    for (const RunResult* r : rs) {
      ++g.runs;
      g.ok += r->status == "ok";
      g.diverged += r->status == "diverged";
      g.failed += r->status == "failed";
      g.bits_per_byte = g.bits_per_byte || r->bits_per_byte;
      if (r->metrics.steps_to_target >= 0) {
        ++g.reached;
        steps.push_back(static_cast<double>(r->metrics.steps_to_target));
      }
    }
    for (const auto& name : kReportMetrics) {
      std::vector<double> values;
      for (const RunResult* r : rs) values.push_back(run_metric(*r, name));
      g.metrics.push_back({name, seed_stats(values)});
    }
    g.metrics.push_back({"steps_to_target", seed_stats(steps)});

    // Evaluation cells keyed by (condition label, length); conditions in order of first appearance.
    std::vector<std::string> conds;
    using Values = std::vector<double>;  // seq_acc, bits per byte, token error
    std::map<std::pair<size_t, int64_t>, std::tuple<Values, Values, Values>> cells;
    for (const RunResult* r : rs)
      for (const auto& e : r->eval) {
        const std::string& label = r->conditions.at(static_cast<size_t>(e.condition));
        auto it = std::find(conds.begin(), conds.end(), label);
        const size_t ci = static_cast<size_t>(it - conds.begin());
        if (it == conds.end()) conds.push_back(label);
        auto& [acc, bpb, err] = cells[{ci, e.length}];
        acc.push_back(e.seq_acc);
        if (r->bits_per_byte) bpb.push_back(e.loss / std::log(2.0));
        err.push_back(1.0 - e.token_acc);
      }
    for (const auto& [key, values] : cells)
      g.eval.push_back({key.second, conds[key.first], seed_stats(std::get<0>(values)), seed_stats(std::get<1>(values)),
                        seed_stats(std::get<2>(values))});
    g.diag = aggregate_diagnostics(rs);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::optional<ReportFormat> parse_report_format(const std::string& text) {
  if (text == "table") return ReportFormat::table;
  if (text == "markdown") return ReportFormat::markdown;
  if (text == "csv") return ReportFormat::csv;
  return std::nullopt;
}

std::string format_report(const std::vector<GroupReport>& groups, ReportFormat format, const std::string& title) {
  switch (format) {
    case ReportFormat::table: return format_table(groups, title);
    case ReportFormat::markdown: return format_markdown(groups, title);
    case ReportFormat::csv: return format_csv(groups);
  }
  return {};
}

TransferMatrix compute_transfer(const std::vector<RunResult>& runs) {
  TransferMatrix t;
  auto index_in = [](std::vector<std::string>& list, const std::string& x) {
    const auto it = std::find(list.begin(), list.end(), x);
    if (it != list.end()) return static_cast<size_t>(it - list.begin());
    list.push_back(x);
    return list.size() - 1;
  };
  // the baseline of each (entry, grid): its model entry and its means
  struct Base {
    std::string model;
    std::vector<double> id_acc, steps;
  };
  std::map<std::pair<std::string, std::string>, Base> base;
  for (const auto& r : runs) {
    if (r.status != "ok" || !r.splines_from.empty() || !r.splines.empty()) continue;
    Base& b = base[{r.entry, r.grid}];
    if (b.model.empty()) b.model = r.model;
    if (b.model != r.model) continue;
    b.id_acc.push_back(r.metrics.id_acc);
    if (r.metrics.steps_to_target >= 0) b.steps.push_back(static_cast<double>(r.metrics.steps_to_target));
  }
  std::vector<std::vector<double>> deltas, ratios;
  for (const auto& r : runs) {
    if (r.splines_from.empty() || r.splines_task.empty()) continue;
    index_in(t.searched_on, r.splines_task);
    index_in(t.trained_on, r.entry);
  }
  const size_t R = t.searched_on.size(), C = t.trained_on.size();
  deltas.assign(R * C, {}), ratios.assign(R * C, {});
  t.runs.assign(R * C, 0);
  for (const auto& r : runs) {
    if (r.splines_from.empty() || r.splines_task.empty() || r.status != "ok") continue;
    const size_t cell = index_in(t.searched_on, r.splines_task) * C + index_in(t.trained_on, r.entry);
    ++t.runs[cell];
    const auto it = base.find({r.entry, r.grid});
    if (it == base.end()) continue;
    const double base_acc = seed_stats(it->second.id_acc).mean;
    const double base_steps = seed_stats(it->second.steps).mean;
    if (!std::isnan(r.metrics.id_acc) && !std::isnan(base_acc)) deltas[cell].push_back(r.metrics.id_acc - base_acc);
    if (r.metrics.steps_to_target >= 0 && !std::isnan(base_steps) && base_steps > 0)
      ratios[cell].push_back(static_cast<double>(r.metrics.steps_to_target) / base_steps);
  }
  for (size_t i = 0; i < R * C; ++i) {
    t.id_acc_delta.push_back(seed_stats(deltas[i]).mean);
    t.steps_ratio.push_back(seed_stats(ratios[i]).mean);
  }
  return t;
}

std::string format_transfer(const TransferMatrix& t, ReportFormat format) {
  if (t.empty()) return "";
  const size_t R = t.searched_on.size(), C = t.trained_on.size();
  std::ostringstream os;
  auto signed_fixed = [](double v, int d) { return std::isnan(v) ? std::string("-") : (v >= 0 ? "+" : "") + fixed(v, d); };
  if (format == ReportFormat::csv) {
    os << "searched_on,trained_on,runs,id_acc_delta,steps_ratio\n";
    for (size_t i = 0; i < R; ++i)
      for (size_t j = 0; j < C; ++j)
        os << csv_field(t.searched_on[i]) << "," << csv_field(t.trained_on[j]) << "," << t.runs[i * C + j] << ","
           << exact(t.id_acc_delta[i * C + j]) << "," << exact(t.steps_ratio[i * C + j]) << "\n";
    return os.str();
  }
  const std::string head = "Transfer: rows = task the splines were searched on, columns = task trained on; cell = "
                           "id_acc − baseline id_acc / steps_to_target ÷ baseline's (mean over seeds)";
  std::vector<std::string> header = {"searched on \\ trained on"};
  for (const auto& c : t.trained_on) header.push_back(c);
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < R; ++i) {
    std::vector<std::string> row = {t.searched_on[i]};
    for (size_t j = 0; j < C; ++j) {
      const size_t k = i * C + j;
      row.push_back(t.runs[k] == 0 ? "" : signed_fixed(t.id_acc_delta[k], 3) + " / " +
                                              (std::isnan(t.steps_ratio[k]) ? "-" : fixed(t.steps_ratio[k], 2) + "×"));
    }
    rows.push_back(std::move(row));
  }
  if (format == ReportFormat::markdown) {
    os << "\n### " << head << "\n\n";
    md_header(os, header);
    for (const auto& row : rows) md_row(os, row);
    return os.str();
  }
  std::vector<size_t> w(header.size(), 0);
  for (size_t j = 0; j < header.size(); ++j) {
    w[j] = width(header[j]);
    for (const auto& row : rows) w[j] = std::max(w[j], width(row[j]));
  }
  os << "\n" << head << "\n";
  for (size_t j = 0; j < header.size(); ++j) os << (j ? "  " : "") << (j ? pad_left(header[j], w[j]) : pad_right(header[j], w[j]));
  os << "\n";
  for (const auto& row : rows) {
    for (size_t j = 0; j < row.size(); ++j) os << (j ? "  " : "") << (j ? pad_left(row[j], w[j]) : pad_right(row[j], w[j]));
    os << "\n";
  }
  return os.str();
}

// ---- per-length accuracy and error rates (report --lengths, --errors) ---------------------------

namespace {

// A header and rows of cells as an aligned text table (left-aligned first `label_cols` columns)
// or a markdown table.
std::string render_rows(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                        ReportFormat format, size_t label_cols) {
  std::ostringstream os;
  if (format == ReportFormat::markdown) {
    md_header(os, head);
    for (const auto& r : rows) md_row(os, r);
    return os.str();
  }
  std::vector<size_t> w(head.size(), 0);
  for (size_t i = 0; i < head.size(); ++i) w[i] = width(head[i]);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i)
      out += (i ? "  " : "") + (i < label_cols ? pad_right(cells[i], w[i]) : pad_left(cells[i], w[i]));
    os << out.substr(0, out.find_last_not_of(' ') + 1) << "\n";
  };
  line(head);
  for (const auto& r : rows) line(r);
  return os.str();
}

std::string report_heading(const std::string& title, ReportFormat format) {
  if (title.empty()) return "";
  if (format != ReportFormat::markdown) return title + "\n\n";
  const auto nl = title.find('\n');
  return "## " + title.substr(0, nl) + "\n\n" + (nl == std::string::npos ? "" : title.substr(nl + 1) + "\n\n");
}

const SeedStats* metric_stats(const GroupReport& g, const std::string& name) {
  for (const auto& m : g.metrics)
    if (m.name == name) return &m.stats;
  return nullptr;
}

// "mean / max" of accuracies; blank when no seed has the value.
std::string mean_max_text(const SeedStats* s) {
  if (!s || s->n == 0) return "";
  return fixed(s->mean, 3) + " / " + fixed(s->max, 3);
}

void csv_stats(std::ostream& os, const GroupReport& g, const std::vector<std::string>& keys, const SeedStats& s) {
  os << csv_field(g.task) << "," << csv_field(g.entry) << "," << csv_field(g.model) << "," << csv_field(g.grid);
  for (const auto& k : keys) os << "," << csv_field(k);
  os << "," << s.n << "," << exact(s.mean) << "," << exact(s.std) << "," << exact(s.min) << "," << exact(s.median)
     << "," << exact(s.max) << "\n";
}

}  // namespace

std::string format_length_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                 const std::string& title) {
  std::set<int64_t> all;
  for (const auto& g : groups)
    for (const auto& c : g.eval)
      if (c.condition == "id") all.insert(c.length);
  const std::vector<int64_t> lengths(all.begin(), all.end());
  std::ostringstream os;
  if (format == ReportFormat::csv) {
    os << "task,entry,model,grid,quantity,length,n,mean,std,min,median,max\n";
    for (const auto& g : groups) {
      for (const auto& c : g.eval)
        if (c.condition == "id") csv_stats(os, g, {"seq_acc", std::to_string(c.length)}, c.seq_acc);
      if (const SeedStats* ood = metric_stats(g, "ood_length_acc")) csv_stats(os, g, {"ood_length_acc", ""}, *ood);
    }
    return os.str();
  }
  os << report_heading(title, format);
  os << "seq_acc of condition id per evaluated length, mean / max over seeds; ood = each run's mean over the\n"
        "lengths beyond its training range, then mean / max over seeds\n\n";
  std::vector<std::string> head = {"entry", "model", "grid"};
  for (const auto len : lengths) head.push_back(std::to_string(len));
  head.push_back("ood mean / max");
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : groups) {
    std::vector<std::string> row = {g.entry, g.model, g.grid};
    for (const auto len : lengths) {
      const EvalCell* c = find_cell(g, len, "id");
      row.push_back(mean_max_text(c ? &c->seq_acc : nullptr));
    }
    row.push_back(mean_max_text(metric_stats(g, "ood_length_acc")));
    rows.push_back(row);
  }
  os << render_rows(head, rows, format, 3);
  return os.str();
}

std::string format_error_report(const std::vector<GroupReport>& groups, ReportFormat format,
                                const std::string& title) {
  std::ostringstream os;
  if (format == ReportFormat::csv) {
    os << "task,entry,model,grid,condition,length,n,mean,std,min,median,max\n";
    for (const auto& g : groups)
      for (const auto& c : g.eval) csv_stats(os, g, {c.condition, std::to_string(c.length)}, c.token_error);
    return os.str();
  }
  os << report_heading(title, format);
  os << "error rate at scored positions (1 - token_acc; ffl: at the reads), over seeds\n\n";
  const std::vector<std::string> head = {"entry", "model", "grid", "condition", "length", "n",
                                         "mean", "std", "min", "median", "max"};
  std::vector<std::vector<std::string>> rows;
  auto err = [](double v) {  // small rates: scientific below 1e-3
    if (std::isnan(v)) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, v != 0 && v < 1e-3 ? "%.2e" : "%.4f", v);
    return std::string(buf);
  };
  for (const auto& g : groups)
    for (const auto& c : g.eval) {
      const SeedStats& s = c.token_error;
      rows.push_back({g.entry, g.model, g.grid, c.condition, std::to_string(c.length), std::to_string(s.n),
                      err(s.mean), err(s.std), err(s.min), err(s.median), err(s.max)});
    }
  os << render_rows(head, rows, format, 4);
  return os.str();
}

}  // namespace srbench::harness
