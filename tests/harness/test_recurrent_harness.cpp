// The harness with recurrent models (recurrent.md, "Config keys" and "Diagnostics"): keys that do
// not apply to an entry's arch refused in the entry and dropped when inherited, grid axes that do
// not apply, a spline search with a recurrent model, max_len; diagnostics without attention;
// eval of a recurrent checkpoint; a scratchpad under lstm; the report's arch column.
#include <omp.h>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <Eigen/Dense>
#include <cmath>
#include <set>
#include <string>

#include "harness/report/aggregate.hpp"
#include "harness/report/report.hpp"
#include "harness/results/results.hpp"
#include "harness/run/data.hpp"
#include "harness/run/diagnostics.hpp"
#include "harness/run/trainer.hpp"
#include "harness/suite/suite.hpp"
#include "common/h5.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
namespace h5 = srbench::h5;
using srbench::model::Arch;
using srbench::model::Model;
using srbench::model::ModelConfig;
using srbench::test::config_error_of;
using srbench::test::replaced;
using srbench::test::run_of;
using srbench::test::run_srbench;
using srbench::test::TempDir;

namespace {

// A suite mixing a transformer and recurrent entries, with transformer keys in its defaults.
const std::string kMixed = R"(name: mixed
seeds: [0]
defaults:
  model: {layers: 1, d_model: 16, heads: 4, max_len: 32, position: alibi}
  train: {steps: 30, batch: 8, lr: 3e-3, warmup: 5, eval_every: 15, length: [1, 8]}
  eval: {lengths: [8, 16], examples: 16, val_examples: 16}
tasks:
  - task: parity
models:
  - name: tf
  - name: lstm
    model: {arch: lstm}
  - name: stack
    model: {arch: stack_rnn, stack_size: 4, stack_cell_size: 2}
)";

// The defaults and the task of a small parity suite (lines 2-6 after its name).
const std::string kSmallParity =
    "defaults:\n  model: {layers: 1, d_model: 16, max_len: 32}\n  train: {steps: 30, length: [1, 8]}\ntasks:\n"
    "  - task: parity\n";
}  // namespace

TEST_CASE("recurrent suite: inherited keys that do not apply are dropped, and the run is as if never set",
          "[harness][recurrent][suite]") {
  const Suite s = parse_suite(kMixed, "s.yaml");
  REQUIRE(s.runs.size() == 3);
  const RunSpec &tf = run_of(s, "tf"), &lstm = run_of(s, "lstm"), &stack = run_of(s, "stack");
  CHECK(tf.model.arch == Arch::Transformer);
  CHECK(tf.dropped.empty());
  CHECK(lstm.model.arch == Arch::Lstm);
  CHECK(lstm.dropped == std::vector<std::string>{"heads (defaults.model.heads)", "position (defaults.model.position)"});
  CHECK(stack.dropped == lstm.dropped);
  // not in the resolved config: the same id as the suite that never states them for this entry
  CHECK(lstm.resolved_yaml.find("heads") == std::string::npos);
  CHECK(lstm.resolved_yaml.find("position") == std::string::npos);
  CHECK(lstm.resolved_yaml.find("arch: lstm") != std::string::npos);
  CHECK(stack.resolved_yaml.find("stack_size: 4") != std::string::npos);
  const std::string plain = replaced(kMixed, "heads: 4, max_len: 32, position: alibi", "max_len: 32");
  const Suite p = parse_suite(plain, "s.yaml");
  CHECK(run_of(p, "lstm").id == lstm.id);
  CHECK(run_of(p, "lstm").resolved_yaml == lstm.resolved_yaml);
  CHECK(run_of(p, "stack").id == stack.id);
  CHECK(run_of(p, "tf").id != tf.id);  // the transformer kept them
  // the dropped value is reset, not kept under the hood
  CHECK(lstm.model.heads == ModelConfig{}.heads);
  CHECK(lstm.model.position == ModelConfig{}.position);
  // likewise from --set and from a task entry's model section
  const Suite o = parse_suite(plain, "s.yaml", {{"model.mlp_ratio", "2"}});
  CHECK(run_of(o, "lstm").id == lstm.id);
  CHECK(run_of(o, "lstm").dropped == std::vector<std::string>{"mlp_ratio (--set model.mlp_ratio)"});
  CHECK(run_of(o, "tf").id != run_of(p, "tf").id);
  const Suite t = parse_suite(replaced(plain, "  - task: parity\n", "  - task: parity\n    model: {norm: rms}\n"), "s.yaml");
  CHECK(run_of(t, "lstm").id == lstm.id);
  CHECK(run_of(t, "lstm").dropped == std::vector<std::string>{"norm (tasks[0].model.norm)"});
  // a recurrent arch's own key in the defaults is dropped for the transformer, kept for its arch
  const Suite k = parse_suite(replaced(plain, "max_len: 32}", "max_len: 32, stack_size: 6}"), "s.yaml");
  CHECK(run_of(k, "tf").id == run_of(p, "tf").id);
  CHECK(run_of(k, "tf").dropped == std::vector<std::string>{"stack_size (defaults.model.stack_size)"});
  CHECK(run_of(k, "lstm").id == lstm.id);
  CHECK(run_of(k, "stack").id == stack.id);  // its entry's stack_size 4 overrides the default
}

TEST_CASE("recurrent suite: a key stated in the model entry that does not apply is refused (exit 2)",
          "[harness][recurrent][suite]") {
  struct Case {
    std::string from, to, key, arch;
    int line;
  };
  const std::vector<Case> cases = {
      {"model: {arch: lstm}", "model: {arch: lstm, heads: 2}", "heads", "lstm", 12},
      {"model: {arch: lstm}", "model: {arch: lstm,\n            attn_spline: {keypoints: 8}}", "attn_spline.keypoints",
       "lstm", 13},
      {"model: {arch: lstm}", "model: {arch: lstm, stack_size: 8}", "stack_size", "lstm", 12},
      {"model: {arch: lstm}", "model: {arch: lstm, nonlinearity: relu}", "nonlinearity", "lstm", 12},
      {"model: {arch: stack_rnn, stack_size: 4, stack_cell_size: 2}",
       "model: {arch: stack_rnn, stack_size: 4, stack_cell_size: 2, tape_size: 8}", "tape_size", "stack_rnn", 14},
      {"  - name: tf\n", "  - name: tf\n    model: {stack_size: 3}\n", "stack_size", "transformer", 11},
      {"model: {arch: lstm}", "model: {arch: lstm, freeze_splines: true}", "freeze_splines", "lstm", 12},
  };
  TempDir dir;
  for (const auto& c : cases) {
    const std::string text = replaced(kMixed, c.from, c.to);
    const std::string err = config_error_of(text);
    INFO(err);
    const std::string entry = c.arch == "transformer" ? "tf" : c.arch == "lstm" ? "lstm" : "stack";
    CHECK_THAT(err, Catch::Contains("s.yaml:" + std::to_string(c.line) + ":"));
    CHECK_THAT(err, Catch::Contains(".model." + c.key + ": '" + c.key + "' does not apply to arch " + c.arch));
    CHECK_THAT(err, Catch::Contains("model entry '" + entry + "'"));
    // through the command line: exit 2, the message on stderr, nothing listed
    srbench::test::write_file(dir.file("s.yaml"), text);
    const auto r = run_srbench({"sweep", dir.file("s.yaml"), "--dry-run"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("'" + c.key + "' does not apply to arch " + c.arch));
    CHECK(r.out.empty());
  }
  // an unknown arch: the nearest valid name
  const std::string err = config_error_of(replaced(kMixed, "arch: lstm", "arch: lstn"));
  CHECK_THAT(err, Catch::Contains("s.yaml:12: models[1].model.arch: unknown value 'lstn' (did you mean 'lstm'?)"));
  CHECK_THAT(config_error_of(replaced(kMixed, "arch: stack_rnn", "arch: stackrnn")),
             Catch::Contains("(did you mean 'stack_rnn'?)"));
}

TEST_CASE("recurrent suite: --dry-run lists each model entry's dropped keys", "[harness][recurrent][suite]") {
  TempDir dir;
  srbench::test::write_file(dir.file("s.yaml"), kMixed);
  const auto r = run_srbench({"sweep", dir.file("s.yaml"), "--dry-run", "--out", dir.file("r/m.h5")});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("dropped keys (inherited, not applying to the entry's arch"));
  CHECK_THAT(r.out, Catch::Contains("  model entry 'lstm' (arch lstm): heads (defaults.model.heads), position "
                                    "(defaults.model.position)\n"));
  CHECK_THAT(r.out, Catch::Contains("  model entry 'stack' (arch stack_rnn): heads (defaults.model.heads)"));
  CHECK(r.out.find("model entry 'tf'") == std::string::npos);
  // a transformer-only suite prints no such section
  srbench::test::write_file(dir.file("t.yaml"), replaced(replaced(kMixed, "    model: {arch: lstm}\n", ""),
                                                         "    model: {arch: stack_rnn, stack_size: 4, stack_cell_size: 2}\n", ""));
  const auto t = run_srbench({"sweep", dir.file("t.yaml"), "--dry-run", "--out", dir.file("r/t.h5")});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("dropped") == std::string::npos);
}

TEST_CASE("recurrent suite: model.arch as a grid axis; an axis that does not apply does not expand",
          "[harness][recurrent][suite]") {
  const std::string text = "name: g\nseeds: [0, 1]\n" + kSmallParity + R"(grid:
  model.arch: [transformer, gru, stack_rnn]
  model.heads: [2, 4]
  model.stack_size: [4, 8]
)";
  const Suite s = parse_suite(text, "g.yaml");
  std::vector<std::string> grids;
  for (const auto& r : s.runs)
    if (r.seed == 0) grids.push_back(r.grid);
  CHECK(grids == std::vector<std::string>{
                     "model.arch=transformer model.heads=2 model.stack_size=-",
                     "model.arch=transformer model.heads=4 model.stack_size=-",
                     "model.arch=gru model.heads=- model.stack_size=-",
                     "model.arch=stack_rnn model.heads=- model.stack_size=4",
                     "model.arch=stack_rnn model.heads=- model.stack_size=8"});
  CHECK(s.runs.size() == 10);
  std::set<std::string> ids, configs;
  for (const auto& r : s.runs) ids.insert(r.id), configs.insert(r.resolved_yaml);
  CHECK(ids.size() == s.runs.size());  // never two runs with one resolved config
  CHECK(configs.size() == s.runs.size());
  for (const auto& r : s.runs) {
    INFO(r.grid);
    const YAML::Node model = YAML::Load(r.resolved_yaml)["model"];
    CHECK(static_cast<bool>(model["stack_size"]) == (r.model.arch == Arch::StackRnn));
    CHECK(static_cast<bool>(model["heads"]) == (r.model.arch == Arch::Transformer));
  }
}

TEST_CASE("recurrent suite: a spline search with a recurrent model is an error; max_len is checked",
          "[harness][recurrent][suite]") {
  const std::string search = "name: sr\n" + kSmallParity + R"(searches:
  - name: s
    task: parity
    model: {arch: gru, activation: spline}
)";
  // the search's stated spline activation is not what is refused first: arch comes first
  const std::string err = config_error_of(replaced(search, "{arch: gru, activation: spline}", "{arch: gru}"));
  CHECK_THAT(err, Catch::Contains("s.yaml:10: searches[0].model.arch: a spline search needs a model with splines; "
                                  "arch gru has none"));
  CHECK_THAT(config_error_of(replaced(search, "{arch: gru, activation: spline}", "{activation: spline}") +
                             "models:\n  - name: r\n    model: {arch: rnn, splines_from: s}\n"),
             Catch::Contains("'splines_from' does not apply to arch rnn (model entry 'r'"));
  // max_len: an evaluated sequence longer than it is refused, as for the transformer
  const std::string lengths = R"(name: ml
defaults:
  model: {arch: lstm, layers: 1, d_model: 16, max_len: 32}
  train: {steps: 30, length: [1, 8]}
  eval: {lengths: [8, 40]}
tasks:
  - task: parity
)";
  CHECK_THAT(config_error_of(lengths), Catch::Contains("s.yaml:5: defaults.eval.lengths: evaluation length 40 makes "
                                                       "sequences of up to 40 tokens, beyond the model's max_len 32"));
  TempDir dir;
  srbench::test::write_file(dir.file("ml.yaml"), lengths);
  CHECK(run_srbench({"sweep", dir.file("ml.yaml"), "--dry-run"}).exit_code == 2);
}

TEST_CASE("recurrent diagnostics: hidden_entropy per layer equals a per-example reference; no attention",
          "[harness][recurrent][diagnostics]") {
  for (const char* arch : {"rnn", "lstm", "gru", "stack_rnn", "tape_rnn", "mamba"}) {
    INFO(arch);
    ModelConfig cfg;
    cfg.vocab = 7, cfg.layers = 2, cfg.d_model = 8;
    cfg.set("arch", arch);
    Model m(cfg);
    m.init(5);
    REQUIRE_FALSE(m.has_attention());
    std::vector<srbench::tasks::Example> examples;
    for (int k = 0; k < 6; ++k) {
      srbench::tasks::Example e;
      for (int t = 0; t < 2 + (k * 5) % 9; ++t) e.push((k + 3 * t) % cfg.vocab, -1);
      examples.push_back(e);
    }
    // reference: each example alone (no padding); the rows' matrix entropy spelled out
    std::vector<double> he(2, 0);
    for (const auto& e : examples) {
      const int T = static_cast<int>(e.tokens.size());
      m.forward(e.tokens.data(), nullptr, 1, T);
      for (int l = 0; l < 2; ++l) {
        Eigen::MatrixXd X(T, cfg.d_model);
        for (int t = 0; t < T; ++t)
          for (int c = 0; c < cfg.d_model; ++c) X(t, c) = m.block_output(l)[t * cfg.d_model + c];
        for (int t = 0; t < T; ++t)
          if (X.row(t).norm() > 0) X.row(t) /= X.row(t).norm();
        const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(X * X.transpose(), Eigen::EigenvaluesOnly);
        const Eigen::VectorXd lam = es.eigenvalues().cwiseMax(0.0);
        double s = 0;
        for (Eigen::Index i = 0; i < lam.size(); ++i)
          if (lam[i] > 0) s -= lam[i] / lam.sum() * std::log(lam[i] / lam.sum());
        he[l] += s / static_cast<double>(examples.size());
      }
    }
    CHECK(he[0] > 1e-3);  // the reference measures something (rows not all parallel)
    for (int batch : {1, 4, 64}) {
      const Diagnostics d = compute_diagnostics(m, examples, batch);
      CHECK(d.layers == 2);
      CHECK(d.heads == 0);
      CHECK(d.attn_entropy.empty());
      CHECK(d.attn_max.empty());
      CHECK(d.value_entropy.empty());
      REQUIRE(d.hidden_entropy.size() == 2);
      for (int l = 0; l < 2; ++l) CHECK(d.hidden_entropy[l] == Approx(he[l]).epsilon(1e-5));
    }
  }
}

TEST_CASE("recurrent runs: trained, stored without attention diagnostics, reported with their arch",
          "[harness][recurrent][diagnostics][report]") {
  omp_set_num_threads(1);
  const Suite s = parse_suite(kMixed, "s.yaml");
  TempDir dir;
  std::vector<std::string> files;
  for (const auto& spec : s.runs) {
    const RunResult r = run_training(spec);
    INFO(spec.model_name << ": " << r.status << " " << r.message);
    REQUIRE(r.status == "ok");
    CHECK(r.eval.size() == 2);
    files.push_back(dir.file(r.run_id + ".h5"));
    write_run_file(files.back(), r, kMixed, nullptr);
    // the run file's diag group: every dataset for the transformer, hidden_entropy only otherwise
    srbench::h5::Id f = srbench::h5::open_file(files.back(), "run file");
    srbench::h5::Id g = srbench::h5::open_group(f, "runs/" + r.run_id + "/diag");
    const bool tf = spec.model.arch == Arch::Transformer;
    for (const char* name : {"attn_entropy", "attn_max", "value_entropy"}) CHECK(srbench::h5::has_link(g, name) == tf);
    REQUIRE(srbench::h5::has_link(g, "hidden_entropy"));
    CHECK(srbench::h5::read_array<double>(g, "hidden_entropy").size() == 1);
    const RunResult back = read_run_file(files.back());
    CHECK(back.diag.layers == 1);
    CHECK(back.diag.heads == (tf ? 4 : 0));
    CHECK(back.diag.hidden_entropy == r.diag.hidden_entropy);
    CHECK(std::isfinite(back.diag.hidden_entropy[0]));
    CHECK(run_arch(back) == std::string(srbench::model::to_string(spec.model.arch)));
  }
  const std::string suite_path = dir.file("mixed.h5");
  srbench::test::write_suite_file_of(suite_path, kMixed, files);
  const auto csv = run_srbench({"report", suite_path, "--format", "csv"});
  REQUIRE(csv.exit_code == 0);
  CHECK_THAT(csv.out, Catch::StartsWith("task,entry,model,arch,grid,"));
  for (const char* row : {"\nparity,parity,tf,transformer,,1,1,0,0,", "\nparity,parity,lstm,lstm,,1,1,0,0,",
                          "\nparity,parity,stack,stack_rnn,,1,1,0,0,"})
    CHECK_THAT(csv.out, Catch::Contains(row));
  const auto table = run_srbench({"report", suite_path});
  CHECK_THAT(table.out, Catch::Contains("parity · model lstm (lstm)"));
  const auto diag = run_srbench({"report", suite_path, "--diagnostics", "--format", "csv"});
  REQUIRE(diag.exit_code == 0);
  CHECK_THAT(diag.out, Catch::Contains(",lstm,lstm,,1,1,0,0,0,hidden_entropy[layer=0],1,"));
  CHECK(diag.out.find(",lstm,lstm,,1,1,0,0,0,value_entropy") == std::string::npos);
  CHECK(diag.out.find(",lstm,lstm,,1,1,0,0,0,attn_") == std::string::npos);
  CHECK_THAT(diag.out, Catch::Contains(",tf,transformer,,1,1,0,0,0,\"attn_entropy[layer=0,head=3]\",1,"));
  const auto diag_table = run_srbench({"report", suite_path, "--diagnostics"});
  CHECK_THAT(diag_table.out, Catch::Contains("(no attention: attn_entropy, attn_max and value_entropy do not exist)"));
}

TEST_CASE("recurrent eval: a run saved with save_checkpoint (lstm) reproduces its evaluation rows",
          "[harness][recurrent][eval]") {
  TempDir dir;
  const std::string run_file =
      srbench::test::check_eval_reproduces_run(dir, "{arch: lstm, layers: 2, d_model: 16, max_len: 40}");
  // the checkpoint holds the recurrent layout and config
  const auto ck = load_model_file(run_file);
  CHECK(ck.config().arch == Arch::Lstm);
  CHECK(ck.config().layers == 2);
  // beyond the checkpoint's max_len: refused
  const auto bad = run_srbench({"eval", "--checkpoint", run_file, "--task", "flipflop", "--lengths", "64"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("beyond the checkpoint's max_len 40"));
}

TEST_CASE("recurrent runs: a scratchpad under lstm, and a finite training set under gru",
          "[harness][recurrent][suite]") {
  omp_set_num_threads(1);
  const std::string text = R"(name: sp
seeds: [0]
defaults:
  model: {layers: 1, d_model: 32, max_len: 64}
  train: {steps: 600, batch: 32, lr: 3e-3, eval_every: 100000, length: [1, 8]}
  eval: {lengths: [8, 16], examples: 64, val_examples: 16}
tasks:
  - task: parity
    name: pad
    params: {output: scratchpad}
  - task: parity
    name: finite
    train: {examples: 200}
models:
  - name: lstm
    model: {arch: lstm}
  - name: gru
    model: {arch: gru}
)";
  const Suite s = parse_suite(text, "sp.yaml");
  REQUIRE(s.runs.size() == 4);
  for (const auto& spec : s.runs) {
    if ((spec.entry == "pad") != (spec.model_name == "lstm")) continue;
    const RunResult r = run_training(spec);
    INFO(spec.entry << " " << spec.model_name << ": " << r.status << " " << r.message);
    REQUIRE(r.status == "ok");
    REQUIRE(r.eval.size() == 2);
    CHECK(std::isfinite(r.metrics.final_train_loss));
    if (spec.entry == "pad") {
      // the scratchpad writes every state after the input: learned at the training lengths
      CHECK(r.metrics.id_acc >= 0.9);
    } else {
      CHECK(r.eval[0].seen_frac > 0.0);  // length 8 of a 200-example set: some inputs occurred in training
    }
  }
}
