// `srbench merge` (run files → one suite file) and `srbench report` (a suite file → statistics
// across seeds).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "harness/cli/cli.hpp"
#include "harness/report/report.hpp"
#include "harness/results/results.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/claims.hpp"
#include "harness/sweep/splines.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace srbench::harness {

namespace {

using GoodRun = RunFile;

// The run files of a merge: `<dir>/runs/*.h5` when `dir` holds a `runs` folder, else `dir/*.h5`;
// temporary files (`*.tmp*`) of runs being written are left out. Sorted by name.
std::vector<std::string> run_files_in(const std::string& dir, std::string& runs_dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw UsageError(dir + ": no such folder");
  if (!fs::is_directory(dir, ec)) throw UsageError(dir + ": not a folder (give the folder of run files, <dir>/<suite>/runs, or the suite folder above it)");
  runs_dir = fs::is_directory(fs::path(dir) / "runs", ec) ? (fs::path(dir) / "runs").string() : dir;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(runs_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.find(".tmp") != std::string::npos) continue;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".h5") == 0) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The suite text most run files carry (ties: the first file's).
std::string common_suite_text(const std::vector<GoodRun>& runs) {
  std::map<std::string, int> count;
  for (const auto& r : runs) ++count[r.suite_yaml];
  std::string best = runs.front().suite_yaml;
  for (const auto& r : runs)
    if (count[r.suite_yaml] > count[best]) best = r.suite_yaml;
  return best;
}

std::string describe_run(const RunResult& r) {
  return r.run_id + "  " + r.entry + " · " + r.model + (r.grid.empty() ? "" : " · " + r.grid) + " · seed " +
         std::to_string(r.seed);
}

std::string describe_spec(const RunSpec& s) {
  return "#" + std::to_string(s.index) + " " + s.id + "  " + s.entry + " · " + s.model_name +
         (s.grid.empty() ? "" : " · " + s.grid) + " · seed " + std::to_string(s.seed);
}

std::string suite_name(const std::string& yaml) {
  try {
    const YAML::Node n = YAML::Load(yaml);
    if (n.IsMap() && n["name"] && n["name"].IsScalar()) return n["name"].as<std::string>();
  } catch (const std::exception&) {
  }
  return "";
}

}  // namespace

int cmd_merge(const Args& args) {
  po::options_description opts(
      "srbench merge DIR --out FILE: join the run files of a suite into one suite file\n"
      "DIR is the folder of run files (<dir>/<suite>/runs) or the suite folder holding runs/\n\noptions");
  std::string dir, out;
  opts.add_options()
      ("help,h", "show this help")
      ("out", po::value(&out), "suite file to write (required)")
      ("dir", po::value(&dir), "folder of run files (positional)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, "dir")) return 0;
  if (dir.empty()) throw UsageError("missing DIR, the folder of run files (see srbench merge --help)");
  if (out.empty()) throw UsageError("missing --out FILE (see srbench merge --help)");
  const auto out_folder = fs::path(out).parent_path();
  std::error_code ec;
  if (!out_folder.empty() && !fs::is_directory(out_folder, ec))
    throw UsageError("--out " + out + ": the folder " + out_folder.string() + " does not exist");

  std::string runs_dir;
  const auto files = run_files_in(dir, runs_dir);
  if (files.empty()) throw UsageError(runs_dir + ": no run files (*.h5) in this folder");

  // Every run file that opens cleanly; a run id seen twice keeps its first file.
  std::vector<GoodRun> good;
  std::set<std::string> seen;
  for (const auto& path : files) {
    try {
      GoodRun g = read_run_file_at(path);
      if (!seen.insert(g.result.run_id).second) {
        std::cerr << "srbench merge: warning: skipping " << path << ": run " << g.result.run_id
                  << " is already in another file\n";
        continue;
      }
      good.push_back(std::move(g));
    } catch (const std::exception& e) {
      std::cerr << "srbench merge: warning: skipping " << path << ": " << e.what() << "\n";
    }
  }
  if (good.empty()) throw std::runtime_error(runs_dir + ": none of the " + std::to_string(files.size()) + " run files opens cleanly");

  const std::string suite_text = common_suite_text(good);
  if (const auto other = std::count_if(good.begin(), good.end(), [&](const GoodRun& g) { return g.suite_yaml != suite_text; }))
    std::cerr << "srbench merge: warning: " << other << " run file(s) were written from a different suite text; "
              << "the suite file keeps the text most run files carry\n";

  // Expected runs: the suite text expanded again. Rows follow the runs' index in it; runs it does
  // not list (written from another suite text) come after, by run id.
  std::vector<RunSpec> expected;
  std::vector<SearchSpec> searches;
  bool expanded = false;
  try {
    Suite stored = parse_suite(suite_text, "(suite stored in the run files)");
    resolve_splines_files(stored);
    expected = std::move(stored.runs);
    searches = std::move(stored.searches);
    expanded = true;
  } catch (const std::exception& e) {
    std::cerr << "srbench merge: warning: the stored suite does not expand (" << e.what()
              << "); cannot list missing runs, rows are ordered by run id\n";
  }
  std::map<std::string, size_t> index_of;
  for (const auto& s : expected) index_of.emplace(s.id, s.index);
  std::stable_sort(good.begin(), good.end(), [&](const GoodRun& a, const GoodRun& b) {
    const auto ia = index_of.find(a.result.run_id), ib = index_of.find(b.result.run_id);
    const bool ka = ia != index_of.end(), kb = ib != index_of.end();
    if (ka != kb) return ka;
    if (ka) return ia->second < ib->second;
    return a.result.run_id < b.result.run_id;
  });

  // The searches' splines files, <suite folder>/splines/<name>.h5: those of the stored suite's
  // searches whose file holds that search's config (all that open, if the suite does not expand).
  std::vector<std::string> splines;
  const fs::path splines_dir = fs::path(runs_dir).parent_path() / "splines";
  if (fs::is_directory(splines_dir, ec)) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(splines_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name.find(".tmp") == std::string::npos && name.size() > 3 &&
          name.compare(name.size() - 3, 3, ".h5") == 0)
        names.push_back(e.path().string());
    }
    std::sort(names.begin(), names.end());
    for (const auto& path : names) {
      try {
        const SplinesFile f = read_splines_file(path);
        const bool belongs = !expanded || std::any_of(searches.begin(), searches.end(), [&](const SearchSpec& sp) {
          return sp.name == f.name && sp.resolved_yaml == f.config;
        });
        if (belongs) splines.push_back(path);
        else std::cerr << "srbench merge: warning: skipping " << path << ": not a search of the stored suite\n";
      } catch (const std::exception& e) {
        std::cerr << "srbench merge: warning: skipping " << path << ": " << e.what() << "\n";
      }
    }
  }
  std::vector<RunResult> results;
  for (const auto& g : good) results.push_back(g.result);
  write_suite_file(out, suite_text, good, splines, compute_transfer(results));

  const std::string name = suite_name(suite_text);
  std::cout << "merged " << good.size() << " run(s) from " << runs_dir << " into " << out;
  if (!expected.empty()) std::cout << " (suite " << name << ": " << expected.size() << " runs expected)";
  std::cout << "\n";

  std::vector<const RunSpec*> missing;
  for (const auto& s : expected)
    if (!seen.count(s.id)) missing.push_back(&s);
  if (!expected.empty()) {
    std::cout << "missing: " << missing.size() << " of " << expected.size() << " expected run(s)\n";
    for (const RunSpec* s : missing) std::cout << "  " << describe_spec(*s) << "\n";
    std::vector<const GoodRun*> foreign;
    for (const auto& g : good)
      if (!index_of.count(g.result.run_id)) foreign.push_back(&g);
    if (!foreign.empty()) {
      std::cout << "not in the suite (written from another suite text): " << foreign.size() << " run(s)\n";
      for (const GoodRun* g : foreign) std::cout << "  " << describe_run(g->result) << "\n";
    }
  }
  // Runs being trained right now (claimed by a live sweep), and claims left by sweeps that are gone.
  std::vector<std::pair<std::string, Claim>> live, gone;
  for (auto& [id, claim] : claims_in(runs_dir)) {
    if (seen.count(id)) continue;
    (claim_alive(claim, kDefaultClaimTimeout) ? live : gone).emplace_back(id, claim);
  }
  auto list_claims = [&](const std::vector<std::pair<std::string, Claim>>& claims, const std::string& title) {
    if (claims.empty()) return;
    std::cout << title << ": " << claims.size() << " run(s)\n";
    for (const auto& [id, claim] : claims) {
      const auto it = std::find_if(expected.begin(), expected.end(), [&](const RunSpec& s) { return s.id == id; });
      std::cout << "  " << (it != expected.end() ? describe_spec(*it) : id) << ": " << describe_claim(claim) << "\n";
    }
  };
  list_claims(live, "claimed by a sweep now");
  list_claims(gone, "claimed by a sweep that is gone (the next sweep takes them over)");
  for (const char* status : {"failed", "diverged"}) {
    std::vector<const GoodRun*> list;
    for (const auto& g : good)
      if (g.result.status == status) list.push_back(&g);
    if (list.empty()) continue;
    std::cout << status << ": " << list.size() << " run(s)\n";
    for (const GoodRun* g : list)
      std::cout << "  " << describe_run(g->result) << (g->result.message.empty() ? "" : ": " + g->result.message) << "\n";
  }
  return 0;
}

int cmd_report(const Args& args) {
  po::options_description opts(
      "srbench report FILE.h5 [--format table|markdown|csv] [--diagnostics [--at-init] | --lengths | --errors |\n"
      "--transfer | --chomsky [--over KEY]]: statistics across seeds of a suite file (runs grouped by task entry,\n"
      "model and grid point)\n\noptions");
  std::string file, format_text = "table";
  bool diagnostics = false, transfer_only = false, lengths = false, errors = false, chomsky = false, fitted = false;
  bool at_init = false;
  std::string over;
  std::vector<std::string> compare;
  opts.add_options()
      ("help,h", "show this help")
      ("format", po::value(&format_text)->default_value("table"), "table | markdown | csv")
      ("diagnostics", po::bool_switch(&diagnostics),
       "report the diagnostics instead (attention entropy and max per layer and head, value and hidden "
       "entropy per layer; mean over seeds)")
      ("at-init", po::bool_switch(&at_init),
       "with --diagnostics: the diagnostics of the freshly initialised models, measured before the first step "
       "(runs from files written before they existed count as without diagnostics)")
      ("transfer", po::bool_switch(&transfer_only),
       "print only the transfer matrix of spline searches (table and markdown print it after the report)")
      ("lengths", po::bool_switch(&lengths),
       "report seq_acc per evaluated length (condition id), mean and max over seeds, and the mean over the "
       "lengths beyond training (ood_length_acc), mean and max over seeds")
      ("chomsky", po::bool_switch(&chomsky),
       "the Chomsky-hierarchy table: per task (with its level and chance) and model, the max and the mean over "
       "seeds of ood_token_acc (token accuracy beyond the training lengths)")
      ("over", po::value(&over),
       "with --chomsky: also take the max and mean over this grid axis (e.g. train.lr), as the benchmark does over "
       "learning rates")
      ("fitted", po::bool_switch(&fitted),
       "every statistic over the seeds whose id_acc reached train.target_accuracy only (the counts still cover "
       "all runs): generalisation judged on runs that fitted their training distribution")
      ("compare", po::value(&compare)->multitoken(),
       "MODEL_A MODEL_B: the paired difference A - B per task entry, grid point and metric over the seeds both "
       "have, with a 95% bootstrap interval")
      ("errors", po::bool_switch(&errors),
       "report the error rate at scored positions (1 - token_acc; ffl: at reads) per condition and length, "
       "mean, std, min, median and max over seeds")
      ("file", po::value(&file), "suite file (positional)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, "file")) return 0;
  if (file.empty()) throw UsageError("missing FILE.h5, the suite file (see srbench report --help)");
  if (diagnostics + lengths + errors + transfer_only + chomsky + !compare.empty() > 1)
    throw UsageError("--diagnostics, --lengths, --errors, --transfer, --chomsky and --compare exclude each other");
  if (!compare.empty() && compare.size() != 2)
    throw UsageError("--compare takes two model entries, MODEL_A MODEL_B, got " + std::to_string(compare.size()));
  if (!over.empty() && !chomsky) throw UsageError("--over goes with --chomsky");
  if (at_init && !diagnostics) throw UsageError("--at-init goes with --diagnostics");
  const auto format = parse_report_format(format_text);
  if (!format) throw UsageError("--format must be table, markdown or csv, got '" + format_text + "'");
  SuiteFile suite;
  try {
    suite = read_suite_file(file);
  } catch (const ResultsError& e) {
    throw UsageError(e.what());
  }
  if (at_init)
    for (auto& r : suite.runs) r.diag = std::move(r.diag_init);
  const auto groups = aggregate_runs(suite.runs, fitted);
  const std::string name = suite_name(suite.suite_yaml);
  const std::string title = file + "\n" + std::to_string(suite.runs.size()) + " runs in " +
                            std::to_string(groups.size()) + " groups · suite " + (name.empty() ? "?" : name) +
                            " · created " + suite.created + " · srbench " + suite.srbench_version;
  const std::string transfer = format_transfer(compute_transfer(suite.runs), *format);
  if (chomsky) {
    const auto axes = grid_axes(suite.runs);
    if (!over.empty() && std::find(axes.begin(), axes.end(), over) == axes.end()) {
      std::string list;
      for (const auto& a : axes) list += (list.empty() ? "" : ", ") + a;
      throw UsageError("--over " + over + ": not a grid axis of this suite (" +
                       (axes.empty() ? std::string("it has no grid") : "its axes: " + list) + ")");
    }
    std::vector<RunResult> runs;
    for (const auto& r : suite.runs)
      if (!fitted || r.metrics.fitted == 1) runs.push_back(r);
    std::cout << format_chomsky_report(aggregate_chomsky(runs, over), *format, title, over);
    return 0;
  }
  if (!compare.empty()) {
    for (const auto& m : compare)
      if (std::none_of(suite.runs.begin(), suite.runs.end(), [&](const RunResult& r) { return r.model == m; }))
        throw UsageError("--compare " + m + ": no run of this suite has that model entry");
    std::cout << format_compare_report(compare_models(suite.runs, compare[0], compare[1], fitted), compare[0],
                                       compare[1], *format, title);
    return 0;
  }
  if (transfer_only) std::cout << (transfer.empty() ? "no transfer matrix: no run took its splines from a search\n" : transfer);
  else if (diagnostics) std::cout << format_diagnostics_report(groups, *format, title, at_init);
  else if (lengths) std::cout << format_length_report(groups, *format, title);
  else if (errors) std::cout << format_error_report(groups, *format, title);
  else std::cout << format_report(groups, *format, title) << (*format == ReportFormat::csv ? "" : transfer);
  return 0;
}

}  // namespace srbench::harness
