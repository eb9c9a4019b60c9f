// LIMe's routers in the results (harness.md: routers/layer<l> [H,(l+1)H] float32): round trip
// through run and suite files, and a real sweep's run file against the run's trained model.
#include <catch2/catch.hpp>

#include <hdf5.h>

#include "harness/results/results.hpp"
#include "tests/harness/helpers.hpp"
#include "harness/suite/suite.hpp"
#include "harness/run/trainer.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "model/checkpoint.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::TempDir;
namespace h5 = srbench::h5;

namespace {

// A LIMe suite small enough to train in a fraction of a second; save_checkpoint keeps the model.
const std::string kLimeSuite =
    "name: lime-tiny\n"
    "seeds: [3]\n"
    "defaults:\n"
    "  model: {layers: 3, d_model: 16, heads: 2, max_len: 32, lime: static, position: rope}\n"
    "  train: {steps: 30, batch: 8, lr: 3e-3, warmup: 5, eval_every: 15, save_checkpoint: true}\n"
    "  eval: {examples: 8, val_examples: 8}\n"
    "tasks:\n"
    "  - task: flipflop\n"
    "    train: {length: [4, 12]}\n"
    "    eval: {lengths: [8]}\n";

RouterWeights router(int layer, int H, float base) {
  RouterWeights w{layer, H, (layer + 1) * H, {}};
  for (int64_t i = 0; i < w.rows * w.cols; ++i) w.values.push_back(base + 0.25f * static_cast<float>(i));
  return w;
}

}  // namespace

TEST_CASE("lime results: routers/layer<l> round-trip through run and suite files as float32 [H,(l+1)H]",
          "[results][lime]") {
  TempDir dir;
  RunResult r;
  r.run_id = "0123456789ab";
  r.task = "flipflop", r.entry = "flipflop", r.model = "lime";
  // layers 1, 2 and 10: read back in layer order (not the file's name order layer1, layer10, layer2)
  r.routers = {router(1, 2, -1.5f), router(2, 2, 0.125f), router(10, 2, 3.0f)};
  write_run_file(dir.file("run.h5"), r, "name: x\n", nullptr);
  const RunResult back = read_run_file(dir.file("run.h5"));
  CHECK(back.routers == r.routers);
  {
    h5::Id f(H5Fopen(dir.file("run.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    h5::Id ds(H5Dopen2(f, "/runs/0123456789ab/routers/layer2", H5P_DEFAULT));
    REQUIRE(ds.valid());
    CHECK(h5::shape_of(ds) == std::vector<int64_t>{2, 6});
    h5::Id type(H5Dget_type(ds));
    CHECK(H5Tequal(type, H5T_IEEE_F32LE) > 0);
  }
  srbench::test::write_suite_file_of(dir.file("suite.h5"), "name: x\n", {dir.file("run.h5")});
  const SuiteFile s = read_suite_file(dir.file("suite.h5"));
  REQUIRE(s.runs.size() == 1);
  CHECK(s.runs[0].routers == r.routers);

  // a run without LIMe has no routers group
  r.routers.clear();
  r.run_id = "ba9876543210";
  write_run_file(dir.file("plain.h5"), r, "name: x\n", nullptr);
  CHECK(read_run_file(dir.file("plain.h5")).routers.empty());
  h5::Id f(H5Fopen(dir.file("plain.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  CHECK(H5Lexists(f, "/runs/ba9876543210/routers", H5P_DEFAULT) == 0);

  // a router whose values do not fill its shape is refused
  r.routers = {router(1, 2, 0.0f)};
  r.routers[0].values.pop_back();
  CHECK_THROWS_WITH(write_run_file(dir.file("bad.h5"), r, "name: x\n", nullptr), Catch::Contains("layer 1"));
}

TEST_CASE("lime results: a sweep's run file holds exactly the trained routers", "[results][lime][cli]") {
  // In process: the routers of the RunResult are the trained model's, and moved away from init.
  const Suite suite = parse_suite(kLimeSuite, "lime-tiny.yaml");
  REQUIRE(suite.runs.size() == 1);
  std::unique_ptr<srbench::model::Model> trained;
  const RunResult r = run_training(suite.runs[0], &trained);
  REQUIRE(r.status == "ok");
  REQUIRE(r.routers.size() == 2);
  srbench::model::Model fresh(trained->config());
  fresh.init(suite.runs[0].seed);
  for (const auto& w : r.routers) {
    const std::string name = "blocks." + std::to_string(w.layer) + ".attn.router";
    const auto p = trained->param(name);
    CHECK(w.rows == 2);
    CHECK(w.cols == (w.layer + 1) * 2);
    CHECK(std::vector<float>(p.begin(), p.end()) == w.values);
    CHECK(std::vector<float>(fresh.param(name).begin(), fresh.param(name).end()) != w.values);
  }

  // Through `srbench sweep`: the run file's routers equal the saved checkpoint's, bit for bit.
  TempDir dir;
  srbench::test::write_file(dir.file("lime.yaml"), kLimeSuite);
  const auto res = srbench::test::run_srbench({"sweep", dir.file("lime.yaml"), "--out", dir.file("lime.h5"), "--jobs", "1"});
  INFO(res.out << res.err);
  REQUIRE(res.exit_code == 0);
  const SuiteFile s = read_suite_file(dir.file("lime.h5"));
  REQUIRE(s.runs.size() == 1);
  h5::Id f(H5Fopen(dir.file("lime.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id ck(H5Gopen2(f, ("/runs/" + s.runs[0].run_id + "/checkpoint").c_str(), H5P_DEFAULT));
  REQUIRE(ck.valid());
  const srbench::model::Model saved = srbench::model::read_checkpoint(ck);
  REQUIRE(s.runs[0].routers.size() == 2);
  for (const auto& w : s.runs[0].routers) {
    const auto p = saved.param("blocks." + std::to_string(w.layer) + ".attn.router");
    CHECK(std::vector<float>(p.begin(), p.end()) == w.values);
  }
  // the same seed and config train the same model in process and in the sweep
  CHECK(s.runs[0].routers == r.routers);
}
