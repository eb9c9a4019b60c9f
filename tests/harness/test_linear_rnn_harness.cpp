// The harness with linear-recurrent models (linear-rnn.md, "Config keys" and "Harness"), mamba and
// deltanet: keys that do not apply refused in an entry and dropped when inherited, their own keys
// refused elsewhere, bad values named, grids over their keys, hidden_entropy diagnostics per layer,
// training and the report's arch column, eval of a checkpoint. (The --dry-run memory estimate
// against a measured peak: test_resources.cpp.)
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

// A key stated in a model entry where it does not apply: `from` replaced by `to` in `suite` must be a
// config error at s.yaml:`line` naming the key, the arch and the entry, and exit 2 through the CLI.
struct Refused {
  std::string from, to, key, arch, entry;
  int line;
};

void check_refused(const std::string& suite, const std::vector<Refused>& cases) {
  TempDir dir;
  for (const auto& c : cases) {
    const std::string text = replaced(suite, c.from, c.to);
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
}

// Trains every run of `suite` (its layers made 2) for its 30 steps; each must lower its loss and
// round-trip its arch through the run file; runs of `arch` store hidden_entropy for both layers
// and no attention diagnostics. The report's csv must hold `rows`, and its --diagnostics the
// hidden_entropy row of model entry `entry`.
void check_trained_runs(const std::string& suite, Arch arch, const std::vector<std::string>& rows,
                        const std::string& entry) {
  omp_set_num_threads(1);
  const Suite s = parse_suite(replaced(suite, "layers: 1", "layers: 2"), "s.yaml");
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
    write_run_file(files.back(), r, suite, nullptr);
    const RunResult back = read_run_file(files.back());
    CHECK(run_arch(back) == std::string(srbench::model::to_string(spec.model.arch)));
    if (spec.model.arch != arch) continue;
    CHECK(back.diag.heads == 0);
    CHECK(back.diag.attn_entropy.empty());
    REQUIRE(back.diag.hidden_entropy.size() == 2);
    for (double h : back.diag.hidden_entropy) CHECK((std::isfinite(h) && h > 0));
  }
  const std::string suite_path = dir.file("linear.h5");
  srbench::test::write_suite_file_of(suite_path, suite, files);
  const auto csv = run_srbench({"report", suite_path, "--format", "csv"});
  REQUIRE(csv.exit_code == 0);
  for (const auto& row : rows) CHECK_THAT(csv.out, Catch::Contains(row));
  const std::string prefix = "," + entry + "," + srbench::model::to_string(arch) + ",,1,1,0,0,0,";
  const auto diag = run_srbench({"report", suite_path, "--diagnostics", "--format", "csv"});
  CHECK_THAT(diag.out, Catch::Contains(prefix + "hidden_entropy[layer=1],1,"));
  CHECK(diag.out.find(prefix + "attn_") == std::string::npos);
}

// A grid with an arch axis [transformer, `arch`] and two axes over `arch`'s keys `k1`, `k2` (values
// `v1`, `v2`): one transformer run (its keys "-") and the four of `arch`, in order, distinct ids,
// the keys in the resolved config exactly under `arch`.
void check_arch_grid(Arch arch, const std::string& k1, const std::vector<std::string>& v1, const std::string& k2,
                     const std::vector<std::string>& v2) {
  const std::string a = srbench::model::to_string(arch);
  auto list = [](const std::vector<std::string>& v) { return "[" + v[0] + ", " + v[1] + "]"; };
  const Suite s = parse_suite("name: g\nseeds: [0]\ndefaults:\n  model: {layers: 1, d_model: 16, max_len: 32}\n"
                              "  train: {steps: 30, length: [1, 8]}\ntasks:\n  - task: parity\ngrid:\n"
                              "  model.arch: [transformer, " + a + "]\n  model." + k1 + ": " + list(v1) + "\n  model." +
                                  k2 + ": " + list(v2) + "\n",
                              "g.yaml");
  std::vector<std::string> grids, want = {"model.arch=transformer model." + k1 + "=- model." + k2 + "=-"};
  for (const auto& x : v1)
    for (const auto& y : v2) want.push_back("model.arch=" + a + " model." + k1 + "=" + x + " model." + k2 + "=" + y);
  for (const auto& r : s.runs) grids.push_back(r.grid);
  CHECK(grids == want);
  std::set<std::string> ids;
  for (const auto& r : s.runs) ids.insert(r.id);
  CHECK(ids.size() == s.runs.size());
  for (const auto& r : s.runs) {
    INFO(r.grid);
    const YAML::Node model = YAML::Load(r.resolved_yaml)["model"];
    CHECK(static_cast<bool>(model[k1]) == (r.model.arch == arch));
    CHECK(static_cast<bool>(model[k2]) == (r.model.arch == arch));
  }
}

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
  check_refused(kLinear, {
      {"model: {arch: mamba, d_state: 4}", "model: {arch: mamba, d_state: 4, heads: 2}", "heads", "mamba", "mamba", 12},
      {"model: {arch: mamba, d_state: 4}", "model: {arch: mamba, d_state: 4, stack_size: 3}", "stack_size", "mamba",
       "mamba", 12},
      {"model: {arch: mamba, d_state: 4}", "model: {arch: mamba, d_state: 4, lime: static}", "lime", "mamba", "mamba",
       12},
      {"  - name: tf\n", "  - name: tf\n    model: {d_state: 8}\n", "d_state", "transformer", "tf", 11},
      {"model: {arch: lstm}", "model: {arch: lstm, eigenvalues: signed}", "eigenvalues", "lstm", "lstm", 16},
      {"model: {arch: lstm}", "model: {arch: lstm, init: grazzi}", "init", "lstm", "lstm", 16},
  });
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
  check_arch_grid(Arch::Mamba, "eigenvalues", {"positive", "signed"}, "d_state", {"4", "8"});
}

TEST_CASE("mamba runs: trained, hidden_entropy per layer stored, reported with their arch",
          "[harness][mamba][diagnostics][report]") {
  check_trained_runs(kLinear, Arch::Mamba,
                     {"\nparity,parity,mamba,mamba,,1,1,0,0,", "\nparity,parity,signed,mamba,,1,1,0,0,",
                      "\nparity,parity,tf,transformer,,1,1,0,0,"},
                     "signed");
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

// ---- deltanet ----------------------------------------------------------------------------------

namespace {

// kLinear with two deltanets before its mamba (no second mamba): a transformer, the deltanets, a
// mamba and an lstm, with transformer keys in the defaults.
std::string delta_suite() {
  return replaced(kLinear,
                  "  - name: mamba\n    model: {arch: mamba, d_state: 4}\n  - name: signed\n"
                  "    model: {arch: mamba, d_state: 4, eigenvalues: signed}\n",
                  "  - name: delta\n    model: {arch: deltanet, gated: true}\n  - name: signed\n"
                  "    model: {arch: deltanet, beta_scale: 2, heads: 2, mlp_hidden: 32}\n"
                  "  - name: mamba\n    model: {arch: mamba, d_state: 4}\n");
}

}  // namespace

TEST_CASE("deltanet suite: heads inherited and used, keys that do not apply dropped, deltanet's keys dropped "
          "for other archs",
          "[harness][deltanet][suite]") {
  const Suite s = parse_suite(delta_suite(), "s.yaml");
  REQUIRE(s.runs.size() == 5);
  const RunSpec &delta = run_of(s, "delta"), &sgn = run_of(s, "signed");
  CHECK(delta.model.arch == Arch::DeltaNet);
  CHECK(delta.model.heads == 4);  // inherited: heads applies to deltanet
  CHECK(delta.model.gated);
  CHECK(delta.model.beta_scale == 1);
  CHECK(delta.dropped == std::vector<std::string>{"position (defaults.model.position)"});
  CHECK(sgn.model.heads == 2);
  CHECK(sgn.model.beta_scale == 2);
  // the resolved config: every key of deltanet, defaults as their resolved values (linear-rnn.md)
  const YAML::Node m = YAML::Load(delta.resolved_yaml)["model"];
  CHECK(m["arch"].as<std::string>() == "deltanet");
  CHECK(m["heads"].as<int>() == 4);
  CHECK(m["d_conv"].as<int>() == 4);
  CHECK(m["beta_scale"].as<int>() == 1);
  CHECK(m["gated"].as<bool>());
  CHECK_FALSE(m["output_gate"].as<bool>());
  CHECK(m["mlp_hidden"].as<int>() == 256);  // 256·⌈⌊8·16/3⌋/256⌉
  CHECK(m["norm"].as<std::string>() == "rms");
  CHECK(m["final_norm"].as<bool>());
  CHECK(m["init"].as<std::string>() == "default");
  CHECK_FALSE(m["position"]);
  CHECK_FALSE(m["d_state"]);
  CHECK(YAML::Load(sgn.resolved_yaml)["model"]["mlp_hidden"].as<int>() == 32);
  // deltanet's keys in the defaults: dropped for the transformer, mamba and the lstm (ids as
  // without them), kept for the deltanets
  const Suite k = parse_suite(
      replaced(delta_suite(), "position: alibi}", "position: alibi, beta_scale: 2, gated: true, output_gate: true}"),
      "s.yaml");
  for (const char* other : {"tf", "mamba", "lstm"}) {
    INFO(other);
    CHECK(run_of(k, other).id == run_of(s, other).id);
    CHECK_THAT(run_of(k, other).resolved_yaml, !Catch::Contains("beta_scale"));
  }
  CHECK(run_of(k, "delta").model.beta_scale == 2);
  CHECK(run_of(k, "delta").model.output_gate);
  CHECK(run_of(k, "delta").id != delta.id);
  CHECK(run_of(k, "signed").model.gated);
  CHECK(run_of(k, "signed").id != sgn.id);
}

TEST_CASE("deltanet suite: a key stated in an entry that does not apply is refused (exit 2), naming it; bad "
          "values named",
          "[harness][deltanet][suite]") {
  check_refused(delta_suite(), {
      {"{arch: deltanet, gated: true}", "{arch: deltanet, gated: true, d_state: 4}", "d_state", "deltanet", "delta", 12},
      {"{arch: deltanet, gated: true}", "{arch: deltanet, gated: true, position: rope}", "position", "deltanet",
       "delta", 12},
      {"{arch: deltanet, gated: true}", "{arch: deltanet, gated: true, lime: static}", "lime", "deltanet", "delta", 12},
      {"{arch: mamba, d_state: 4}", "{arch: mamba, d_state: 4, beta_scale: 2}", "beta_scale", "mamba", "mamba", 16},
      {"{arch: lstm}", "{arch: lstm, gated: true}", "gated", "lstm", "lstm", 18},
      {"  - name: tf\n", "  - name: tf\n    model: {output_gate: true}\n", "output_gate", "transformer", "tf", 11},
      {"  - name: tf\n", "  - name: tf\n    model: {mlp_hidden: 64}\n", "mlp_hidden", "transformer", "tf", 11},
  });
  const std::string sgn = "{arch: deltanet, beta_scale: 2, heads: 2, mlp_hidden: 32}";
  CHECK_THAT(config_error_of(replaced(delta_suite(), sgn, "{arch: deltanet, beta_scale: 3, heads: 2, mlp_hidden: 32}")),
             Catch::Contains("s.yaml:14: models[2].model.beta_scale: model.beta_scale: must be <= 2, got 3"));
  CHECK_THAT(config_error_of(replaced(delta_suite(), sgn, "{arch: deltanet, beta_scale: 1.5, heads: 2, mlp_hidden: 32}")),
             Catch::Contains("s.yaml:14: models[2].model.beta_scale: expected an integer, got '1.5'"));
  CHECK_THAT(config_error_of(replaced(delta_suite(), sgn, "{arch: deltanet, beta_scale: 2, heads: 3, mlp_hidden: 32}")),
             Catch::Contains("s.yaml:14: models[2].model.heads: model.heads: d_model 16 is not divisible by heads 3"));
  CHECK_THAT(config_error_of(replaced(delta_suite(), sgn, "{arch: deltanet, beta_scale: 2, heads: 2, mlp_hidden: -2}")),
             Catch::Contains("s.yaml:14: models[2].model.mlp_hidden: model.mlp_hidden: must be >= 0, got -2"));
  CHECK_THAT(config_error_of(replaced(delta_suite(), "gated: true}", "gated: true, d_conv: -1}")),
             Catch::Contains("s.yaml:12: models[1].model.d_conv: model.d_conv: must be >= 0, got -1"));
  CHECK_THAT(config_error_of(replaced(delta_suite(), "gated: true}", "gated: yes please}")),
             Catch::Contains("s.yaml:12: models[1].model.gated: expected true or false, got 'yes please'"));
  CHECK_THAT(config_error_of(replaced(delta_suite(), "arch: lstm", "arch: deltanett")),
             Catch::Contains("(did you mean 'deltanet'?)"));
  // d_conv 0 is deltanet's "no short convolution"; inherited from the defaults, mamba refuses it
  const Suite zero = parse_suite(replaced(delta_suite(), "gated: true}", "gated: true, d_conv: 0}"), "s.yaml");
  CHECK(run_of(zero, "delta").model.d_conv == 0);
  CHECK_THAT(config_error_of(replaced(delta_suite(), "position: alibi}", "position: alibi, d_conv: 0}")),
             Catch::Contains("(inherited by model entry 'mamba', arch mamba;"));
}

TEST_CASE("deltanet suite: grids over its keys, an axis that does not apply does not expand",
          "[harness][deltanet][suite]") {
  check_arch_grid(Arch::DeltaNet, "beta_scale", {"1", "2"}, "gated", {"false", "true"});
}

TEST_CASE("deltanet runs: trained, hidden_entropy per layer stored, reported with their arch",
          "[harness][deltanet][diagnostics][report]") {
  check_trained_runs(delta_suite(), Arch::DeltaNet,
                     {"\nparity,parity,delta,deltanet,,1,1,0,0,", "\nparity,parity,signed,deltanet,,1,1,0,0,",
                      "\nparity,parity,mamba,mamba,,1,1,0,0,"},
                     "signed");
}

TEST_CASE("deltanet eval: a run saved with save_checkpoint reproduces its evaluation rows", "[harness][deltanet][eval]") {
  TempDir dir;
  const std::string run_file = srbench::test::check_eval_reproduces_run(
      dir, "{arch: deltanet, layers: 2, d_model: 16, heads: 2, beta_scale: 2, gated: true, output_gate: true, "
           "mlp_hidden: 24, max_len: 40}");
  const auto ck = load_model_file(run_file);
  CHECK(ck.config().arch == Arch::DeltaNet);
  CHECK(ck.config().beta_scale == 2);
  CHECK(ck.config().gated);
  CHECK(ck.config().output_gate);
  CHECK(ck.config().resolved_mlp_hidden() == 24);
}

// ---- gla -----------------------------------------------------------------------------------------

namespace {

// kLinear with two glas before its mamba (no second mamba).
std::string gla_suite() {
  return replaced(kLinear,
                  "  - name: mamba\n    model: {arch: mamba, d_state: 4}\n  - name: signed\n"
                  "    model: {arch: mamba, d_state: 4, eigenvalues: signed}\n",
                  "  - name: gla\n    model: {arch: gla, heads: 2}\n  - name: linear\n"
                  "    model: {arch: gla, heads: 2, gla_decay: none, mlp_hidden: 24}\n"
                  "  - name: mamba\n    model: {arch: mamba, d_state: 4}\n");
}

}  // namespace

TEST_CASE("gla suite: its keys resolved, keys that do not apply dropped or refused, bad values named",
          "[harness][gla][suite]") {
  const Suite s = parse_suite(gla_suite(), "s.yaml");
  REQUIRE(s.runs.size() == 5);
  const RunSpec &gla = run_of(s, "gla"), &lin = run_of(s, "linear");
  CHECK(gla.model.arch == Arch::Gla);
  CHECK(gla.dropped == std::vector<std::string>{"position (defaults.model.position)"});
  const YAML::Node m = YAML::Load(gla.resolved_yaml)["model"];
  CHECK(m["heads"].as<int>() == 2);
  CHECK(m["gla_decay"].as<std::string>() == "gated");
  CHECK(m["mlp_hidden"].as<int>() == 256);
  CHECK(m["norm"].as<std::string>() == "rms");
  CHECK_FALSE(m["d_conv"]);
  CHECK_FALSE(m["init"]);
  CHECK(lin.model.gla_decay == srbench::model::GlaDecay::None);
  CHECK(lin.id != gla.id);
  // gla's keys in the defaults: dropped for the transformer, mamba and the lstm
  const Suite k = parse_suite(replaced(gla_suite(), "position: alibi}", "position: alibi, gla_decay: none}"), "s.yaml");
  for (const char* other : {"tf", "mamba", "lstm"}) {
    INFO(other);
    CHECK(run_of(k, other).id == run_of(s, other).id);
  }
  CHECK(run_of(k, "gla").model.gla_decay == srbench::model::GlaDecay::None);
  check_refused(gla_suite(), {
      {"{arch: gla, heads: 2}", "{arch: gla, heads: 2, d_conv: 4}", "d_conv", "gla", "gla", 12},
      {"{arch: gla, heads: 2}", "{arch: gla, heads: 2, init: grazzi}", "init", "gla", "gla", 12},
      {"{arch: gla, heads: 2}", "{arch: gla, heads: 2, beta_scale: 2}", "beta_scale", "gla", "gla", 12},
      {"{arch: mamba, d_state: 4}", "{arch: mamba, d_state: 4, gla_decay: none}", "gla_decay", "mamba", "mamba", 16},
  });
  CHECK_THAT(config_error_of(replaced(gla_suite(), "{arch: gla, heads: 2}", "{arch: gla, heads: 3}")),
             Catch::Contains("s.yaml:12: models[1].model.heads: model.heads: d_model/2 = 8 is not divisible by heads 3"));
  CHECK_THAT(config_error_of(replaced(gla_suite(), "{arch: gla, heads: 2}", "{arch: gla, heads: 2, gla_decay: fast}")),
             Catch::Contains("s.yaml:12: models[1].model.gla_decay: unknown value 'fast'"));
  // heads: 4 from the defaults is valid for d 16 (8 / 4); an inherited invalid one is named
  CHECK(run_of(parse_suite(replaced(gla_suite(), "{arch: gla, heads: 2}", "{arch: gla}"), "s.yaml"), "gla").model.heads == 4);
  CHECK_THAT(config_error_of(replaced(replaced(gla_suite(), "{arch: gla, heads: 2}", "{arch: gla}"), "heads: 4,", "heads: 16,")),
             Catch::Contains("(inherited by model entry 'gla', arch gla;"));
}

TEST_CASE("gla suite: grids over its keys, an axis that does not apply does not expand", "[harness][gla][suite]") {
  check_arch_grid(Arch::Gla, "gla_decay", {"gated", "none"}, "mlp_hidden", {"0", "24"});
}

TEST_CASE("gla runs: trained, hidden_entropy per layer stored, reported with their arch",
          "[harness][gla][diagnostics][report]") {
  check_trained_runs(gla_suite(), Arch::Gla,
                     {"\nparity,parity,gla,gla,,1,1,0,0,", "\nparity,parity,linear,gla,,1,1,0,0,",
                      "\nparity,parity,mamba,mamba,,1,1,0,0,"},
                     "linear");
}

TEST_CASE("gla eval: a run saved with save_checkpoint reproduces its evaluation rows", "[harness][gla][eval]") {
  TempDir dir;
  const std::string run_file = srbench::test::check_eval_reproduces_run(
      dir, "{arch: gla, layers: 2, d_model: 16, heads: 2, mlp_hidden: 24, max_len: 40}");
  const auto ck = load_model_file(run_file);
  CHECK(ck.config().arch == Arch::Gla);
  CHECK(ck.config().resolved_mlp_hidden() == 24);
}
