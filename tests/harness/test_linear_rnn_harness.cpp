// The harness with linear-recurrent models (linear-rnn.md, "Config keys" and "Harness"): keys that
// do not apply to mamba refused in its entry and dropped when inherited, mamba's keys refused
// elsewhere, grids over its keys, hidden_entropy diagnostics per layer, training and the report's
// arch column, eval of a checkpoint, and the --dry-run memory estimate against a measured peak.
#include <omp.h>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "common/h5.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/results/results.hpp"
#include "harness/run/resources.hpp"
#include "harness/run/trainer.hpp"
#include "harness/suite/suite.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::model::Arch;
using srbench::model::Eigenvalues;
using srbench::model::ModelConfig;
using srbench::test::config_error_of;
using srbench::test::replaced;
using srbench::test::run_of;
using srbench::test::run_srbench;
using srbench::test::TempDir;

namespace {

// A transformer, two mambas and an lstm, with transformer keys in the defaults.
const std::string kLinear = R"(name: linear
seeds: [0]
defaults:
  model: {layers: 1, d_model: 16, heads: 4, max_len: 32, position: alibi}
  train: {steps: 30, batch: 8, lr: 3e-3, warmup: 5, eval_every: 15, length: [1, 8]}
  eval: {lengths: [8, 16], examples: 16, val_examples: 16}
tasks:
  - task: parity
models:
  - name: tf
  - name: mamba
    model: {arch: mamba, d_state: 4}
  - name: signed
    model: {arch: mamba, d_state: 4, eigenvalues: signed}
  - name: lstm
    model: {arch: lstm}
)";

}  // namespace

TEST_CASE("mamba suite: inherited keys that do not apply are dropped, and mamba's own keys for other archs",
          "[harness][mamba][suite]") {
  const Suite s = parse_suite(kLinear, "s.yaml");
  REQUIRE(s.runs.size() == 4);
  const RunSpec &tf = run_of(s, "tf"), &mamba = run_of(s, "mamba"), &sgn = run_of(s, "signed");
  CHECK(mamba.model.arch == Arch::Mamba);
  CHECK(mamba.model.d_state == 4);
  CHECK(mamba.model.eigenvalues == Eigenvalues::Positive);
  CHECK(sgn.model.eigenvalues == Eigenvalues::Signed);
  CHECK(mamba.dropped == std::vector<std::string>{"heads (defaults.model.heads)", "position (defaults.model.position)"});
  CHECK(mamba.resolved_yaml.find("heads") == std::string::npos);
  CHECK(mamba.resolved_yaml.find("arch: mamba") != std::string::npos);
  CHECK(mamba.id != sgn.id);
  // the same ids as a suite that never states them
  const std::string plain = replaced(kLinear, "heads: 4, max_len: 32, position: alibi", "max_len: 32");
  const Suite p = parse_suite(plain, "s.yaml");
  CHECK(run_of(p, "mamba").id == mamba.id);
  CHECK(run_of(p, "signed").id == sgn.id);
  CHECK(run_of(p, "mamba").model.heads == ModelConfig{}.heads);
  // mamba's keys in the defaults: dropped for the transformer and the lstm, kept for mamba
  const Suite k = parse_suite(replaced(plain, "max_len: 32}", "max_len: 32, d_conv: 2, expand: 3}"), "s.yaml");
  CHECK(run_of(k, "tf").id == run_of(p, "tf").id);
  CHECK(run_of(k, "tf").dropped == std::vector<std::string>{"d_conv (defaults.model.d_conv)",
                                                             "expand (defaults.model.expand)"});
  CHECK(run_of(k, "lstm").id == run_of(p, "lstm").id);
  CHECK(run_of(k, "mamba").model.d_conv == 2);
  CHECK(run_of(k, "mamba").model.expand == 3);
  CHECK(run_of(k, "mamba").id != mamba.id);
  CHECK(run_of(k, "mamba").dropped.empty());
  (void)tf;
}

TEST_CASE("mamba suite: a key stated in an entry that does not apply is refused (exit 2), naming it",
          "[harness][mamba][suite]") {
  struct Case {
    std::string from, to, key, arch, entry;
    int line;
  };
  const std::vector<Case> cases = {
      {"model: {arch: mamba, d_state: 4}", "model: {arch: mamba, d_state: 4, heads: 2}", "heads", "mamba", "mamba", 12},
      {"model: {arch: mamba, d_state: 4}", "model: {arch: mamba, d_state: 4, stack_size: 3}", "stack_size", "mamba",
       "mamba", 12},
      {"model: {arch: mamba, d_state: 4}", "model: {arch: mamba, d_state: 4, lime: static}", "lime", "mamba", "mamba",
       12},
      {"  - name: tf\n", "  - name: tf\n    model: {d_state: 8}\n", "d_state", "transformer", "tf", 11},
      {"model: {arch: lstm}", "model: {arch: lstm, eigenvalues: signed}", "eigenvalues", "lstm", "lstm", 16},
      {"model: {arch: lstm}", "model: {arch: lstm, init: grazzi}", "init", "lstm", "lstm", 16},
  };
  TempDir dir;
  for (const auto& c : cases) {
    const std::string text = replaced(kLinear, c.from, c.to);
    const std::string err = config_error_of(text);
    INFO(err);
    CHECK_THAT(err, Catch::Contains("s.yaml:" + std::to_string(c.line) + ":"));
    CHECK_THAT(err, Catch::Contains(".model." + c.key + ": '" + c.key + "' does not apply to arch " + c.arch));
    CHECK_THAT(err, Catch::Contains("model entry '" + c.entry + "'"));
    srbench::test::write_file(dir.file("s.yaml"), text);
    const auto r = run_srbench({"sweep", dir.file("s.yaml"), "--dry-run"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("'" + c.key + "' does not apply to arch " + c.arch));
  }
  // bad values of mamba's own keys: named, with the valid choices
  CHECK_THAT(config_error_of(replaced(kLinear, "eigenvalues: signed", "eigenvalues: negative")),
             Catch::Contains("s.yaml:14: models[2].model.eigenvalues: unknown value 'negative'"));
  CHECK_THAT(config_error_of(replaced(kLinear, "arch: mamba, d_state: 4}", "arch: mamba, d_state: 0}")),
             Catch::Contains("s.yaml:12: models[1].model.d_state"));
  CHECK_THAT(config_error_of(replaced(kLinear, "arch: lstm", "arch: mamb")), Catch::Contains("(did you mean 'mamba'?)"));
}

TEST_CASE("mamba suite: an inherited value of a key that applies is checked, an invalid one an error naming the entry; "
          "norm is inherited",
          "[harness][mamba][suite]") {
  // d_conv: 0 in the defaults, meant for another arch: the transformer drops it, mamba refuses it
  const std::string bad = replaced(kLinear, "max_len: 32, position: alibi}", "max_len: 32, position: alibi, d_conv: 0}");
  const std::string err = config_error_of(bad);
  CHECK_THAT(err, Catch::Contains("s.yaml:4: defaults.model.d_conv: model.d_conv: must be >= 1, got 0 (inherited by "
                                  "model entry 'mamba', arch mamba; state the entry's own value to override it)"));
  // the entry's own value overrides it; the transformer and the lstm are as without it
  const Suite fixed = parse_suite(replaced(replaced(bad, "{arch: mamba, d_state: 4}", "{arch: mamba, d_state: 4, d_conv: 2}"),
                                           "{arch: mamba, d_state: 4, eigenvalues: signed}",
                                           "{arch: mamba, d_state: 4, eigenvalues: signed, d_conv: 4}"),
                                  "s.yaml");
  const Suite plain = parse_suite(kLinear, "s.yaml");
  CHECK(run_of(fixed, "mamba").model.d_conv == 2);
  CHECK(run_of(fixed, "tf").id == run_of(plain, "tf").id);
  CHECK(run_of(fixed, "lstm").id == run_of(plain, "lstm").id);
  CHECK(run_of(fixed, "signed").id == run_of(plain, "signed").id);  // d_conv 4 is the default
  // norm: mamba's default is rms whatever the transformer's; one written in the defaults is inherited
  CHECK(run_of(plain, "mamba").model.resolved_norm() == srbench::model::Norm::Rms);
  CHECK(run_of(plain, "mamba").resolved_yaml.find("norm: rms") != std::string::npos);
  const Suite layer = parse_suite(replaced(kLinear, "position: alibi}", "position: alibi, norm: layer}"), "s.yaml");
  CHECK(run_of(layer, "mamba").model.resolved_norm() == srbench::model::Norm::Layer);
  CHECK(run_of(layer, "mamba").resolved_yaml.find("norm: layer") != std::string::npos);
  CHECK(run_of(layer, "lstm").id == run_of(plain, "lstm").id);  // dropped there
}

TEST_CASE("mamba suite: grids over its keys, an axis that does not apply does not expand", "[harness][mamba][suite]") {
  const std::string text = R"(name: g
seeds: [0]
defaults:
  model: {layers: 1, d_model: 16, max_len: 32}
  train: {steps: 30, length: [1, 8]}
tasks:
  - task: parity
grid:
  model.arch: [transformer, mamba]
  model.eigenvalues: [positive, signed]
  model.d_state: [4, 8]
)";
  const Suite s = parse_suite(text, "g.yaml");
  std::vector<std::string> grids;
  for (const auto& r : s.runs) grids.push_back(r.grid);
  CHECK(grids == std::vector<std::string>{
                     "model.arch=transformer model.eigenvalues=- model.d_state=-",
                     "model.arch=mamba model.eigenvalues=positive model.d_state=4",
                     "model.arch=mamba model.eigenvalues=positive model.d_state=8",
                     "model.arch=mamba model.eigenvalues=signed model.d_state=4",
                     "model.arch=mamba model.eigenvalues=signed model.d_state=8"});
  std::set<std::string> ids;
  for (const auto& r : s.runs) ids.insert(r.id);
  CHECK(ids.size() == s.runs.size());
  for (const auto& r : s.runs) {
    INFO(r.grid);
    const YAML::Node model = YAML::Load(r.resolved_yaml)["model"];
    CHECK(static_cast<bool>(model["d_state"]) == (r.model.arch == Arch::Mamba));
    CHECK(static_cast<bool>(model["eigenvalues"]) == (r.model.arch == Arch::Mamba));
  }
}

TEST_CASE("mamba runs: trained, hidden_entropy per layer stored, reported with their arch",
          "[harness][mamba][diagnostics][report]") {
  omp_set_num_threads(1);
  const Suite s = parse_suite(replaced(kLinear, "layers: 1", "layers: 2"), "s.yaml");
  TempDir dir;
  std::vector<std::string> files;
  for (const auto& spec : s.runs) {
    const RunResult r = run_training(spec);
    INFO(spec.model_name << ": " << r.status << " " << r.message);
    REQUIRE(r.status == "ok");
    REQUIRE(r.eval.size() == 2);
    CHECK(std::isfinite(r.metrics.final_train_loss));
    CHECK(r.metrics.final_train_loss < r.curve.front().train_loss);  // 30 steps lower the loss
    files.push_back(dir.file(r.run_id + ".h5"));
    write_run_file(files.back(), r, kLinear, nullptr);
    const RunResult back = read_run_file(files.back());
    CHECK(run_arch(back) == std::string(srbench::model::to_string(spec.model.arch)));
    if (spec.model.arch != Arch::Mamba) continue;
    CHECK(back.diag.heads == 0);
    CHECK(back.diag.attn_entropy.empty());
    REQUIRE(back.diag.hidden_entropy.size() == 2);
    for (double h : back.diag.hidden_entropy) CHECK((std::isfinite(h) && h > 0));
  }
  const std::string suite_path = dir.file("linear.h5");
  srbench::test::write_suite_file_of(suite_path, kLinear, files);
  const auto csv = run_srbench({"report", suite_path, "--format", "csv"});
  REQUIRE(csv.exit_code == 0);
  for (const char* row : {"\nparity,parity,mamba,mamba,,1,1,0,0,", "\nparity,parity,signed,mamba,,1,1,0,0,",
                          "\nparity,parity,tf,transformer,,1,1,0,0,"})
    CHECK_THAT(csv.out, Catch::Contains(row));
  const auto diag = run_srbench({"report", suite_path, "--diagnostics", "--format", "csv"});
  CHECK_THAT(diag.out, Catch::Contains(",signed,mamba,,1,1,0,0,0,hidden_entropy[layer=1],1,"));
  CHECK(diag.out.find(",signed,mamba,,1,1,0,0,0,attn_") == std::string::npos);
}

TEST_CASE("mamba eval: a run saved with save_checkpoint reproduces its evaluation rows", "[harness][mamba][eval]") {
  TempDir dir;
  const std::string run_file = srbench::test::check_eval_reproduces_run(
      dir, "{arch: mamba, layers: 2, d_model: 16, d_state: 4, eigenvalues: signed, max_len: 40}");
  const auto ck = load_model_file(run_file);
  CHECK(ck.config().arch == Arch::Mamba);
  CHECK(ck.config().eigenvalues == Eigenvalues::Signed);
  CHECK(ck.config().d_state == 4);
}
