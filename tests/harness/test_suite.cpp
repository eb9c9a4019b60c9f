// Suite YAML: resolution level by level, run expansion and ids, and validation errors that name
// the file, the line and the YAML path.
#include <catch2/catch.hpp>
#include <set>
#include <tuple>

#include "harness/suite/suite.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;

namespace {

const char* kGood = R"(name: demo
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 64}
  train: {steps: 10, batch: 4, lr: 0.002, eval_every: 5}
tasks:
  - task: parity
    name: parity-short
    params: {p1: 0.5}
    train: {length: [2, 6]}
    eval:
      lengths: [4, 8]
      shifts: [{p1: 0.9}]
  - task: flipflop
    train: {length: 8, steps: 20}
models:
  - name: learned
  - name: alibi
    model: {position: alibi}
    train: {lr: 0.01}
grid:
  model.layers: [1, 2]
)";

std::string error_of(const std::string& text) { return srbench::test::config_error_of(text); }

}  // namespace

TEST_CASE("suite: runs expand task × model × grid × seed, levels override field by field", "[harness][suite]") {
  const Suite s = parse_suite(kGood, "demo.yaml");
  CHECK(s.name == "demo");
  REQUIRE(s.runs.size() == 2 * 2 * 2 * 2);
  // order: task entry, model entry, grid point, seed (innermost)
  const RunSpec& r0 = s.runs[0];
  CHECK(r0.entry == "parity-short");
  CHECK(r0.model_name == "learned");
  CHECK(r0.grid == "model.layers=1");
  CHECK(r0.seed == 0);
  CHECK(s.runs[1].seed == 1);
  CHECK(s.runs[2].grid == "model.layers=2");
  CHECK(s.runs[2].model.layers == 2);
  // defaults → task entry → model entry → grid
  CHECK(r0.train.steps == 10);
  CHECK(r0.train.lr == 0.002);
  CHECK(r0.train.length_min == 2);
  CHECK(r0.train.length_max == 6);
  CHECK(r0.model.d_model == 16);
  CHECK(r0.model.vocab == 4);  // parity: 0 1 q0 q1
  CHECK(r0.params.at("p1") == "0.5");
  CHECK(r0.eval.lengths == std::vector<int>{4, 8});
  REQUIRE(r0.eval.shifts.size() == 1);
  CHECK(r0.eval.shifts[0].label == "p1=0.9");
  const RunSpec& alibi = s.runs[4];
  CHECK(alibi.model_name == "alibi");
  CHECK(alibi.model.position == srbench::model::Position::Alibi);
  CHECK(alibi.train.lr == 0.01);
  const RunSpec& ff = s.runs[8];
  CHECK(ff.task == "flipflop");
  CHECK(ff.entry == "flipflop");
  CHECK(ff.train.steps == 20);
  CHECK(ff.train.length_min == 8);
  CHECK(ff.eval.lengths == std::vector<int>{8});  // default: the training maximum
  // untouched keys keep harness.md's defaults
  CHECK(r0.train.weight_decay == 0.01);
  CHECK(r0.eval.examples == 512);
  CHECK(r0.eval.val_examples == 256);
  CHECK(r0.train.target_accuracy == 0.99);
}

TEST_CASE("suite: run ids are stable, distinct, and change with the config", "[harness][suite]") {
  const Suite a = parse_suite(kGood, "demo.yaml"), b = parse_suite(kGood, "elsewhere/other-name.yaml");
  std::set<std::string> ids;
  for (size_t i = 0; i < a.runs.size(); ++i) {
    CHECK(a.runs[i].id == b.runs[i].id);
    CHECK(a.runs[i].id.size() == 12);
    ids.insert(a.runs[i].id);
  }
  CHECK(ids.size() == a.runs.size());
  std::string changed = kGood;
  changed.replace(changed.find("steps: 10"), 9, "steps: 11");
  const Suite c = parse_suite(changed, "demo.yaml");
  CHECK(c.runs[0].id != a.runs[0].id);
  // --set overrides everything, for every run
  const Suite d = parse_suite(kGood, "demo.yaml", {{"train.steps", "3"}});
  CHECK(d.runs[8].train.steps == 3);
}

TEST_CASE("suite: malformed suites are errors naming file, line and YAML path", "[harness][suite]") {
  struct Case {
    const char* what;
    std::string text;
    std::string path;  // must appear in the message
    int line;          // must appear as "s.yaml:LINE:"
    std::string hint = "";
  };
  const std::string head = "name: x\ntasks:\n  - task: parity\n";  // lines 1-3
  const std::vector<Case> cases = {
      {"unknown top-level key", "name: x\nsedes: [1]\ntasks: [{task: parity}]\n", "sedes", 2, "did you mean 'seeds'"},
      {"misspelt train key", head + "    train: {stpes: 10}\n", "tasks[0].train.stpes", 4, "did you mean 'steps'"},
      {"misspelt model key", "defaults:\n  model: {d_modle: 8}\ntasks: [{task: parity}]\n", "defaults.model.d_modle", 2,
       "did you mean 'd_model'"},
      {"wrong type", head + "    train:\n      steps: many\n", "tasks[0].train.steps", 5, "integer"},
      {"negative steps", head + "    train:\n      steps: -5\n", "tasks[0].train.steps", 5, "at least 1"},
      {"empty seeds", "seeds: []\ntasks: [{task: parity}]\n", "seeds", 1, "non-empty"},
      {"unknown task", "tasks:\n  - task: parrity\n", "tasks[0].task", 2, "did you mean 'parity'"},
      {"bad task parameter", head + "    params:\n      p1: 1.5\n", "tasks[0].params.p1", 5, "[0, 1]"},
      {"unknown task parameter", head + "    params: {p2: 0.5}\n", "tasks[0].params.p2", 4, "did you mean 'p1'"},
      {"inverted length range", head + "    train:\n      length: [8, 2]\n", "tasks[0].train.length", 5, "inverted"},
      {"eval length beyond max_len", "defaults:\n  model: {max_len: 16}\ntasks:\n  - task: parity\n    eval:\n      lengths: [8, 32]\n",
       "tasks[0].eval.lengths", 6, "max_len"},
      {"unknown shift parameter", head + "    eval:\n      shifts:\n        - {p1: 0.9}\n        - {q1: 0.9}\n",
       "tasks[0].eval.shifts[1]", 7, "q1"},
      {"shift that changes the vocabulary", "tasks:\n  - task: flipflop\n    eval:\n      shifts: [{values: 3}]\n",
       "tasks[0].eval.shifts[0]", 4, "vocabulary"},
      {"duplicate model names", head + "models:\n  - name: a\n  - name: a\n", "models[1].name", 6, "used twice"},
      {"grid over an unknown field", head + "grid:\n  model.layrs: [1, 2]\n", "grid.model.layrs", 5,
       "did you mean 'model.layers'"},
      {"bad model value", head + "models:\n  - name: a\n    model: {position: spiral}\n", "models[0].model.position", 6,
       "spiral"},
      {"d_model not divisible by heads", head + "models:\n  - name: a\n    model: {d_model: 10, heads: 4}\n",
       "models[0].model", 6, "heads"},
      {"two entries of one task without names", "tasks:\n  - task: parity\n  - task: parity\n", "tasks[1]", 3, "name"},
      {"not YAML", "tasks: [ {task: parity\n", "", 0, "not valid YAML"},
      {"grid values not a list", head + "grid:\n  train.lr: 0.1\n", "grid.train.lr", 5, "list"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const std::string msg = error_of(c.text);
    INFO(msg);
    REQUIRE(!msg.empty());
    CHECK_THAT(msg, Catch::Contains(c.path));
    if (c.line > 0) CHECK_THAT(msg, Catch::StartsWith("s.yaml:" + std::to_string(c.line) + ":"));
    CHECK_THAT(msg, Catch::Contains(c.hint));
  }
}

TEST_CASE("srbench sweep --dry-run: a bad suite exits 2 naming the path, a good one lists runs", "[harness][suite][cli]") {
  srbench::test::TempDir dir;
  srbench::test::write_file(dir.file("bad.yaml"), "tasks:\n  - task: parity\n    train: {lenght: [1, 4]}\n");
  auto r = srbench::test::run_srbench({"sweep", dir.file("bad.yaml"), "--dry-run"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.yaml:3:") && Catch::Contains("tasks[0].train.lenght") &&
                        Catch::Contains("did you mean 'length'"));
  srbench::test::write_file(dir.file("good.yaml"), kGood);
  r = srbench::test::run_srbench({"sweep", dir.file("good.yaml"), "--dry-run", "--out", dir.file("out/demo.h5")});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("16 runs") && Catch::Contains("parity-short") && Catch::Contains("alibi"));
  r = srbench::test::run_srbench({"sweep", dir.file("good.yaml"), "--dry-run", "--shard", "1/4", "--out", dir.file("o.h5")});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("shard 1/4: 4"));
  // out of range, past an int, not whole numbers, halves missing
  for (const char* bad : {"4/4", "0/99999999999", "1/4x", "/4", "1/", "-1/4", "1-4"}) {
    INFO("--shard " << bad);
    r = srbench::test::run_srbench({"sweep", dir.file("good.yaml"), "--dry-run", "--shard", bad});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--shard must be I/N") && Catch::Contains(std::string("'") + bad + "'"));
  }
}

TEST_CASE("suite: --set overrides travel with the stored suite text", "[harness][suite]") {
  const Suite a = parse_suite(kGood, "demo.yaml", {{"train.steps", "3"}, {"model.d_model", "8"}});
  CHECK_THAT(a.text, Catch::EndsWith("# srbench --set train.steps=3\n# srbench --set model.d_model=8\n"));
  const Suite b = parse_suite(a.text, "(stored)");  // as merge reads it back from a run file
  REQUIRE(b.runs.size() == a.runs.size());
  for (size_t i = 0; i < a.runs.size(); ++i) {
    CHECK(b.runs[i].id == a.runs[i].id);
    CHECK(b.runs[i].train.steps == 3);
    CHECK(b.runs[i].model.d_model == 8);
  }
  CHECK(b.text == a.text);
}

TEST_CASE("srbench sweep --dry-run: a bidirectional model on a next-token task is noted, once per pair",
          "[harness][suite][cli]") {
  // chomsky.md §7.3 / issue 17: `causal: false` with a task outside the tape layout is the user's
  // choice (the runs are listed and the exit code is 0), but the dry run notes that such a model
  // sees the answer; tape-layout tasks and causal models get no note.
  srbench::test::TempDir dir;
  srbench::test::write_file(dir.file("s.yaml"), R"(name: bidir
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 64}
  train: {steps: 10, batch: 4, lr: 0.002, length: [2, 6]}
tasks:
  - task: parity
  - task: parity_check
models:
  - name: causal
  - name: encoder
    model: {causal: false, position: relative}
)");
  auto r = srbench::test::run_srbench({"sweep", dir.file("s.yaml"), "--dry-run", "--out", dir.file("o.h5")});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("8 runs"));
  const std::string note =
      "note: model encoder is bidirectional (causal: false) and task entry parity (task parity) is not in the tape "
      "layout: a bidirectional model sees the answer of next-token tasks";
  CHECK_THAT(r.out, Catch::Contains(note));
  const size_t first = r.out.find("note:");
  CHECK(r.out.find("note:", first + 1) == std::string::npos);  // one note: one (entry, model) pair
  CHECK_THAT(r.out, !Catch::Contains("task entry parity_check"));
  CHECK_THAT(r.out, !Catch::Contains("model causal is bidirectional"));
}

TEST_CASE("suite: relative positions with spline-kernel attention are a config error at the model's line",
          "[harness][suite]") {
  const std::string text = R"(tasks:
  - task: parity_check
    train: {length: [2, 6], steps: 5}
models:
  - name: encoder
    model: {causal: false, position: relative, attention: spline-kernel, max_len: 64}
)";
  const std::string msg = error_of(text);
  INFO(msg);
  CHECK_THAT(msg, Catch::StartsWith("s.yaml:6:") && Catch::Contains("models[0].model.position") &&
                      Catch::Contains("relative is not defined for model.attention: spline-kernel"));
  srbench::test::TempDir dir;
  srbench::test::write_file(dir.file("s.yaml"), text);
  const auto r = srbench::test::run_srbench({"sweep", dir.file("s.yaml"), "--dry-run"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("s.yaml:6:") && Catch::Contains("relative is not defined"));
}

TEST_CASE("suite: a misspelt --set key gets the did-you-mean and the valid keys, as a YAML key does", "[harness][suite]") {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"train.step", "did you mean 'steps'?", "valid keys: steps, batch, lr"},
      {"eval.lenghts", "did you mean 'lengths'?", "valid keys: lengths, examples"},
      {"model.layer", "did you mean 'layers'?", "valid keys: arch, layers"},
  };
  for (const auto& [key, near, valid] : cases) {
    INFO(key);
    try {
      parse_suite(kGood, "demo.yaml", {{key, "10"}});
      FAIL("no error for --set " + key);
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      CHECK_THAT(msg, Catch::Contains("--set " + key));
      CHECK_THAT(msg, Catch::Contains(near));
      CHECK_THAT(msg, Catch::Contains(valid));
    }
  }
}
