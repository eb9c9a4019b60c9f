// Spline searches (spline-search.md): suite keys and their errors, the mechanics of stage 1
// (weights from D_wts only, splines from D_arch only, one shared set of splines, staggered
// starts) checked against a hand-made step, stage 2 (splines loaded, frozen), the splines file,
// the transfer matrix against a hand computation, and the sweep's scheduling, resumption and
// sharding.
#include <omp.h>

#include <catch2/catch.hpp>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "harness/report/report.hpp"
#include "harness/results/results.hpp"
#include "harness/run/search.hpp"
#include "harness/core/splines.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/splines.hpp"
#include "harness/run/trainer.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "common/h5.hpp"
#include "model/optim.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
namespace h5 = srbench::h5;
using srbench::test::run_srbench;
using srbench::test::TempDir;
namespace fs = std::filesystem;
namespace model = srbench::model;
namespace tasks = srbench::tasks;

namespace {

// A search on a finite set of 12 parity examples of length 3: D_arch = the last 3.
const char* kSearchSuite = R"(name: s
defaults:
  model: {layers: 1, d_model: 8, heads: 2, max_len: 16, mlp_ratio: 2}
  train: {steps: 6, batch: 3, lr: 0.01, warmup: 2, eval_every: 3, length: [3, 3]}
  eval: {examples: 8, val_examples: 8}
searches:
  - name: par
    task: parity
    train: {examples: 12}
    model: {activation: spline, mlp_spline: {keypoints: 8, range: 4}}
    population: 3
    arch_fraction: 0.25
    seed: 5
tasks:
  - task: parity
models:
  - name: base
  - name: searched
    model: {activation: spline, mlp_spline: {keypoints: 8, range: 4}, splines_from: par, freeze_splines: true}
)";

std::string error_of(const std::string& text) { return srbench::test::config_error_of(text); }

// kSearchSuite with `from` replaced by `to` (once).
std::string edited(const std::string& from, const std::string& to) {
  std::string s = kSearchSuite;
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The finite training set as the task defines it: example j of the `train` stream under
// data_seed 0, length 3 (the range [3, 3] leaves no length to draw).
tasks::Example finite_example(const tasks::Task& task, uint64_t j) {
  tasks::Example e;
  task.sample_into(0, tasks::Stream::Train, j, 3, e);
  return e;
}

Batch batch_of(const tasks::Task& task, const std::vector<uint64_t>& indices) {
  std::vector<tasks::Example> ex;
  for (uint64_t j : indices) ex.push_back(finite_example(task, j));
  Batch b;
  b.assemble(ex);
  return b;
}

SearchResult small_result(const std::string& name, float offset) {
  SearchResult r;
  r.name = name, r.task = "parity", r.config_yaml = "search: {}\n", r.population = 1;
  SplineTensor t;
  t.name = "blocks.0.mlp.act.values", t.keypoints = 8, t.range = 4, t.extrapolate = "constant";
  for (int k = 0; k < 8; ++k) t.values.push_back(offset + 0.25f * static_cast<float>(k * k) - 1.0f);
  r.splines = {t};
  r.models.resize(1);
  r.models[0].seed = 3, r.models[0].final_val_acc = 0.5;
  r.models[0].curve = {{3, 0.7, 0.5, 0.01, 1.5}};
  return r;
}

}  // namespace

TEST_CASE("search: nested spline maps and stage-2 keys resolve", "[harness][search]") {
  const Suite s = parse_suite(kSearchSuite, "s.yaml");
  REQUIRE(s.searches.size() == 1);
  const SearchSpec& sp = s.searches[0];
  CHECK(sp.name == "par");
  CHECK(sp.population == 3);
  CHECK(sp.arch_fraction == 0.25);
  CHECK(sp.seed == 5);
  CHECK(sp.model.mlp_spline.keypoints == 8);
  CHECK(sp.model.mlp_spline.range == 4.0);
  CHECK(sp.train.examples == 12);
  REQUIRE(s.runs.size() == 2);
  CHECK(s.runs[0].splines_from.empty());
  CHECK_FALSE(s.runs[0].freeze_splines);
  CHECK(s.runs[0].search == -1);
  CHECK(s.runs[1].splines_from == "par");
  CHECK(s.runs[1].freeze_splines);
  CHECK(s.runs[1].search == 0);
  CHECK(s.runs[1].model.mlp_spline.keypoints == 8);
  // a nested map sets only the keys it names; a dotted key still works
  const Suite d = parse_suite(edited("mlp_spline: {keypoints: 8, range: 4}, splines_from",
                                     "mlp_spline.keypoints: 8, mlp_spline: {range: 4}, splines_from"),
                              "s.yaml");
  CHECK(d.runs[1].model.mlp_spline.keypoints == 8);
  CHECK(d.runs[1].model.mlp_spline.range == 4.0);
  CHECK(d.runs[1].model.mlp_spline.extrapolate == model::Extrapolate::Constant);
}

TEST_CASE("search: every new validation error names the line and YAML path", "[harness][search]") {
  // line numbers count from the suite's first line (name: s = line 1)
  CHECK(error_of(edited("mlp_spline: {keypoints: 8, range: 4}, splines_from", "mlp_spline: {keypoint: 8}, splines_from")) ==
        "s.yaml:19: models[1].model.mlp_spline.keypoint: unknown key 'keypoint' in mlp_spline (did you mean "
        "'keypoints'?); valid keys: keypoints, range, extrapolate, init, share");
  CHECK(error_of(edited("mlp_spline: {keypoints: 8, range: 4}, splines_from", "mlp_spline: 8, splines_from")) ==
        "s.yaml:19: models[1].model.mlp_spline: expected a map of spline settings, e.g. {keypoints: 32, range: 4}, got '8'");
  CHECK(error_of(edited("mlp_spline: {keypoints: 8, range: 4}}", "mlp_spline: {keypoints: 1, range: 4}}")) ==
        "s.yaml:10: searches[0].model.mlp_spline.keypoints: a spline needs at least 2 keypoints, got 1");
  CHECK(error_of(edited("population: 3", "populaton: 3")).rfind(
            "s.yaml:11: searches[0].populaton: unknown key 'populaton' (did you mean 'population'?)", 0) == 0);
  CHECK(error_of(edited("population: 3", "population: 0")) == "s.yaml:11: searches[0].population: 0 must be at least 1");
  CHECK(error_of(edited("arch_fraction: 0.25", "arch_fraction: 1")) ==
        "s.yaml:12: searches[0].arch_fraction: 1 is outside (0, 1) (the share of the training data held out as D_arch)");
  CHECK(error_of(edited("arch_fraction: 0.25", "arch_fraction: 0")) ==
        "s.yaml:12: searches[0].arch_fraction: 0 is outside (0, 1) (the share of the training data held out as D_arch)");
  CHECK(error_of(edited("arch_fraction: 0.25", "arch_fraction: 0.01")) ==
        "s.yaml:12: searches[0].arch_fraction: arch_fraction 0.01 of 12 examples leaves D_arch or D_wts empty");
  CHECK(error_of(edited("    model: {activation: spline, mlp_spline: {keypoints: 8, range: 4}}\n",
                        "    model: {activation: gelu}\n")) ==
        "s.yaml:10: searches[0].model: the searched model has no spline: set activation: spline and/or attention: "
        "spline-score | spline-kernel");
  CHECK(error_of(edited("    seed: 5\n", "    seed: 5\n  - name: par\n    task: parity\n    model: {activation: spline}\n")) ==
        "s.yaml:14: searches[1].name: search name 'par' is used twice");
  CHECK(error_of(edited("mlp_spline: {keypoints: 8, range: 4}}", "splines_from: par}")).rfind(
            "s.yaml:10: searches[0].model.splines_from: unknown key 'splines_from'", 0) == 0);
  CHECK(error_of(edited("splines_from: par,", "splines_from: pra,")) ==
        "s.yaml:19: models[1].model.splines_from: 'pra' is neither a search of this suite nor an existing splines "
        "file (did you mean 'par'?); searches: par");
  CHECK(error_of(edited("splines_from: par,", "splines_from: /nonexistent/x.h5,")).rfind(
            "s.yaml:19: models[1].model.splines_from: '/nonexistent/x.h5' is neither a search", 0) == 0);
  CHECK(error_of(edited("mlp_spline: {keypoints: 8, range: 4}, splines_from", "mlp_spline: {keypoints: 9, range: 4}, splines_from")) ==
        "s.yaml:19: models[1].model.splines_from: the splines of search 'par' do not fit this model: "
        "blocks.0.mlp.act.values has 8 keypoints but the model's has 9");
  CHECK(error_of(edited("{activation: spline, mlp_spline: {keypoints: 8, range: 4}, splines_from", "{splines_from")) ==
        "s.yaml:19: models[1].model.splines_from: the splines of search 'par' do not fit this model: the model has no "
        "splines (set activation: spline or a spline attention)");
  CHECK(error_of(edited("freeze_splines: true", "freeze_splines: 3")) ==
        "s.yaml:19: models[1].model.freeze_splines: expected true or false, got '3'");

  // a splines file: loadable when it fits, an error naming the difference when it does not
  TempDir dir;
  write_splines_file(dir.file("ok.h5"), small_result("x", 0), "");
  CHECK(error_of(edited("splines_from: par,", "splines_from: " + dir.file("ok.h5") + ",")).empty());
  SearchResult other = small_result("x", 0);
  other.splines[0].range = 2;
  write_splines_file(dir.file("bad.h5"), other, "");
  CHECK(error_of(edited("splines_from: par,", "splines_from: " + dir.file("bad.h5") + ",")) ==
        "s.yaml:19: models[1].model.splines_from: splines file " + dir.file("bad.h5") +
            " does not fit this model: blocks.0.mlp.act.values has range 2.000000 but the model's has range 4.000000");
  srbench::test::write_file(dir.file("junk.h5"), "not hdf5");
  CHECK(error_of(edited("splines_from: par,", "splines_from: " + dir.file("junk.h5") + ",")).rfind(
            "s.yaml:19: models[1].model.splines_from: splines file " + dir.file("junk.h5"), 0) == 0);
}

TEST_CASE("search: run ids of stage-2 runs follow the search's config", "[harness][search]") {
  const Suite a = parse_suite(kSearchSuite, "s.yaml");
  const Suite b = parse_suite(edited("population: 3", "population: 2"), "s.yaml");
  CHECK(a.runs[0].id == b.runs[0].id);  // the baseline does not depend on the search
  CHECK(a.runs[1].id != b.runs[1].id);
  CHECK(a.searches[0].id != b.searches[0].id);
  // the same suite expands to the same ids
  CHECK(parse_suite(kSearchSuite, "t.yaml").runs[1].id == a.runs[1].id);
}

TEST_CASE("search: weights only from D_wts, splines only from D_arch, one shared set of splines",
          "[harness][search]") {
  omp_set_num_threads(1);
  const SearchSpec sp = parse_suite(kSearchSuite, "s.yaml").searches[0];
  std::vector<SearchEvent> events;
  std::vector<model::Model> trained;
  const SearchResult res = run_search(sp, [&](const SearchEvent& e) { events.push_back(e); }, &trained);
  REQUIRE(res.status == "ok");
  REQUIRE(events.size() == 6 * 3 * 2);
  // D_arch = the last round(0.25·12) = 3 examples of the finite set; D_wts the other 9
  std::map<std::pair<int64_t, int>, std::vector<float>> seen;  // (step, kind) → splines of model 0
  std::set<uint64_t> wts_used, arch_used;
  for (const auto& e : events) {
    INFO("step " << e.step << " model " << e.model << " kind " << e.kind);
    for (uint64_t j : e.examples) {
      if (e.kind == SearchEvent::Weights) {
        CHECK(j < 9);
        wts_used.insert(j);
      } else {
        CHECK(j >= 9);
        CHECK(j < 12);
        arch_used.insert(j);
      }
    }
    const auto key = std::make_pair(e.step, static_cast<int>(e.kind));
    if (!seen.count(key)) seen[key] = e.splines;
    CHECK(e.splines == seen[key]);  // every model holds the same splines
  }
  CHECK(wts_used.size() == 9);
  CHECK(arch_used.size() == 3);
  // the splines move only between steps (not within one), and they do move
  for (int64_t s = 0; s < 6; ++s) CHECK(seen[{s, 0}] == seen[{s, 1}]);
  for (int64_t s = 1; s < 6; ++s) CHECK(seen[{s, 0}] != seen[{s - 1, 0}]);
  // at the end every model holds the learned splines
  for (const auto& m : trained) CHECK(std::vector<float>(m.spline_values().begin(), m.spline_values().end()) ==
                                      res.splines[0].values);
  REQUIRE(res.models.size() == 3);
  for (size_t m = 0; m < 3; ++m) {
    CHECK(res.models[m].seed == 5 + m);
    REQUIRE(res.models[m].curve.size() == 2);
    CHECK(res.models[m].curve[1].step == 6);
    CHECK(res.models[m].final_val_acc == res.models[m].curve[1].val_acc);
  }
}

TEST_CASE("search: one step equals a hand-made step on the recorded batches", "[harness][search]") {
  omp_set_num_threads(1);
  Suite suite = parse_suite(edited("population: 3", "population: 2"), "s.yaml");
  SearchSpec sp = suite.searches[0];
  sp.train.steps = 1;
  std::vector<SearchEvent> events;
  std::vector<model::Model> trained;
  const SearchResult res = run_search(sp, [&](const SearchEvent& e) { events.push_back(e); }, &trained);
  REQUIRE(res.status == "ok");
  REQUIRE(events.size() == 4);  // weights m0, weights m1, arch m0, arch m1
  const auto task = tasks::make_task("parity", {}, {0});

  // by hand: each model a weights-only step on its D_wts batch ...
  std::vector<model::Model> ref;
  std::vector<model::AdamW> opts;
  model::TrainSettings w;
  w.steps = 1, w.warmup = 2, w.lr = 0.01, w.spline_lr = 1e-2, w.update = model::Update::WeightsOnly;
  for (int m = 0; m < 2; ++m) {
    ref.emplace_back(sp.model);
    ref.back().init(5 + m);
    opts.emplace_back(ref.back().layout());
  }
  for (int m = 0; m < 2; ++m) {
    const SearchEvent& e = events[m];
    REQUIRE(e.kind == SearchEvent::Weights);
    REQUIRE(e.model == m);
    const Batch b = batch_of(*task, e.examples);
    REQUIRE(model::train_step(ref[m], opts[m], b.tokens.data(), b.targets.data(), b.B, b.T, 0, w).finite);
  }
  // ... then the sum of both models' D_arch spline gradients, one Adam step of the splines
  std::vector<float> gsum(ref[0].spline_values().size(), 0.0f);
  double loss = 0;
  for (int m = 0; m < 2; ++m) {
    const SearchEvent& e = events[2 + m];
    REQUIRE(e.kind == SearchEvent::Arch);
    const Batch b = batch_of(*task, e.examples);
    ref[m].zero_grads();
    loss += ref[m].forward_backward(b.tokens.data(), b.targets.data(), b.B, b.T, true);
    for (size_t i = 0; i < gsum.size(); ++i) gsum[i] += ref[m].spline_grads()[i];
  }
  const std::vector<float> before(ref[0].spline_values().begin(), ref[0].spline_values().end());
  std::copy(gsum.begin(), gsum.end(), ref[0].spline_grads().begin());
  model::TrainSettings sset = w;
  sset.update = model::Update::SplinesOnly;
  REQUIRE(model::apply_gradients(ref[0], opts[0], loss, 0, sset).finite);
  const std::vector<float> after(ref[0].spline_values().begin(), ref[0].spline_values().end());
  CHECK(after != before);
  CHECK(res.splines[0].values == after);
  // weights: exactly the D_wts step (the D_arch pass left them alone)
  for (int m = 0; m < 2; ++m) {
    const auto block = trained[m].layout().spline_block();
    for (size_t i = 0; i < block.offset; ++i) {
      if (trained[m].params()[i] != ref[m].params()[i]) {
        FAIL("model " << m << " parameter " << i << " differs from the hand-made D_wts step");
      }
    }
  }
}

TEST_CASE("search: staggered starts at m·steps/(M+1)", "[harness][search]") {
  omp_set_num_threads(1);
  SearchSpec sp = parse_suite(edited("seed: 5", "seed: 5\n    stagger: true"), "s.yaml").searches[0];
  sp.train.steps = 8;  // M = 3: starts 0, 2, 4
  std::map<int, int64_t> first;
  std::map<int, int> count;
  const SearchResult res = run_search(sp, [&](const SearchEvent& e) {
    if (e.kind != SearchEvent::Weights) return;
    if (!first.count(e.model)) first[e.model] = e.step;
    ++count[e.model];
  });
  REQUIRE(res.status == "ok");
  CHECK(first == std::map<int, int64_t>{{0, 0}, {1, 2}, {2, 4}});
  CHECK(count == std::map<int, int>{{0, 8}, {1, 6}, {2, 4}});
  CHECK(res.models[1].start_step == 2);
  CHECK(res.models[2].curve.back().step == 4);  // its own steps
}

TEST_CASE("search: splines file round trip; stage 2 loads it and, frozen, never changes it", "[harness][search]") {
  omp_set_num_threads(1);
  TempDir dir;
  const SearchResult r = small_result("x", 0.5f);
  write_splines_file(dir.file("x.h5"), r, "suite text");
  const SplinesFile f = read_splines_file(dir.file("x.h5"));
  CHECK(f.name == "x");
  CHECK(f.task == "parity");
  CHECK(f.config == r.config_yaml);
  CHECK(f.population == 1);
  CHECK(f.splines == r.splines);
  REQUIRE(f.models.size() == 1);
  CHECK(f.models[0].seed == 3);
  CHECK(f.models[0].final_val_acc == 0.5);
  CHECK(f.models[0].curve.size() == 1);

  Suite s = parse_suite(edited("splines_from: par,", "splines_from: " + dir.file("x.h5") + ","), "s.yaml");
  CHECK(s.runs[1].id.empty());  // its id hashes the file's values: the sweep reads the file
  resolve_splines_files(s);
  RunSpec spec = s.runs[1];
  CHECK(spec.id.size() == 12);
  CHECK(spec.splines == r.splines);
  CHECK(spec.splines_task == "parity");
  spec.train.steps = 5;
  std::unique_ptr<model::Model> trained;
  const RunResult frozen = run_training(spec, &trained);
  REQUIRE(frozen.status == "ok");
  CHECK(frozen.splines_from == dir.file("x.h5"));
  CHECK(frozen.splines_task == "parity");
  REQUIRE(frozen.splines.size() == 1);
  CHECK(frozen.splines[0].values == r.splines[0].values);  // loaded, and never changed
  // the weights did train
  model::Model fresh(spec.model);
  fresh.init(spec.seed);
  CHECK(std::vector<float>(fresh.params(), fresh.params() + 40) != std::vector<float>(trained->params(), trained->params() + 40));
  // not frozen: the same start, then the splines move
  spec.freeze_splines = false;
  const RunResult free = run_training(spec);
  REQUIRE(free.status == "ok");
  CHECK(free.splines[0].values != r.splines[0].values);
}

namespace {

// Brute-force roughness of a deviation δ: ‖δ‖², Σ (δ_{k+1} − δ_k)² and ‖Lδ‖² with L the path
// graph's Laplacian ((Lδ)_0 = δ_0 − δ_1, inside 2δ_k − δ_{k−1} − δ_{k+1}, the last mirrored).
std::array<double, 3> roughness(const std::vector<double>& d) {
  const size_t K = d.size();
  double n2 = 0, first = 0, second = 0;
  for (size_t k = 0; k < K; ++k) {
    n2 += d[k] * d[k];
    if (k + 1 < K) first += (d[k + 1] - d[k]) * (d[k + 1] - d[k]);
    double l = 0;
    if (k > 0) l += d[k] - d[k - 1];
    if (k + 1 < K) l += d[k] - d[k + 1];
    second += l * l;
  }
  return {n2, first, second};
}

std::vector<double> deviation(const SplineTensor& t, const SplineTensor& init) {
  std::vector<double> d;
  for (size_t k = 0; k < t.values.size(); ++k) d.push_back(static_cast<double>(t.values[k]) - init.values[k]);
  return d;
}

}  // namespace

TEST_CASE("search: splines_randomise keeps the searched spline's roughness in another shape", "[harness][search]") {
  // two tensors: a jagged deviation from a GeLU-like start, and one equal to its start
  SplineTensor init, init2;
  init.name = "blocks.0.mlp.act.values", init2.name = "blocks.1.mlp.act.values";
  for (auto* t : {&init, &init2}) t->keypoints = 16, t->range = 4, t->extrapolate = "constant";
  for (int k = 0; k < 16; ++k) {
    const float x = -4.0f + 8.0f * static_cast<float>(k) / 15.0f;
    init.values.push_back(x > 0 ? x : 0.1f * x);
    init2.values.push_back(0.5f * x);
  }
  SplineTensor searched = init, unchanged = init2;
  for (int k = 0; k < 16; ++k) searched.values[k] += 0.3f * std::sin(1.7f * static_cast<float>(k * k)) + (k == 5 ? 0.8f : 0.0f);
  const std::vector<SplineTensor> given = {searched, unchanged}, start = {init, init2};
  const auto a = randomise_splines(given, start, 7, 0);
  REQUIRE(a.size() == 2);
  CHECK(a[0].name == searched.name);
  CHECK(a[0].range == searched.range);
  const auto want = roughness(deviation(searched, init)), got = roughness(deviation(a[0], init));
  for (int i = 0; i < 3; ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5));
  CHECK(a[0].values != searched.values);  // another shape
  double moved = 0;
  for (size_t k = 0; k < 16; ++k) moved += std::abs(a[0].values[k] - searched.values[k]);
  CHECK(moved > 0.5);
  for (size_t k = 0; k < 16; ++k) CHECK(a[1].values[k] == Approx(init2.values[k]).margin(1e-6));  // no deviation, none made
  CHECK(randomise_splines(given, start, 7, 0) == a);        // deterministic
  CHECK(randomise_splines(given, start, 8, 0)[0].values != a[0].values);  // another key, another spline
  CHECK(randomise_splines(given, start, 7, 1)[0].values != a[0].values);  // another run seed, another spline
  CHECK_THROWS_AS(randomise_splines(given, {init}, 7, 0), std::invalid_argument);

  // the key: only with splines_from, a non-negative integer, in the run id only when set
  const std::string random_entry =
      "  - name: random\n"
      "    model: {activation: spline, mlp_spline: {keypoints: 8, range: 4}, splines_from: par, freeze_splines: true, "
      "splines_randomise: 3}\n";
  const Suite plain = parse_suite(kSearchSuite, "s.yaml");
  const Suite with = parse_suite(std::string(kSearchSuite) + random_entry, "s.yaml");
  REQUIRE(with.runs.size() == 3);
  CHECK(with.runs[0].id == plain.runs[0].id);
  CHECK(with.runs[1].id == plain.runs[1].id);
  CHECK(with.runs[2].splines_randomise == 3);
  CHECK(with.runs[2].id != with.runs[1].id);
  CHECK(with.runs[2].resolved_yaml.find("splines_randomise: 3") != std::string::npos);
  CHECK(error_of(std::string(kSearchSuite) + "  - name: r\n    model: {splines_randomise: 1}\n") ==
        "s.yaml:21: models[2].model.splines_randomise: splines_randomise randomises the splines of splines_from, and "
        "this run has no splines_from");
  CHECK(error_of(edited("freeze_splines: true", "freeze_splines: true, splines_randomise: -2")) ==
        "s.yaml:19: models[1].model.splines_randomise: must be a non-negative integer (the seed of the "
        "randomisation), got -2");

  // a run: its frozen splines are randomise_splines of the file's against the model's initial
  // ones, under the key and the run's seed; it names no task
  omp_set_num_threads(1);
  TempDir dir;
  const SearchResult r = small_result("x", 0.5f);
  write_splines_file(dir.file("x.h5"), r, "");
  Suite s = parse_suite(edited("splines_from: par,", "splines_from: " + dir.file("x.h5") + ",") +
                      "  - name: random\n    model: {activation: spline, mlp_spline: {keypoints: 8, range: 4}, splines_from: " +
                      dir.file("x.h5") + ", freeze_splines: true, splines_randomise: 3}\n",
                  "s.yaml");
  resolve_splines_files(s);
  RunSpec spec = s.runs[2];
  spec.train.steps = 3;
  const RunResult run = run_training(spec);
  REQUIRE(run.status == "ok");
  CHECK(run.splines_task.empty());
  model::Model fresh(spec.model);
  fresh.init(spec.seed);
  const auto expect = randomise_splines(r.splines, model_splines(fresh), 3, spec.seed);
  REQUIRE(run.splines.size() == 1);
  CHECK(run.splines[0].values == expect[0].values);
  CHECK(run.splines[0].values != r.splines[0].values);
}

TEST_CASE("search: transfer matrix against a hand computation", "[harness][search]") {
  auto run = [](const std::string& entry, const std::string& model, const std::string& from, const std::string& task,
                double acc, int64_t steps) {
    RunResult r;
    r.run_id = entry + model + std::to_string(acc), r.entry = entry, r.task = entry, r.model = model;
    r.splines_from = from, r.splines_task = task;
    if (!from.empty() || model == "spline-plain") r.splines.resize(1);
    r.metrics.id_acc = acc, r.metrics.steps_to_target = steps;
    return r;
  };
  std::vector<RunResult> runs = {
      run("add", "base", "", "", 0.8, 1000), run("add", "base", "", "", 0.6, -1),  // baseline add: 0.7, 1000
      run("mano", "base", "", "", 0.5, 400), run("mano", "base", "", "", 0.7, 600),  // baseline mano: 0.6, 500
      run("add", "spline-plain", "", "", 0.1, 100),  // has splines, not from a search: neither
      run("add", "from-add", "s-add", "add", 0.9, 500), run("add", "from-add", "s-add", "add", 1.0, 700),
      run("mano", "from-add", "s-add", "add", 0.4, -1), run("mano", "from-add", "s-add", "add", 0.5, 1000),
      run("add", "from-mano", "s-mano", "mano", 0.7, -1),
  };
  RunResult failed = run("mano", "from-mano", "s-mano", "mano", 0.0, -1);
  failed.status = "failed";
  runs.push_back(failed);
  const TransferMatrix t = compute_transfer(runs);
  REQUIRE(t.searched_on == std::vector<std::string>{"add", "mano"});
  REQUIRE(t.trained_on == std::vector<std::string>{"add", "mano"});
  // add→add: deltas 0.2, 0.3 → 0.25; ratios 500/1000, 700/1000 → 0.6
  CHECK(t.id_acc_delta[0] == Approx(0.25).margin(1e-12));
  CHECK(t.steps_ratio[0] == Approx(0.6).margin(1e-12));
  // add→mano: deltas −0.2, −0.1 → −0.15; ratio 1000/500 (the other never reached) → 2
  CHECK(t.id_acc_delta[1] == Approx(-0.15).margin(1e-12));
  CHECK(t.steps_ratio[1] == Approx(2.0).margin(1e-12));
  // mano→add: 0.7 − 0.7 = 0; never reached → NaN
  CHECK(t.id_acc_delta[2] == Approx(0.0).margin(1e-12));
  CHECK(std::isnan(t.steps_ratio[2]));
  // mano→mano: its only run failed → NaN, 0 runs
  CHECK(std::isnan(t.id_acc_delta[3]));
  CHECK(t.runs == std::vector<int>{2, 2, 1, 0});
  const std::string csv = format_transfer(t, ReportFormat::csv);
  CHECK(csv.find("\nadd,mano,2,-0.1") != std::string::npos);
  CHECK(compute_transfer({runs[0], runs[1]}).empty());
}

namespace {
// A finished run of task entry add for the transfer matrix: GeLU (from "") or with the splines of
// search `from` (searched on add), at one seed, with its id_acc.
RunResult transfer_run(const std::string& model, const std::string& from, uint64_t seed, double acc) {
  RunResult r;
  r.run_id = model + std::to_string(seed), r.entry = "add", r.task = "add", r.model = model, r.seed = seed;
  r.splines_from = from, r.splines_task = from.empty() ? "" : "add";
  if (!from.empty()) r.splines.resize(1);
  r.metrics.id_acc = acc;
  return r;
}
}  // namespace

TEST_CASE("search: transfer matrix intervals are paired by seed, worked by hand", "[harness][search]") {
  // baseline seeds 0..2; the variant has seed 3 too, which has no baseline to pair with
  const std::vector<RunResult> runs = {transfer_run("gelu", "", 0, 0.5),      transfer_run("gelu", "", 1, 0.6),
                                       transfer_run("gelu", "", 2, 0.9),      transfer_run("from-add", "s", 0, 0.9),
                                       transfer_run("from-add", "s", 1, 1.0), transfer_run("from-add", "s", 2, 0.95),
                                       transfer_run("from-add", "s", 3, 0.2)};
  const TransferMatrix t = compute_transfer(runs);
  REQUIRE(t.paired == std::vector<int>{3});
  // delta: mean over the 4 variant runs of (acc − baseline mean 2/3)
  CHECK(t.id_acc_delta[0] == Approx((0.9 + 1.0 + 0.95 + 0.2) / 4 - 2.0 / 3).margin(1e-12));
  // paired differences 0.4, 0.4, 0.05. A resample of 3 holds k copies of 0.05 with probability
  // C(3,k)(1/3)^k(2/3)^(3−k): k = 3 (mean 0.05) has 1/27 = 3.7% > 2.5%, k = 0 (mean 0.4) 8/27, so the
  // 95% percentile interval is [0.05, 0.4].
  CHECK(t.id_acc_delta_lo[0] == Approx(0.05).margin(1e-12));
  CHECK(t.id_acc_delta_hi[0] == Approx(0.4).margin(1e-12));
  const std::string csv = format_transfer(t, ReportFormat::csv);
  CHECK(csv.find("searched_on,trained_on,runs,id_acc_delta,steps_ratio,paired,id_acc_delta_lo,id_acc_delta_hi") !=
        std::string::npos);
  // the row: runs 4, delta, steps_ratio (none reached a target: nan), paired 3, then the interval
  CHECK(csv.find("\nadd,add,4,0.0958333") != std::string::npos);
  CHECK(csv.find(",nan,3,0.0") != std::string::npos);
  CHECK(format_transfer(t, ReportFormat::table).find("+0.096 [+0.050, +0.400]") != std::string::npos);
  // one pair only: no interval
  const TransferMatrix one = compute_transfer({runs[0], runs[3]});
  CHECK(one.paired == std::vector<int>{1});
  CHECK(std::isnan(one.id_acc_delta_lo[0]));
}

TEST_CASE("search: the transfer matrix's interval is report --compare's for the same pairs", "[harness][search]") {
  // The bootstrap resamples values in the order it is given; the report's statistics (seed_stats,
  // --compare, expect:) give it the values in ascending order. The transfer matrix gave it the
  // differences in the runs' order, and so printed another interval for the same pairs: these are
  // splines-control's copy runs, GeLU and dyck's spline (−0.149 [−0.198, −0.111] in the matrix,
  // [−0.198, −0.113] from --compare).
  const double base[] = {0.89453125, 0.921875, 0.91015625, 0.91015625, 0.91796875}, variant[] = {0.74609375, 0.6796875, 0.796875, 0.765625, 0.8203125};
  std::vector<RunResult> runs;
  for (const uint64_t seed : {0, 1, 2, 3, 4}) runs.push_back(transfer_run("gelu", "", seed, base[seed]));
  for (const uint64_t seed : {0, 1, 2, 3, 4}) runs.push_back(transfer_run("from-add", "s", seed, variant[seed]));
  const TransferMatrix t = compute_transfer(runs);
  REQUIRE(t.paired == std::vector<int>{5});
  const auto diffs = compare_models(runs, "from-add", "gelu");
  const auto id = std::find_if(diffs.begin(), diffs.end(), [](const PairedDiff& d) { return d.metric == "id_acc"; });
  REQUIRE(id != diffs.end());
  REQUIRE(id->diff.n == 5);
  CHECK(t.id_acc_delta_lo[0] == id->diff.ci_lo);
  CHECK(t.id_acc_delta_hi[0] == id->diff.ci_hi);
  CHECK(t.id_acc_delta[0] == Approx(id->diff.mean).margin(1e-12));  // every variant run is paired here
}

TEST_CASE("search: sweep runs searches first, stores them, resumes, and shards agree", "[harness][search]") {
  TempDir dir;
  const std::string suite = dir.file("s.yaml");
  srbench::test::write_file(suite, std::string(kSearchSuite) + "seeds: [0, 1]\n");
  const auto plain = run_srbench({"sweep", suite, "--jobs", "2", "--out", dir.file("plain/s.h5")});
  INFO(plain.out << plain.err);
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out.find("searches: 1 to run") != std::string::npos);
  const std::string splines_path = dir.file("plain/s/splines/par.h5");
  REQUIRE(fs::exists(splines_path));
  const SplinesFile search = read_splines_file(splines_path);
  const SuiteFile f = read_suite_file(dir.file("plain/s.h5"));
  REQUIRE(f.searches.size() == 1);
  CHECK(f.searches[0].name == "par");
  CHECK(f.searches[0].splines == search.splines);
  CHECK(f.searches[0].models.size() == 3);
  REQUIRE(f.runs.size() == 4);
  for (const auto& r : f.runs) {
    INFO(r.model << " " << r.status << " " << r.message);
    CHECK(r.status == "ok");
    if (r.model == "searched") {
      CHECK(r.splines_from == "par");
      CHECK(r.splines_task == "parity");
      CHECK(r.splines == search.splines);  // frozen at the searched values
    } else {
      CHECK(r.splines_from.empty());
      CHECK(r.splines.empty());
    }
  }
  {  // the suite file's transfer matrix: one cell, both seeds paired, the interval between the two
    // paired differences (a bootstrap of 2 values never leaves their range)
    h5::Id file = h5::open_file(dir.file("plain/s.h5"), "suite file");
    h5::Id transfer = h5::open_group(file, "transfer");
    CHECK(h5::read_array<int32_t>(transfer, "paired", 2) == std::vector<int32_t>{2});
    std::map<uint64_t, double> searched, plain_acc;
    for (const auto& r : f.runs) (r.model == "searched" ? searched : plain_acc)[r.seed] = r.metrics.id_acc;
    const double d0 = searched[0] - plain_acc[0], d1 = searched[1] - plain_acc[1];
    CHECK(h5::read_array<double>(transfer, "id_acc_delta_lo", 2)[0] == Approx(std::min(d0, d1)).margin(1e-12));
    CHECK(h5::read_array<double>(transfer, "id_acc_delta_hi", 2)[0] == Approx(std::max(d0, d1)).margin(1e-12));
  }
  // resume: nothing is redone, the search's file is untouched
  const auto mtime = fs::last_write_time(splines_path);
  const auto again = run_srbench({"sweep", suite, "--jobs", "2", "--out", dir.file("plain/s.h5")});
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("searches: 1 to run") == std::string::npos);
  CHECK(again.out.find("0 to run") != std::string::npos);
  CHECK(fs::last_write_time(splines_path) == mtime);
  // two shards, each running the search its runs need, then merged
  for (const char* shard : {"0/2", "1/2"})
    REQUIRE(run_srbench({"sweep", suite, "--jobs", "1", "--shard", shard, "--out", dir.file("sh/s.h5")}).exit_code == 0);
  REQUIRE(run_srbench({"merge", dir.file("sh/s"), "--out", dir.file("sh/s.h5")}).exit_code == 0);
  const SuiteFile g = read_suite_file(dir.file("sh/s.h5"));
  REQUIRE(g.searches.size() == 1);
  CHECK(g.searches[0].splines == search.splines);
  REQUIRE(g.runs.size() == f.runs.size());
  std::map<std::string, const RunResult*> by_id;
  for (const auto& r : f.runs) by_id[r.run_id] = &r;
  for (const auto& r : g.runs) {
    REQUIRE(by_id.count(r.run_id));
    CHECK(r.metrics.id_acc == by_id[r.run_id]->metrics.id_acc);
    CHECK(r.splines == by_id[r.run_id]->splines);
  }
  // --searches-only with a shard that holds no search does nothing; the report prints the transfer
  const auto so = run_srbench({"sweep", suite, "--searches-only", "--shard", "1/2", "--out", dir.file("so/s.h5")});
  REQUIRE(so.exit_code == 0);
  CHECK_FALSE(fs::exists(dir.file("so/s/splines/par.h5")));
  // --searches-only on the shard that holds it: the same splines as the plain sweep's
  REQUIRE(run_srbench({"sweep", suite, "--searches-only", "--shard", "0/2", "--out", dir.file("so/s.h5")}).exit_code == 0);
  CHECK(read_splines_file(dir.file("so/s/splines/par.h5")).splines == search.splines);
  CHECK_FALSE(fs::exists(dir.file("so/s/runs")));
  // a changed search is redone (its file holds the old config), and its stage-2 runs with it
  std::string changed = std::string(kSearchSuite) + "seeds: [0, 1]\n";
  changed.replace(changed.find("population: 3"), 13, "population: 2");
  srbench::test::write_file(suite, changed);
  const auto redo = run_srbench({"sweep", suite, "--jobs", "2", "--out", dir.file("plain/s.h5")});
  REQUIRE(redo.exit_code == 0);
  CHECK(redo.out.find("searches: 1 to run") != std::string::npos);
  CHECK(redo.out.find("2 already finished, 2 to run") != std::string::npos);  // the baselines are kept
  CHECK(read_splines_file(splines_path).models.size() == 2);
  const auto rep = run_srbench({"report", dir.file("plain/s.h5")});
  REQUIRE(rep.exit_code == 0);
  CHECK(rep.out.find("Transfer: rows = task the splines were searched on") != std::string::npos);
}
