#include "harness/sweep/sweep.hpp"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "harness/report/transfer.hpp"
#include "harness/results/results.hpp"
#include "harness/run/search.hpp"
#include "harness/run/trainer.hpp"
#include "harness/sweep/children.hpp"
#include "harness/sweep/splines.hpp"

namespace fs = std::filesystem;

namespace srbench::harness {

std::string runs_dir_for(const std::string& out, const std::string& suite_name) {
  fs::path dir = fs::path(out).parent_path();
  if (dir.empty()) dir = ".";
  return (dir / suite_name / "runs").string();
}

std::string splines_file_for(const std::string& out, const std::string& suite_name, const std::string& search) {
  return (fs::path(runs_dir_for(out, suite_name)).parent_path() / "splines" / (search + ".h5")).string();
}

namespace {

// "; evaluation took 12.3% of the runs' time (4.1 s of 33.5 s)" over the runs that timed it
// (files written before eval_s existed did not), else "".
std::string evaluation_share(const std::vector<RunResult>& results) {
  double eval = 0, wall = 0;
  for (const auto& r : results)
    if (std::isfinite(r.eval_s) && r.wall_s > 0) eval += r.eval_s, wall += r.wall_s;
  if (wall <= 0) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "; evaluation took %.1f%% of the runs' time (%.1f s of %.1f s)", 100.0 * eval / wall,
                eval, wall);
  return buf;
}


using Clock = std::chrono::steady_clock;

// A search is finished when its splines file opens and was written by this very search (its
// resolved config); a file left by an earlier version of the search is redone.
bool search_finished(const std::string& path, const SearchSpec& search) {
  if (!fs::exists(path)) return false;
  try {
    return read_splines_file(path).config == search.resolved_yaml;
  } catch (const std::exception&) {
    return false;
  }
}

// In the child: run the search, write its splines file, exit. Never returns.
[[noreturn]] void child_search(const Suite& suite, const SearchSpec& search, const std::string& path, int threads) {
  omp_set_num_threads(threads);
  int code = 0;
  try {
    const SearchResult r = run_search(search);
    write_splines_file(path, r, suite.text);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "srbench sweep: search %s: cannot write its result: %s\n", search.name.c_str(), e.what());
    code = 1;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

std::string run_file(const std::string& runs_dir, const RunSpec& r) { return runs_dir + "/" + r.id + ".h5"; }

bool finished(const std::string& path) {
  if (!fs::exists(path)) return false;
  try {
    read_run_file(path);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string fmt_acc(double v) {
  if (std::isnan(v)) return "  -  ";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string fmt_duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
  return buf;
}

// In the child: train, write the run file, exit. Never returns.
[[noreturn]] void child_run(const Suite& suite, const RunSpec& spec, const std::string& path, int threads) {
  omp_set_num_threads(threads);
  int code = 0;
  try {
    std::unique_ptr<model::Model> trained;
    const RunResult r = run_training(spec, spec.train.save_checkpoint ? &trained : nullptr);
    write_run_file(path, r, suite.text, trained.get());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "srbench sweep: run %s: cannot write its result: %s\n", spec.id.c_str(), e.what());
    code = 1;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

// A run whose process died without leaving a readable file.
RunResult failed_result(const RunSpec& spec, const std::string& message, double wall_s) {
  RunResult r;
  r.run_id = spec.id, r.task = spec.task, r.entry = spec.entry, r.model = spec.model_name, r.grid = spec.grid;
  r.seed = spec.seed;
  r.config_yaml = spec.resolved_yaml;
  r.status = "failed";
  r.message = message;
  r.wall_s = wall_s;
  return r;
}

}  // namespace

int run_sweep(const Suite& suite, const SweepOptions& opts) {
  const std::string runs_dir = runs_dir_for(opts.out, suite.name);
  std::vector<const RunSpec*> mine;
  for (const auto& r : suite.runs)
    if (static_cast<int>(r.index % static_cast<size_t>(opts.shard_count)) == opts.shard_index) mine.push_back(&r);

  std::vector<const RunSpec*> todo;
  size_t already = 0;
  for (const RunSpec* r : mine) {
    if (opts.searches_only) break;
    if (finished(run_file(runs_dir, *r))) ++already;
    else todo.push_back(r);
  }

  // Searches first: unsharded, every search of the suite; a shard, those its unfinished runs
  // need; --searches-only, the searches whose index mod N is I. Finished ones are not redone.
  std::vector<bool> wanted(suite.searches.size(), false);
  for (const auto& sp : suite.searches)
    wanted[sp.index] = opts.searches_only ? static_cast<int>(sp.index % static_cast<size_t>(opts.shard_count)) == opts.shard_index
                                          : opts.shard_count == 1;
  for (const RunSpec* r : todo)
    if (r->search >= 0) wanted[static_cast<size_t>(r->search)] = true;
  std::vector<const SearchSpec*> searches_todo;
  size_t searches_done = 0;
  for (const auto& sp : suite.searches) {
    if (!wanted[sp.index]) continue;
    if (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp)) ++searches_done;
    else searches_todo.push_back(&sp);
  }

  if (opts.dry_run) {
    std::cout << "suite " << suite.name << ": " << suite.runs.size() << " runs";
    if (opts.shard_count > 1) std::cout << ", shard " << opts.shard_index << "/" << opts.shard_count << ": " << mine.size();
    std::cout << " (" << already << " finished, " << todo.size() << " to run); results in " << runs_dir << "\n";
    if (!suite.searches.empty()) {
      std::cout << "searches: " << suite.searches.size() << " (" << searches_done << " of this call's finished, "
                << searches_todo.size() << " to run)\n";
      for (const auto& sp : suite.searches)
        std::cout << "  search " << sp.index << "  " << sp.id << "  " << sp.name << "  task=" << sp.task
                  << "  population=" << sp.population << "  steps=" << sp.train.steps
                  << (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp) ? "  [done]" : "") << "\n";
    }
    if (opts.searches_only) return 0;
    for (const RunSpec* r : mine) {
      std::cout << "  " << r->index << "  " << r->id << "  " << r->entry << "  " << r->model_name << "  seed=" << r->seed;
      if (!r->grid.empty()) std::cout << "  " << r->grid;
      std::cout << (finished(run_file(runs_dir, *r)) ? "  [done]" : "") << "\n";
    }
    return 0;
  }

  if (!opts.searches_only) {
    fs::create_directories(runs_dir);
    // Leftovers of killed runs: only the temporary files of the runs this call will redo, never
    // those of runs that other shards sharing the folder may be writing right now.
    std::set<std::string> redo;
    for (const RunSpec* r : todo) redo.insert(r->id + ".h5.tmp");
    for (const auto& entry : fs::directory_iterator(runs_dir)) {
      const std::string name = entry.path().filename().string();
      const auto tmp = name.find(".h5.tmp");
      if (tmp != std::string::npos && redo.count(name.substr(0, tmp + 7))) {
        std::error_code ec;
        fs::remove(entry.path(), ec);
      }
    }
  }

  if (!searches_todo.empty()) {
    const std::string dir = fs::path(splines_file_for(opts.out, suite.name, "x")).parent_path().string();
    fs::create_directories(dir);
    std::cout << "searches: " << searches_todo.size() << " to run, " << searches_done << " already finished\n" << std::flush;
    run_in_children(
        searches_todo.size(), opts.jobs,
        [&](size_t i) {
          const SearchSpec& sp = *searches_todo[i];
          child_search(suite, sp, splines_file_for(opts.out, suite.name, sp.name), opts.threads);
        },
        [&](size_t i, int status, double secs) {
          const SearchSpec& sp = *searches_todo[i];
          std::string line = "search " + sp.name + "  " + fmt_duration(secs) + "  ";
          try {
            const SplinesFile f = read_splines_file(splines_file_for(opts.out, suite.name, sp.name));
            line += f.status;
            std::string accs;
            for (const auto& m : f.models) accs += (accs.empty() ? "" : " ") + fmt_acc(m.final_val_acc);
            line += "  final val_acc: " + accs;
          } catch (const std::exception&) {
            line += "failed (the search process " + exit_text(status) + " before writing its splines)";
          }
          if (!opts.quiet) std::cout << line << "\n" << std::flush;
        });
  }
  if (opts.searches_only) {
    std::cout << "searches done (shard " << opts.shard_index << "/" << opts.shard_count << ")\n";
    return 0;
  }

  const size_t total = mine.size();
  size_t done = already, bad = 0;
  std::cout << "sweep " << suite.name << ": " << total << " runs";
  if (opts.shard_count > 1) std::cout << " (shard " << opts.shard_index << "/" << opts.shard_count << ")";
  std::cout << ", " << already << " already finished, " << todo.size() << " to run, " << opts.jobs << " at a time, "
            << opts.threads << " thread(s) each\n" << std::flush;

  const auto start = Clock::now();
  size_t finished_here = 0;
  run_in_children(
      todo.size(), opts.jobs,
      [&](size_t i) {
        RunSpec spec = *todo[i];
        if (spec.search >= 0) {  // stage 2: the splines of its search, finished by now
          try {
            take_search_splines(spec, splines_file_for(opts.out, suite.name, suite.searches[spec.search].name));
          } catch (const std::exception& e) {  // recorded as the run itself would have recorded it
            RunResult r = failed_result(spec, e.what(), 0);
            r.splines_from = spec.splines_from;
            try {
              write_run_file(run_file(runs_dir, spec), r, suite.text, nullptr);
            } catch (const std::exception&) {
              _exit(1);
            }
            _exit(0);
          }
        }
        child_run(suite, spec, run_file(runs_dir, spec), opts.threads);
      },
      [&](size_t i, int status, double run_s) {
        const RunSpec& spec = *todo[i];
        const std::string path = run_file(runs_dir, spec);
        RunResult r;
        try {
          r = read_run_file(path);
        } catch (const std::exception&) {
          r = failed_result(spec, "the run process " + exit_text(status) + " before writing its result", run_s);
          write_run_file(path, r, suite.text, nullptr);
        }
        ++done, ++finished_here;
        if (r.status != "ok") ++bad;
        if (opts.quiet) return;
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        const double eta = elapsed / static_cast<double>(finished_here) * static_cast<double>(total - done);
        std::cout << "[" << done << "/" << total << "] " << spec.entry << "  " << spec.model_name << "  seed=" << spec.seed;
        if (!spec.grid.empty()) std::cout << "  " << spec.grid;
        std::cout << "  id=" << fmt_acc(r.metrics.id_acc) << " ood=" << fmt_acc(r.metrics.ood_length_acc)
                  << " shift=" << fmt_acc(r.metrics.shift_acc) << "  " << fmt_duration(r.wall_s) << "  " << r.status;
        if (r.status != "ok") std::cout << " (" << r.message << ")";
        std::cout << "\n  progress: " << done << "/" << total << " done, elapsed " << fmt_duration(elapsed) << ", ETA "
                  << fmt_duration(eta) << "\n" << std::flush;
      });

  if (opts.shard_count == 1) {
    std::vector<RunFile> files;
    std::vector<RunResult> results;
    for (const auto& r : suite.runs)
      if (fs::exists(run_file(runs_dir, r))) {
        files.push_back(read_run_file_at(run_file(runs_dir, r)));
        results.push_back(files.back().result);
      }
    std::vector<std::string> splines;
    for (const auto& sp : suite.searches)
      if (search_finished(splines_file_for(opts.out, suite.name, sp.name), sp))
        splines.push_back(splines_file_for(opts.out, suite.name, sp.name));
    write_suite_file(opts.out, suite.text, files, splines, compute_transfer(results));
    std::cout << "wrote " << opts.out << " (" << files.size() << " runs)" << evaluation_share(results);
  } else {
    std::cout << "shard " << opts.shard_index << "/" << opts.shard_count << " done; join the shards with: srbench merge "
              << fs::path(runs_dir).parent_path().string() << " --out " << opts.out;
  }
  std::cout << (bad ? ", " + std::to_string(bad) + " run(s) failed or diverged" : "") << "\n";
  return static_cast<int>(bad);
}

}  // namespace srbench::harness
