// `srbench merge` (run files → one suite file) and `srbench report` (a suite file → statistics
// across seeds).
#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "harness/cli/cli.hpp"
#include "harness/report/check.hpp"
#include "harness/report/paper.hpp"
#include "harness/report/pooled_report.hpp"
#include "harness/report/report.hpp"
#include "harness/report/transfer.hpp"
#include "harness/results/assemble.hpp"
#include "harness/results/results.hpp"
#include "harness/suite/stored.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/claims.hpp"
#include "harness/sweep/splines.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace srbench::harness {

namespace {

// The folder of a merge's run files: `<dir>/runs` when `dir` holds a `runs` folder, else `dir`.
std::string runs_folder_of(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw UsageError(dir + ": no such folder");
  if (!fs::is_directory(dir, ec)) throw UsageError(dir + ": not a folder (give the folder of run files, <dir>/<suite>/runs, or the suite folder above it)");
  return fs::is_directory(fs::path(dir) / "runs", ec) ? (fs::path(dir) / "runs").string() : dir;
}

std::string describe_run(const RunResult& r) {
  return r.run_id + "  " + r.entry + " · " + r.model + (r.grid.empty() ? "" : " · " + r.grid) + " · seed " +
         std::to_string(r.seed);
}

std::string describe_spec(const RunSpec& s) {
  return "#" + std::to_string(s.index) + " " + s.id + "  " + s.entry + " · " + s.model_name +
         (s.grid.empty() ? "" : " · " + s.grid) + " · seed " + std::to_string(s.seed);
}

void warn(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cerr << "srbench merge: warning: " << w << "\n";
}

// The suite the run files were written from, expanded again (its runs and searches), or none
// (with a warning) when the stored text does not expand.
std::optional<Suite> expand_stored_suite(const std::string& suite_text) {
  try {
    Suite stored = parse_suite(suite_text, "(suite stored in the run files)");
    resolve_splines_files(stored);
    std::set<std::string> unresolved;  // Python models whose module file is not found from here
    for (const auto& r : stored.runs)
      if (r.python.on && r.python.source == "unresolved") unresolved.insert(r.python.module);
    for (const auto& m : unresolved)
      std::cerr << "srbench merge: warning: " << python_interpreter(stored) << " finds no module for '" << m
                << "' from this folder (and PYTHONPATH): the ids of its runs hash the module's file, so they "
                   "cannot be matched and show as missing and as other models; run merge from the folder the "
                   "sweep ran in\n";
    return stored;
  } catch (const std::exception& e) {
    std::cerr << "srbench merge: warning: the stored suite does not expand (" << e.what()
              << "); cannot list missing runs, rows are ordered by run id\n";
  }
  return std::nullopt;
}

// The expected runs missing from the merge, and the merged runs the suite does not list.
void list_missing_and_foreign(const std::vector<RunSpec>& expected, const std::vector<RunFile>& merged,
                              const std::set<std::string>& merged_ids, const std::set<std::string>& mixed) {
  std::vector<const RunSpec*> missing;
  std::set<std::string> expected_ids;
  for (const auto& s : expected) {
    expected_ids.insert(s.id);
    if (!merged_ids.count(s.id)) missing.push_back(&s);
  }
  std::cout << "missing: " << missing.size() << " of " << expected.size() << " expected run(s)\n";
  for (const RunSpec* s : missing) std::cout << "  " << describe_spec(*s) << "\n";
  // Runs the suite does not list: external models evaluated against this suite (from Python:
  // arch external), and runs of another suite (`mixed`, merged only under --allow-mixed).
  std::vector<const RunFile*> external, foreign;
  for (const auto& g : merged)
    if (!expected_ids.count(g.result.run_id)) (mixed.count(g.result.run_id) ? foreign : external).push_back(&g);
  if (!external.empty()) {
    std::cout << "models evaluated against this suite, not among its model entries: " << external.size() << " run(s)\n";
    for (const RunFile* g : external) std::cout << "  " << describe_run(g->result) << "\n";
  }
  if (!foreign.empty()) {
    std::cout << "written from another suite text (--allow-mixed): " << foreign.size() << " run(s)\n";
    for (const RunFile* g : foreign) std::cout << "  " << describe_run(g->result) << "\n";
  }
}

// Where a run's suite text first differs from the others': "line N: 'a' where the rest have 'b'".
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(sa, la)), hb = static_cast<bool>(std::getline(sb, lb));
    if (!ha && !hb) return "texts equal";
    if (!ha) la = "(end of text)";
    if (!hb) lb = "(end of text)";
    if (!ha || !hb || la != lb) return "line " + std::to_string(line) + ": '" + la + "' where the rest have '" + lb + "'";
  }
}

// Runs being trained right now (claimed by a live sweep), and claims left by sweeps that are gone.
void list_claims(const std::string& runs_dir, const std::vector<RunSpec>& expected, const std::set<std::string>& merged_ids) {
  std::vector<std::pair<std::string, Claim>> live, gone;
  for (auto& [id, claim] : claims_in(runs_dir)) {
    if (merged_ids.count(id)) continue;
    (claim_alive(claim, kDefaultClaimTimeout) ? live : gone).emplace_back(id, claim);
  }
  auto list = [&](const std::vector<std::pair<std::string, Claim>>& claims, const std::string& title) {
    if (claims.empty()) return;
    std::cout << title << ": " << claims.size() << " run(s)\n";
    for (const auto& [id, claim] : claims) {
      const auto it = std::find_if(expected.begin(), expected.end(), [&](const RunSpec& s) { return s.id == id; });
      std::cout << "  " << (it != expected.end() ? describe_spec(*it) : id) << ": " << describe_claim(claim) << "\n";
    }
  };
  list(live, "claimed by a sweep now");
  list(gone, "claimed by a sweep that is gone (the next sweep takes them over)");
}

void list_failed_and_diverged(const std::vector<RunFile>& merged) {
  for (const char* status : {"failed", "diverged"}) {
    std::vector<const RunFile*> list;
    for (const auto& g : merged)
      if (g.result.status == status) list.push_back(&g);
    if (list.empty()) continue;
    std::cout << status << ": " << list.size() << " run(s)\n";
    for (const RunFile* g : list)
      std::cout << "  " << describe_run(g->result) << (g->result.message.empty() ? "" : ": " + g->result.message) << "\n";
  }
}

// What a merge wrote, and what it lacks: "merged ...", then the missing runs, the runs of
// another suite text, the claimed runs, and the failed and diverged ones.
void print_merge(const std::string& runs_dir, const std::string& out, const SuiteContents& contents,
                 const std::optional<Suite>& stored, const std::set<std::string>& mixed) {
  static const std::vector<RunSpec> none;
  const std::vector<RunSpec>& expected = stored ? stored->runs : none;
  std::cout << "merged " << contents.runs.size() << " run(s) from " << runs_dir << " into " << out;
  if (!expected.empty()) std::cout << " (suite " << stored_suite_name(contents.suite_yaml) << ": " << expected.size() << " runs expected)";
  std::cout << "\n";
  std::set<std::string> merged_ids;
  for (const auto& g : contents.runs) merged_ids.insert(g.result.run_id);
  if (!expected.empty()) list_missing_and_foreign(expected, contents.runs, merged_ids, mixed);
  list_claims(runs_dir, expected, merged_ids);
  list_failed_and_diverged(contents.runs);
}

}  // namespace

int cmd_merge(const Args& args) {
  po::options_description opts(
      "srbench merge DIR --out FILE: join the run files of a suite into one suite file\n"
      "DIR is the folder of run files (<dir>/<suite>/runs) or the suite folder holding runs/\n\noptions");
  std::string dir, out;
  bool allow_mixed = false;
  opts.add_options()
      ("help,h", "show this help")
      ("out", po::value(&out), "suite file to write (required)")
      ("allow-mixed", po::bool_switch(&allow_mixed),
       "merge run files of different suite texts (the suite file keeps the text that accounts for most of them)")
      ("dir", po::value(&dir), "folder of run files (positional)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, "dir")) return 0;
  if (dir.empty()) throw UsageError("missing DIR, the folder of run files (see srbench merge --help)");
  if (out.empty()) throw UsageError("missing --out FILE (see srbench merge --help)");
  const auto out_folder = fs::path(out).parent_path();
  std::error_code ec;
  if (!out_folder.empty() && !fs::is_directory(out_folder, ec))
    throw UsageError("--out " + out + ": the folder " + out_folder.string() + " does not exist");

  // The run files (results/assemble.hpp), the suite text most of them carry, that suite expanded.
  const std::string runs_dir = runs_folder_of(dir);
  RunFiles found = read_run_files(runs_dir);
  if (found.found == 0) throw UsageError(runs_dir + ": no run files (*.h5) in this folder");
  warn(found.warnings);
  if (found.files.empty())
    throw std::runtime_error(runs_dir + ": none of the " + std::to_string(found.found) + " run files opens cleanly");
  // The suite text kept: of the texts the run files carry, the one that accounts for most of
  // them, ties to the text most files carry. A run file belongs to a text written from it, or
  // when that text lists its run, or when every run of the file's own text is one of its runs
  // (a text edited around finished runs — entries or claims added — keeps them, and the runs
  // evaluated from Python against the old text).
  std::map<std::string, std::set<std::string>> listed;
  for (const auto& g : found.files) {
    if (listed.count(g.suite_yaml)) continue;
    std::set<std::string>& ids = listed[g.suite_yaml];
    try {
      for (const auto& r : parse_suite(g.suite_yaml, "(suite stored in the run files)").runs) ids.insert(r.id);
    } catch (const std::exception&) {  // a text that does not expand lists no runs
    }
  }
  auto belongs = [&](const RunFile& g, const std::string& text) {
    if (g.suite_yaml == text) return true;
    const std::set<std::string>& runs = listed[text];
    const std::set<std::string>& own = listed[g.suite_yaml];
    return runs.count(g.result.run_id) > 0 ||
           (!own.empty() && std::includes(runs.begin(), runs.end(), own.begin(), own.end()));
  };
  auto accounted = [&](const std::string& text) {
    return std::count_if(found.files.begin(), found.files.end(), [&](const RunFile& g) { return belongs(g, text); });
  };
  std::string suite_text = common_suite_text(found.files);
  for (auto best = accounted(suite_text); const auto& [text, ids] : listed)
    if (const auto n = accounted(text); n > best) best = n, suite_text = text;
  const std::optional<Suite> stored = expand_stored_suite(suite_text);
  std::vector<const RunFile*> mixed;
  std::set<std::string> mixed_ids;
  for (const auto& g : found.files)
    if (!belongs(g, suite_text)) mixed.push_back(&g), mixed_ids.insert(g.result.run_id);
  if (!mixed.empty()) {
    const std::string what = std::to_string(mixed.size()) + " of the " + std::to_string(found.files.size()) +
                             " run files in " + runs_dir + " were written from another suite text than the rest " +
                             "and are not runs of theirs (run " + mixed.front()->result.run_id + ", " +
                             first_difference(mixed.front()->suite_yaml, suite_text) + ")";
    if (!allow_mixed)
      throw UsageError(what + "; merging them would report runs of two configurations as one suite. "
                       "Merge each suite text's runs into its own file, or give --allow-mixed to merge anyway "
                       "(the suite file keeps the text that accounts for most run files)");
    std::cerr << "srbench merge: warning: " << what << "; --allow-mixed: the suite file keeps the text that accounts for most run files\n";
  }

  const std::string splines_dir = (fs::path(runs_dir).parent_path() / "splines").string();
  const SuiteContents contents =
      assemble_suite(std::move(found), splines_dir, suite_text, stored ? &*stored : nullptr, OtherRuns::Append);
  warn(contents.warnings);
  write_suite_file(out, contents, compute_transfer(contents.results()));
  print_merge(runs_dir, out, contents, stored, mixed_ids);
  return 0;
}

namespace {

// --over KEY: a grid axis of the suite file's runs; UsageError naming the axes otherwise.
void check_over_axis(const std::vector<RunResult>& runs, const std::string& over) {
  const auto axes = grid_axes(runs);
  if (std::find(axes.begin(), axes.end(), over) != axes.end()) return;
  std::string list;
  for (const auto& a : axes) list += (list.empty() ? "" : ", ") + a;
  throw UsageError("--over " + over + ": not a grid axis of this suite (" +
                   (axes.empty() ? std::string("it has no grid") : "its axes: " + list) + ")");
}

std::vector<std::string> split_over(const std::string& over) {
  std::vector<std::string> out;
  std::stringstream in(over);
  for (std::string axis; std::getline(in, axis, ',');)
    if (!axis.empty()) out.push_back(axis);
  return out;
}

// report --check: the stored suite's expect: entries (a malformed one is a ConfigError, exit 2,
// located at its line of the stored suite text), evaluated; 1 when any fails.
int report_check(const SuiteFile& suite, const std::string& file, ReportFormat format, std::ostream& out) {
  const Suite stored = parse_suite(suite.suite_yaml, file + " (stored suite)");
  if (stored.expectations.empty()) {
    out << "the suite stored in " << file << " has no expect: entries\n";
    return 0;
  }
  const auto rows = check_expectations(stored.expectations, suite.runs);
  out << format_check(rows, format, file + "\nsuite " + stored.name);
  return std::all_of(rows.begin(), rows.end(), [](const CheckRow& r) { return r.holds; }) ? 0 : 1;
}

}  // namespace

namespace {

// `srbench report`'s options.
struct ReportArgs {
  std::string file, format_text = "table", over, agg, metric = "seq_acc";
  bool diagnostics = false, transfer_only = false, lengths = false, errors = false, chomsky = false, fitted = false;
  bool at_init = false, check = false, compact = false, tidy = false;
  std::vector<std::string> compare;
};

void add_report_options(po::options_description& opts, ReportArgs& a) {
  opts.add_options()
      ("help,h", "show this help")
      ("format", po::value(&a.format_text)->default_value("table"),
       "table | markdown | csv | latex (a booktabs tabular, the rest as % comments: for --compact, --lengths, "
       "--errors, --chomsky, --compare, --check and --agg)")
      ("compact", po::bool_switch(&a.compact),
       "the paper table: per task entry, model and grid point, runs fitted / runs and, per evaluated length "
       "(condition id), --metric's mean over seeds [95% interval] · k/n (k runs at their target accuracy at that "
       "length, of n)")
      ("metric", po::value(&a.metric)->default_value("seq_acc"), "with --compact: seq_acc | token_acc")
      ("tidy", po::bool_switch(&a.tidy),
       "csv, one row per run x evaluated length x condition: run_id, task, entry, model, arch, grid, seed, status, "
       "fitted, length, condition, loss, token_acc, seq_acc, seen_frac, input_space")
      ("diagnostics", po::bool_switch(&a.diagnostics),
       "report the diagnostics instead (attention entropy and max per layer and head, value and hidden "
       "entropy per layer; mean over seeds)")
      ("at-init", po::bool_switch(&a.at_init),
       "with --diagnostics: the diagnostics of the freshly initialised models, measured before the first step "
       "(runs from files written before they existed count as without diagnostics)")
      ("transfer", po::bool_switch(&a.transfer_only),
       "print only the transfer matrix of spline searches (table and markdown print it after the report)")
      ("lengths", po::bool_switch(&a.lengths),
       "report seq_acc per evaluated length (condition id), mean and max over seeds, and the mean over the "
       "lengths beyond training (ood_length_acc), mean and max over seeds")
      ("chomsky", po::bool_switch(&a.chomsky),
       "the Chomsky-hierarchy table: per task (with its level and chance) and model, the max and the mean over "
       "seeds of ood_token_acc (token accuracy beyond the training lengths)")
      ("over", po::value(&a.over),
       "with --chomsky: also take the max and mean over this grid axis (e.g. train.lr), as the benchmark does over "
       "learning rates; otherwise KEY[,KEY]: pool the seeds and these grid axes (e.g. seed,train.lr) and report "
       "each metric's --agg over them")
      ("agg", po::value(&a.agg),
       "mean | median | max | min: report each summary metric reduced by this over the seeds (and the --over "
       "axes), beside its mean with the 95% interval and k/n (k runs taken over, of the cell's n runs)")
      ("check", po::bool_switch(&a.check),
       "evaluate the suite's expect: entries (stored in the suite file) on its runs: one row per claim with the "
       "measured value, its 95% interval, k/n, the source and holds / FAILS; exit 0 when all hold, 1 when any "
       "fails, 2 on a malformed entry")
      ("fitted", po::bool_switch(&a.fitted),
       "every statistic over the seeds whose id_acc reached train.target_accuracy only (the counts still cover "
       "all runs): generalisation judged on runs that fitted their training distribution")
      ("compare", po::value(&a.compare)->multitoken(),
       "MODEL_A MODEL_B: the paired difference A - B per task entry, grid point and metric over the seeds both "
       "have, with a 95% bootstrap interval")
      ("errors", po::bool_switch(&a.errors),
       "report the error rate at scored positions (1 - token_acc; ffl: at reads) per condition and length, "
       "mean, std, min, median and max over seeds")
      ("file", po::value(&a.file), "suite file (positional)");
}

// The combinations report refuses (UsageError), and the format.
ReportFormat check_report_args(const ReportArgs& a, const po::variables_map& vm) {
  if (a.file.empty()) throw UsageError("missing FILE.h5, the suite file (see srbench report --help)");
  const bool pooled = !a.agg.empty() || (!a.over.empty() && !a.chomsky);
  if (a.diagnostics + a.lengths + a.errors + a.transfer_only + a.chomsky + !a.compare.empty() + a.check + pooled +
          a.compact + a.tidy > 1)
    throw UsageError(
        "--diagnostics, --lengths, --errors, --transfer, --chomsky, --compare, --check, --compact, --tidy and "
        "--agg/--over exclude each other");
  if (!a.compare.empty() && a.compare.size() != 2)
    throw UsageError("--compare takes two model entries, MODEL_A MODEL_B, got " + std::to_string(a.compare.size()));
  if (!a.agg.empty() && !parse_agg(a.agg)) throw UsageError("--agg must be mean, median, max or min, got '" + a.agg + "'");
  if (a.at_init && !a.diagnostics) throw UsageError("--at-init goes with --diagnostics");
  if (!vm["metric"].defaulted() && !a.compact) throw UsageError("--metric goes with --compact");
  if (a.metric != "seq_acc" && a.metric != "token_acc")
    throw UsageError("--metric must be seq_acc or token_acc, got '" + a.metric + "'");
  const auto format = parse_report_format(a.format_text);
  if (!format) throw UsageError("--format must be table, markdown, csv or latex, got '" + a.format_text + "'");
  if (a.tidy && !vm["format"].defaulted() && *format != ReportFormat::csv)
    throw UsageError("--tidy is csv only, got --format " + a.format_text);
  if (*format == ReportFormat::latex && (a.diagnostics || a.transfer_only || a.tidy ||
                                         !(a.compact || a.lengths || a.errors || a.chomsky || a.check ||
                                           !a.compare.empty() || pooled)))
    throw UsageError("--format latex is for --compact, --lengths, --errors, --chomsky, --compare, --check and --agg; "
                     "the summary, --diagnostics and --transfer have no LaTeX form (--compact is the paper table)");
  return a.tidy ? ReportFormat::csv : *format;
}

// The report's text (and, for --check, its exit code).
std::string report_text(const ReportArgs& a, SuiteFile& suite, ReportFormat format, int& code) {
  code = 0;
  if (a.check) {
    std::ostringstream os;
    code = report_check(suite, a.file, format, os);
    return os.str();
  }
  if (a.tidy) return format_tidy_report(suite.runs);
  if (a.at_init)
    for (auto& r : suite.runs) r.diag = std::move(r.diag_init);
  const auto groups = aggregate_runs(suite.runs, a.fitted);
  const std::string name = stored_suite_name(suite.suite_yaml);
  const std::string title = a.file + "\n" + std::to_string(suite.runs.size()) + " runs in " +
                            std::to_string(groups.size()) + " groups · suite " + (name.empty() ? "?" : name) +
                            " · created " + suite.created + " · srbench " + suite.srbench_version;
  if (a.compact) return format_compact_report(suite.runs, a.metric, a.fitted, format, title);
  if (!a.agg.empty() || (!a.over.empty() && !a.chomsky)) {
    const std::vector<std::string> axes = split_over(a.over);
    for (const auto& axis : axes)
      if (axis != "seed") check_over_axis(suite.runs, axis);
    return format_pooled_report(pool_runs(suite.runs, axes), a.agg.empty() ? "mean" : a.agg, axes, a.fitted, format,
                                title);
  }
  if (a.chomsky) {
    if (!a.over.empty()) check_over_axis(suite.runs, a.over);
    std::vector<RunResult> runs;
    for (const auto& r : suite.runs)
      if (!a.fitted || r.metrics.fitted == 1) runs.push_back(r);
    return format_chomsky_report(aggregate_chomsky(runs, a.over), format, title, a.over);
  }
  if (!a.compare.empty()) {
    for (const auto& m : a.compare)
      if (std::none_of(suite.runs.begin(), suite.runs.end(), [&](const RunResult& r) { return r.model == m; }))
        throw UsageError("--compare " + m + ": no run of this suite has that model entry");
    return format_compare_report(compare_models(suite.runs, a.compare[0], a.compare[1], a.fitted), a.compare[0],
                                 a.compare[1], format, title);
  }
  if (a.diagnostics) return format_diagnostics_report(groups, format, title, a.at_init);
  if (a.lengths) return format_length_report(groups, format, title);
  if (a.errors) return format_error_report(groups, format, title);
  const std::string transfer = format_transfer(compute_transfer(suite.runs), format);
  if (a.transfer_only) return transfer.empty() ? "no transfer matrix: no run took its splines from a search\n" : transfer;
  return format_report(groups, format, title) + (format == ReportFormat::csv ? "" : transfer);
}

}  // namespace

int cmd_report(const Args& args) {
  po::options_description opts(
      "srbench report FILE.h5 [--format table|markdown|csv|latex] [--compact [--metric M] | --tidy | --diagnostics\n"
      "[--at-init] | --lengths | --errors | --transfer | --chomsky [--over KEY] | --agg mean|median|max|min\n"
      "[--over KEY[,KEY]] | --check]: statistics across seeds of a suite file (runs grouped by task entry, model\n"
      "and grid point)\n\noptions");
  ReportArgs a;
  add_report_options(opts, a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, "file")) return 0;
  const ReportFormat format = check_report_args(a, vm);
  SuiteFile suite;
  try {
    suite = read_suite_file(a.file);
  } catch (const ResultsError& e) {
    throw UsageError(e.what());
  }
  int code = 0;
  const std::string text = report_text(a, suite, format, code);
  std::cout << (format == ReportFormat::latex ? latex_comments_outside_tables(text) : text);
  return code;
}

}  // namespace srbench::harness
