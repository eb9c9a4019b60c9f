// `srbench sweep` and `srbench eval`.
#include <omp.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/cli/cli.hpp"
#include "harness/results/results.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/claims.hpp"
#include "harness/sweep/splines.hpp"
#include "harness/sweep/sweep.hpp"
#include "tasks/format.hpp"

namespace po = boost::program_options;

namespace srbench::harness {

namespace {

// `text` as a whole non-negative number that fits an int, else -1.
int non_negative_int(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  return text.empty() || *end != '\0' || errno == ERANGE || v < 0 || v > INT_MAX ? -1 : static_cast<int>(v);
}

// "I/N" with 0 <= I < N.
std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  int i = -1, n = -1;
  if (slash != std::string::npos) i = non_negative_int(text.substr(0, slash)), n = non_negative_int(text.substr(slash + 1));
  if (i < 0 || n < 1 || i >= n) throw UsageError("--shard must be I/N with 0 <= I < N, got '" + text + "'");
  return {i, n};
}

// The shard from a Slurm job array, when --shard is not given.
bool shard_from_slurm(int& index, int& count) {
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  if (!id) return false;
  const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
  const char* cnt = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (!min || !cnt) throw UsageError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN/COUNT are not");
  index = std::atoi(id) - std::atoi(min);
  count = std::atoi(cnt);
  if (count < 1 || index < 0 || index >= count)
    throw UsageError("SLURM_ARRAY_* give shard " + std::to_string(index) + "/" + std::to_string(count) + ", which is not valid");
  return true;
}

// "16G", "512M", "64K", "1000000": bytes (K, M, G, T: powers of 1024).
uint64_t parse_size(const std::string& text, const std::string& option) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  const std::string unit = text.substr(std::min(used, text.size()));
  const std::string units = "KMGT";
  double scale = 1;
  if (unit.size() == 1 && units.find(static_cast<char>(std::toupper(unit[0]))) != std::string::npos)
    scale = static_cast<double>(1ull << (10 * (units.find(static_cast<char>(std::toupper(unit[0]))) + 1)));
  else if (!unit.empty()) v = -1;
  if (!(v > 0) || v * scale > 1e18)
    throw UsageError(option + " must be a size such as 16G, 512M or a number of bytes, got '" + text + "'");
  return static_cast<uint64_t>(v * scale);
}

std::vector<std::pair<std::string, std::string>> parse_sets(const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : sets) out.push_back(split_assignment(s, "--set"));
  return out;
}

}  // namespace

int cmd_sweep(const Args& args) {
  po::options_description opts("srbench sweep SUITE.yaml [options]: train and evaluate every run of a suite\n\noptions");
  std::string suite_path, shard, out;
  int jobs = 0, threads = 1;
  double claim_timeout = kDefaultClaimTimeout;
  std::string memory;
  std::vector<std::string> sets;
  opts.add_options()
      ("help,h", "show this help")
      ("jobs", po::value(&jobs)->default_value(0), "runs at once (default: the number of cores)")
      ("threads", po::value(&threads)->default_value(1), "OpenMP threads per run")
      ("shard", po::value(&shard), "I/N: run the runs whose index mod N is I (default from SLURM_ARRAY_*)")
      ("out", po::value(&out), "suite file (default results/<suite>.h5); run files go to <its folder>/<suite>/runs/")
      ("dry-run", "validate and list the runs, then stop")
      ("searches-only", "run only the spline searches (sharded by their index with --shard), not the runs")
      ("memory", po::value(&memory), "memory the runs at once may share, e.g. 16G, 512M (default: this machine's)")
      ("claim-timeout", po::value(&claim_timeout)->default_value(kDefaultClaimTimeout),
       "seconds without a heartbeat after which a run claimed by a sweep on another host is taken over")
      ("set", po::value(&sets)->composing(), "override KEY=VALUE for every run (model.X, train.X, eval.X, params.X)")
      ("suite", po::value(&suite_path), "the suite YAML (positional)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, "suite")) return 0;
  if (suite_path.empty()) throw UsageError("missing SUITE.yaml");
  SweepOptions o;
  o.jobs = jobs > 0 ? jobs : static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (jobs < 0) throw UsageError("--jobs must be at least 1, got " + std::to_string(jobs));
  if (threads < 1) throw UsageError("--threads must be at least 1, got " + std::to_string(threads));
  o.threads = threads;
  if (!(claim_timeout > 0)) throw UsageError("--claim-timeout must be a number of seconds > 0");
  o.claim_timeout = claim_timeout;
  if (!memory.empty()) o.memory = parse_size(memory, "--memory");
  if (!shard.empty()) std::tie(o.shard_index, o.shard_count) = parse_shard(shard), o.sharded = true;
  else o.sharded = shard_from_slurm(o.shard_index, o.shard_count);
  o.dry_run = vm.count("dry-run") > 0;
  o.searches_only = vm.count("searches-only") > 0;
  Suite suite = load_suite(suite_path, parse_sets(sets));
  resolve_splines_files(suite);
  o.out = suite_file_out(out, suite.name);
  const SweepOutcome done = run_sweep(suite, o);
  if (done.signal) return exit_code_of_signal(done.signal);
  return done.failed > 0 ? kExitRunsFailed : kExitOk;
}

int cmd_eval(const Args& args) {
  po::options_description opts(
      "srbench eval --checkpoint CK.h5 --task TASK --lengths 8,16,32 [options]: evaluate a saved model\n\noptions");
  std::string checkpoint, task_name, lengths_text, failures_path;
  std::vector<std::string> sets, shifts;
  int64_t examples = 512;
  uint64_t data_seed = 0;
  int threads = 1;
  opts.add_options()
      ("help,h", "show this help")
      ("checkpoint", po::value(&checkpoint), "checkpoint file (model.md layout), or a run file saved with save_checkpoint")
      ("task", po::value(&task_name), "task name")
      ("set", po::value(&sets)->composing(), "task parameter KEY=VALUE (the training distribution; repeatable)")
      ("lengths", po::value(&lengths_text), "comma-separated lengths, e.g. 8,16,32")
      ("shift", po::value(&shifts)->composing(), "a shifted condition k=v[,k=v] (repeatable)")
      ("examples", po::value(&examples)->default_value(512), "examples per length and condition")
      ("data-seed", po::value(&data_seed)->default_value(0), "seed of the evaluation examples")
      ("failures", po::value(&failures_path),
       "write every example with a wrong scored prediction to this file, one JSON line each: "
       "`srbench sample`'s fields and its condition, index and predictions")
      ("threads", po::value(&threads)->default_value(1), "OpenMP threads");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  if (checkpoint.empty()) throw UsageError("missing --checkpoint");
  if (task_name.empty()) throw UsageError("missing --task");
  if (lengths_text.empty()) throw UsageError("missing --lengths");
  if (examples < 1) throw UsageError("--examples must be at least 1");
  if (threads < 1) throw UsageError("--threads must be at least 1");
  std::vector<int> lengths;
  for (const auto& item : tasks::split_list(lengths_text)) {
    const int v = non_negative_int(item);  // past an int: refused, not wrapped
    if (v < 1) throw UsageError("--lengths: '" + item + "' is not a length >= 1");
    lengths.push_back(v);
  }
  tasks::RawParams params;
  for (const auto& s : sets) {
    auto [k, v] = split_assignment(s, "--set");
    params[k] = v;
  }
  const auto task = tasks::make_task(task_name, params, {data_seed});
  std::vector<std::pair<std::string, std::unique_ptr<tasks::Task>>> conditions;
  conditions.emplace_back("id", nullptr);
  for (const auto& sh : shifts) {
    tasks::RawParams p = params;
    for (const auto& kv : tasks::split_list(sh)) {
      auto [k, v] = split_assignment(kv, "--shift");
      p[k] = v;
    }
    auto t = tasks::make_task(task_name, p, {data_seed});
    if (!(t->vocab() == task->vocab())) throw UsageError("--shift " + sh + " changes the task's vocabulary");
    conditions.emplace_back(sh, std::move(t));
  }
  omp_set_num_threads(threads);
  model::Model m = load_model_file(checkpoint);
  if (m.config().vocab != task->vocab().size())
    throw UsageError("the checkpoint's vocabulary has " + std::to_string(m.config().vocab) + " tokens but task '" +
                     task_name + "' with these parameters has " + std::to_string(task->vocab().size()));
  for (int n : lengths) {
    task->check_length(n);
    if (task->max_sequence_length(n) > m.config().max_len)
      throw UsageError("length " + std::to_string(n) + " makes sequences of " +
                       std::to_string(task->max_sequence_length(n)) + " tokens, beyond the checkpoint's max_len " +
                       std::to_string(m.config().max_len));
  }
  std::ofstream failures;
  if (!failures_path.empty()) {
    failures.open(failures_path, std::ios::binary | std::ios::trunc);
    if (!failures) throw UsageError("--failures " + failures_path + ": cannot write this file");
  }
  std::printf("%-8s %-20s %10s %10s %10s\n", "length", "condition", "loss", "token_acc", "seq_acc");
  for (const auto& [label, shifted] : conditions) {
    const tasks::Task& t = shifted ? *shifted : *task;
    for (int n : lengths) {
      const auto set = evaluation_set(t, data_seed, tasks::Stream::Eval, n, examples);
      WrongExample wrong;
      if (failures.is_open())
        wrong = [&, n = n, &label = label](size_t i, const std::vector<int32_t>& predictions) {
          std::string line = tasks::example_jsonl(t, n, set[i]);
          line.pop_back();  // the closing brace
          line += ", \"condition\": " + tasks::json_quote(label) + ", \"index\": " + std::to_string(i) +
                  ", \"predictions\": [";
          for (size_t p = 0; p < predictions.size(); ++p) {
            if (p) line += ",";
            line += predictions[p] == tasks::kNotScored ? "null" : tasks::json_quote(t.vocab().name(predictions[p]));
          }
          failures << line << "]}\n";
        };
      const EvalScore s = evaluate_examples(m, set, 64, nullptr, wrong);
      std::printf("%-8d %-20s %10.4f %10.4f %10.4f\n", n, label.c_str(), s.loss, s.token_acc, s.seq_acc);
    }
  }
  if (failures.is_open()) {
    failures.close();
    if (!failures) throw std::runtime_error("--failures " + failures_path + ": writing the file failed");
  }
  return 0;
}

}  // namespace srbench::harness
