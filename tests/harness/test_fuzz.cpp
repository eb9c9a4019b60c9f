// Hostile input, continuously: a deterministic mutation fuzzer over the shipped suites
// (configs/*.yaml), a few malformed ones, `--set` overrides and task parameters. Every input must
// validate or be refused with the project's own errors (ConfigError, TaskError, ModelError —
// exit 2 with a message naming what and where); never another exception, a crash or a hang. The
// suite parser, the memory estimate and every task builder run in-process, within a time budget
// (SRBENCH_FUZZ_SECONDS, default 25); every 40th input also goes through the binary
// (`srbench sweep --dry-run`, `srbench sample`), whose exit must be 0, or 2 with a message. The
// inputs are the same on every machine (a fixed seed); how many fit in the budget is printed.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>

#include "harness/run/resources.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/splines.hpp"
#include "model/error.hpp"
#include "tasks/task.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Values a careless or hostile user writes.
const std::vector<std::string> kHostile = {
    "-1", "0", "1", "2", "-0", "1e308", "-1e308", "1e-320", "nan", ".nan", "inf", ".inf", "-.inf", "999999999999",
    "9223372036854775807", "-9223372036854775808", "18446744073709551616", "", "[]", "{}", "~", "null", "'x'", "*",
    "&a", "!!binary x", "1.5", "true", "[1, -3]", "[0, 1000000000]", "0x10", "\"\"", "[[1]]", "{a: 1}", "- 1",
    "[1, 2", "{", "'", "\"", "|", ">", "%", "@", "`", "1..3", "1..", "..4", "3..1", "1..9:0", "1..9:-1", "[4, 8, 1e9]",
    "\xff\xfe", "\x01", "a\tb", "00000000000000000000001", "+5", "0.0000001", "65536", "2147483648", "-2147483649"};

// Keys an override or an added line may name.
const std::vector<std::string> kKeys = {
    "model.layers", "model.d_model", "model.heads", "model.mlp_ratio", "model.max_len", "model.position",
    "model.activation", "model.attention", "model.lime", "model.norm", "model.mlp_spline.keypoints",
    "model.mlp_spline", "model.splines_from", "train.steps", "train.batch", "train.lr", "train.warmup",
    "train.schedule", "train.weight_decay", "train.clip", "train.eval_every", "train.target_accuracy",
    "train.data_seed", "train.length", "train.examples", "train.length_per", "eval.lengths", "eval.examples",
    "eval.val_examples", "eval.shifts", "params.p1", "params.output", "params.vocab_size", "params.modulus",
    "params.states", "params.n", "seeds", "name", "grid", "model.vocab", "train.nope", "params"};

const char* kMalformed[] = {
    "", "name: x\n", "tasks: []\n", "name: s\ntasks:\n  - task: parity\n", "name: s\ntasks:\n  - task: nope\n",
    "name: s\ntasks:\n  - task: parity\n    params: {p1: 2}\n", "name: s\ngrid: {model.layers: []}\ntasks: [{task: parity}]\n",
    "name: s\nseeds: [0, 0]\ntasks: [{task: parity}]\n", "name: s\ntasks: [{task: parity, train: {length: [5, 1]}}]\n",
    "[1, 2, 3]\n", "name: [x]\n", "&a [*a]\n", "name: s\ntasks: [{task: modadd, params: {modulus: 1}}]\n"};

std::string mutate(const std::string& text, std::mt19937& rng) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  if (lines.empty()) lines.push_back("");
  const int edits = 1 + static_cast<int>(pick(3));
  for (int e = 0; e < edits; ++e) {
    const size_t i = pick(lines.size());
    std::string& l = lines[i];
    switch (pick(9)) {
      case 0:  // a value replaced by a hostile one
        if (const auto c = l.find(": "); c != std::string::npos) l = l.substr(0, c + 2) + kHostile[pick(kHostile.size())];
        else l += kHostile[pick(kHostile.size())];
        break;
      case 1:  // inside a flow map or list: one item's value replaced
        if (const auto c = l.find(": ", l.find('{') == std::string::npos ? 0 : l.find('{')); c != std::string::npos) {
          const auto end = l.find_first_of(",}]", c);
          l = l.substr(0, c + 2) + kHostile[pick(kHostile.size())] + (end == std::string::npos ? "" : l.substr(end));
        }
        break;
      case 2: lines.erase(lines.begin() + static_cast<long>(i)); break;
      case 3: lines.insert(lines.begin() + static_cast<long>(i), l); break;
      case 4: std::swap(l, lines[pick(lines.size())]); break;
      case 5: {  // a key added, at this line's indentation
        const std::string key = kKeys[pick(kKeys.size())];
        const std::string indent = l.substr(0, l.find_first_not_of(' ') == std::string::npos ? 0 : l.find_first_not_of(' '));
        lines.insert(lines.begin() + static_cast<long>(i), indent + key.substr(key.rfind('.') + 1) + ": " + kHostile[pick(kHostile.size())]);
        break;
      }
      case 6:  // bytes flipped
        if (!l.empty()) l[pick(l.size())] = static_cast<char>(rng() & 0xff);
        break;
      case 7: l = std::string(pick(6), ' ') + l.substr(l.find_first_not_of(' ') == std::string::npos ? 0 : l.find_first_not_of(' ')); break;
      case 8: l = l.substr(0, pick(l.size() + 1)); break;  // cut short
    }
    if (lines.empty()) lines.push_back("");
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  if (pick(20) == 0) out.resize(pick(out.size() + 1));  // the file cut short
  return out;
}

std::vector<std::pair<std::string, std::string>> random_sets(std::mt19937& rng) {
  std::vector<std::pair<std::string, std::string>> sets;
  const int n = static_cast<int>(rng() % 3);
  for (int k = 0; k < n; ++k) sets.emplace_back(kKeys[rng() % kKeys.size()], kHostile[rng() % kHostile.size()]);
  return sets;
}

// "" when the outcome is acceptable (validated, or one of the project's errors with a message);
// otherwise what went wrong.
std::string try_suite(const std::string& text, const std::vector<std::pair<std::string, std::string>>& sets) {
  const auto t0 = Clock::now();
  std::string bad;
  try {
    Suite s = parse_suite(text, "fuzz.yaml", sets);
    resolve_splines_files(s);
    for (size_t i = 0; i < s.runs.size() && i < 64; ++i) static_cast<void>(estimate_memory(s.runs[i]));
  } catch (const ConfigError& e) {
    if (std::string(e.what()).empty()) bad = "ConfigError without a message";
  } catch (const srbench::tasks::TaskError& e) {
    if (std::string(e.what()).empty()) bad = "TaskError without a message";
  } catch (const srbench::model::ModelError& e) {
    if (std::string(e.what()).empty()) bad = "ModelError without a message";
  } catch (const std::exception& e) {
    bad = std::string("an exception that is not a config error: ") + e.what();
  }
  if (bad.empty() && Clock::now() - t0 > std::chrono::seconds(5)) bad = "took more than 5 s (a hang?)";
  return bad;
}

std::string try_task(const srbench::tasks::TaskInfo& info, const srbench::tasks::RawParams& params, int n) {
  try {
    const auto task = srbench::tasks::make_task(info.name, params);
    task->check_length(n);
    static_cast<void>(task->max_sequence_length(n));
  } catch (const srbench::tasks::TaskError& e) {
    if (std::string(e.what()).empty()) return "TaskError without a message";
  } catch (const std::exception& e) {
    return std::string("an exception that is not a TaskError: ") + e.what();
  }
  return "";
}

void require_clean_exit(const srbench::test::RunResult& r, const std::string& what) {
  INFO(what << "\nexit " << r.exit_code << "\n" << r.out.substr(0, 2000) << r.err.substr(0, 2000));
  REQUIRE((r.exit_code == 0 || r.exit_code == 2));
  if (r.exit_code == 2) REQUIRE(!r.err.empty());
}

}  // namespace

TEST_CASE("fuzz: mutated suites, --set overrides and task parameters end in exit 0 or 2 with a message", "[harness][fuzz]") {
  const char* env = std::getenv("SRBENCH_FUZZ_SECONDS");
  const double budget = env ? std::atof(env) : 25;
  std::vector<std::string> seeds;
  for (const auto& e : fs::directory_iterator(SRBENCH_SOURCE_DIR "/configs"))
    if (e.path().extension() == ".yaml") seeds.push_back(srbench::test::read_file(e.path().string()));
  std::sort(seeds.begin(), seeds.end());
  REQUIRE(seeds.size() >= 5);
  for (const char* m : kMalformed) seeds.push_back(m);
  for (const auto& s : seeds) REQUIRE(try_suite(s, {}).empty());  // the seeds themselves

  TempDir dir;
  std::mt19937 rng(15);
  const auto& tasks = srbench::tasks::task_registry();
  const auto start = Clock::now();
  long suites = 0, accepted = 0, task_inputs = 0, binary = 0;
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  while (elapsed() < budget) {
    // A suite: a seed mutated, with some --set overrides.
    const std::string text = mutate(seeds[rng() % seeds.size()], rng);
    const auto sets = random_sets(rng);
    const std::string bad = try_suite(text, sets);
    std::string set_text;
    for (const auto& [k, v] : sets) set_text += " --set '" + k + "=" + v + "'";
    INFO("input " << suites << set_text << "\n-----\n" << text << "-----");
    REQUIRE(bad == "");
    ++suites;
    try {
      parse_suite(text, "fuzz.yaml", sets);
      ++accepted;
    } catch (const std::exception&) {
    }
    // Task parameters: every parameter of a task given a hostile value.
    const auto& info = tasks[rng() % tasks.size()];
    srbench::tasks::RawParams params;
    for (const auto& p : info.params)
      if (rng() % 2) params[p.name] = kHostile[rng() % kHostile.size()];
    if (rng() % 4 == 0) {  // a parameter the task does not have
      const std::string key = kKeys[rng() % kKeys.size()];
      params[key.rfind("params.", 0) == 0 ? key.substr(7) : key] = "1";
    }
    const int n = static_cast<int>(rng() % 70) - 3;
    const std::string task_bad = try_task(info, params, n);
    INFO("task " << info.name << ", n " << n);
    REQUIRE(task_bad == "");
    ++task_inputs;
    // Every 40th through the binary.
    if (suites % 40 == 1) {
      srbench::test::write_file(dir.file("f.yaml"), text);
      std::vector<std::string> args = {"sweep", dir.file("f.yaml"), "--dry-run", "--out", dir.file("r/f.h5")};
      for (const auto& [k, v] : sets) args.insert(args.end(), {"--set", k + "=" + v});
      require_clean_exit(run_srbench(args), "sweep --dry-run");
      std::vector<std::string> sample = {"sample", info.name, "-n", std::to_string(n), "--count", "2"};
      for (const auto& [k, v] : params) sample.insert(sample.end(), {"--set", k + "=" + v});
      require_clean_exit(run_srbench(sample), "sample " + info.name);
      binary += 2;
    }
  }
  std::cout << "fuzz: " << suites << " mutated suites (" << accepted << " valid), " << task_inputs
            << " task parameter sets, " << binary << " runs of the binary in " << elapsed() << " s\n";
  CHECK(suites > 100);
}
