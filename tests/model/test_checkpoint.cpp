// HDF5 checkpoints (model/checkpoint.hpp): bit-exact round trips, model.md's exact layout, errors
// that name the file and the dataset; and the `srbench init-checkpoint` / `forward` commands.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include "model/checkpoint.hpp"
#include "tests/support.hpp"

using namespace srbench::model;
namespace h5 = srbench::h5;
using srbench::test::run_srbench;
using srbench::test::TempDir;

namespace {

ModelConfig tiny(Position position, Norm norm) {
  ModelConfig c;
  c.vocab = 7;
  c.layers = 2;
  c.d_model = 8;
  c.heads = 2;
  c.mlp_ratio = 2;
  c.max_len = 10;
  c.position = position;
  c.norm = norm;
  return c;
}

// Random values everywhere, plus the values a careless writer would change: -0, a denormal,
// ±inf, a NaN with a payload, the largest float.
void fill_awkward(Model& m, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* p = m.params();
  for (size_t i = 0; i < m.num_params(); ++i) p[i] = normal(rng);
  const uint32_t nan_bits = 0x7fc01234u;
  float nan;
  std::memcpy(&nan, &nan_bits, sizeof nan);
  const float special[] = {-0.0f, 1e-40f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), nan, std::numeric_limits<float>::max()};
  for (size_t k = 0; k < std::size(special); ++k) p[(k * 97) % m.num_params()] = special[k];
}

// model.md, "Checkpoint (HDF5) — names are exact" (and chomsky.md §7.3 for `relative`), written
// out from the pages for a model without splines or LIMe: every dataset under /model/params and its shape. RMSNorm (y = w·x/√(mean(x²)+ε))
// has a weight only, LayerNorm a weight and a bias.
std::map<std::string, std::vector<int64_t>> model_md_params(const ModelConfig& c) {
  const int64_t V = c.vocab, d = c.d_model, md = static_cast<int64_t>(c.mlp_ratio) * c.d_model;
  std::map<std::string, std::vector<int64_t>> want = {{"tok_emb", {V, d}}};
  if (c.position == Position::Learned) want["pos_emb"] = {c.max_len, d};
  auto norm = [&](const std::string& name) {
    want[name + ".weight"] = {d};
    if (c.norm == Norm::Layer) want[name + ".bias"] = {d};
  };
  for (int l = 0; l < c.layers; ++l) {
    const std::string block = "blocks." + std::to_string(l) + ".";
    norm(block + "ln1");
    norm(block + "ln2");
    for (const char* x : {"q", "k", "v", "o"}) {
      want[block + "attn." + x + ".weight"] = {d, d};
      want[block + "attn." + x + ".bias"] = {d};
    }
    if (c.position == Position::Relative) {  // chomsky.md §7.3: u, v [H,d_h], W_R [d,d] without bias
      const int64_t H = c.heads, dh = d / c.heads;
      want[block + "attn.rel.u"] = {H, dh};
      want[block + "attn.rel.v"] = {H, dh};
      want[block + "attn.rel.proj.weight"] = {d, d};
    }
    want[block + "mlp.fc.weight"] = {md, d};
    want[block + "mlp.fc.bias"] = {md};
    want[block + "mlp.proj.weight"] = {d, md};
    want[block + "mlp.proj.bias"] = {d};
  }
  norm("ln_f");
  want["head.weight"] = {V, d};
  want["head.bias"] = {V};
  return want;
}

bool same_bits(const Model& a, const Model& b) {
  return a.num_params() == b.num_params() &&
         std::memcmp(a.params(), b.params(), a.num_params() * sizeof(float)) == 0;
}

std::vector<std::string> dataset_names(const std::string& path) {
  h5::Id f = h5::open_file(path, "test");
  h5::Id g = h5::open_group(f, "model/params");
  H5G_info_t info;
  H5Gget_info(g, &info);
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char buf[256];
    H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, buf, sizeof buf, H5P_DEFAULT);
    names.emplace_back(buf);
  }
  return names;
}

// Opens a checkpoint read-write for a test to damage it.
h5::Id open_params_rw(const std::string& path, h5::Id& file) {
  file = h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  REQUIRE(file.valid());
  return h5::open_group(file, "model/params");
}

void write_batch(const std::string& path, const std::vector<int32_t>& tokens, std::vector<int64_t> token_shape,
                 const std::vector<int32_t>& targets, std::vector<int64_t> target_shape) {
  h5::write_file_atomically(path, [&](hid_t f) {
    h5::write_array(f, "tokens", tokens.data(), token_shape);
    h5::write_array(f, "targets", targets.data(), target_shape);
  });
}

}  // namespace

TEST_CASE("checkpoint: round trip is identical bit for bit for every position and norm", "[checkpoint]") {
  TempDir dir;
  uint32_t seed = 1;
  for (Position pos : {Position::Learned, Position::Sinusoidal, Position::Rope, Position::Alibi, Position::None,
                       Position::Relative})
    for (Norm norm : {Norm::Layer, Norm::Rms}) {
      const ModelConfig cfg = tiny(pos, norm);
      INFO("position " << to_string(pos) << ", norm " << to_string(norm));
      Model m(cfg);
      fill_awkward(m, seed++);
      const std::string path = dir.file(std::string(to_string(pos)) + "-" + to_string(norm) + ".h5");
      save_checkpoint(m, path);
      const Model back = load_checkpoint(path);
      CHECK(back.config() == cfg);
      CHECK(same_bits(m, back));

      // model.md's layout: exactly its parameter names, directly under /model/params
      std::vector<std::string> want;
      for (const auto& [name, shape] : model_md_params(cfg)) want.push_back(name);
      CHECK(dataset_names(path) == want);
    }
  // the temporary files of the atomic writes are gone
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    CHECK(e.path().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("checkpoint: attributes config and vocab, float32 datasets with model.md's shapes", "[checkpoint][config]") {
  TempDir dir;
  Model m(tiny(Position::Learned, Norm::Layer));
  m.init(3);
  save_checkpoint(m, dir.file("ck.h5"));
  h5::Id f = h5::open_file(dir.file("ck.h5"), "test");
  h5::Id g = h5::open_group(f, "model");
  const ModelConfig cfg = read_checkpoint_config(g);
  CHECK(cfg == m.config());
  h5::Id params = h5::open_group(g, "params");
  for (const auto& [name, shape] : model_md_params(m.config())) {
    INFO(name);
    h5::Id ds(H5Dopen2(params, name.c_str(), H5P_DEFAULT));
    REQUIRE(ds.valid());
    CHECK(h5::shape_of(ds) == shape);
    h5::Id type(H5Dget_type(ds));
    CHECK(H5Tequal(type, H5T_IEEE_F32LE) > 0);
  }
  CHECK(m.layout().find("pos_emb"));
  CHECK(h5::has_link(params, "pos_emb"));
  CHECK(h5::has_link(params, "blocks.1.mlp.proj.weight"));
}

TEST_CASE("checkpoint: the same layout inside an open group (a run's checkpoint)", "[checkpoint]") {
  TempDir dir;
  Model m(tiny(Position::Rope, Norm::Rms));
  fill_awkward(m, 42);
  const std::string path = dir.file("runs.h5");
  h5::write_file_atomically(path, [&](hid_t f) {
    h5::Id runs = h5::create_group(f, "runs");
    h5::Id run = h5::create_group(runs, "r0");
    h5::Id ck = h5::create_group(run, "checkpoint");
    write_checkpoint(ck, m);
  });
  h5::Id f = h5::open_file(path, "test");
  h5::Id ck = h5::open_group(f, "runs/r0/checkpoint");
  const Model back = read_checkpoint(ck);
  CHECK(back.config() == m.config());
  CHECK(same_bits(m, back));
  // writing twice into the same group is refused, not merged
  CHECK_THROWS(h5::write_file_atomically(dir.file("twice.h5"), [&](hid_t file) {
    h5::Id g = h5::create_group(file, "checkpoint");
    write_checkpoint(g, m);
    write_checkpoint(g, m);
  }));
  CHECK_FALSE(std::filesystem::exists(dir.file("twice.h5")));
}

TEST_CASE("checkpoint: a renamed, missing, reshaped or retyped dataset is a ModelError naming it",
          "[checkpoint][errors]") {
  TempDir dir;
  Model m(tiny(Position::Learned, Norm::Layer));
  m.init(1);
  const std::string path = dir.file("ck.h5");

  SECTION("renamed") {
    save_checkpoint(m, path);
    {
      h5::Id f;
      h5::Id params = open_params_rw(path, f);
      REQUIRE(H5Lmove(params, "blocks.0.attn.q.weight", params, "blocks.0.attn.query.weight", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    }
    CHECK_THROWS_AS(load_checkpoint(path), ModelError);
    CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains(path) && Catch::Contains("unexpected") &&
                                                 Catch::Contains("blocks.0.attn.query.weight") &&
                                                 Catch::Contains("missing") && Catch::Contains("blocks.0.attn.q.weight"));
  }
  SECTION("missing") {
    save_checkpoint(m, path);
    {
      h5::Id f;
      h5::Id params = open_params_rw(path, f);
      REQUIRE(H5Ldelete(params, "ln_f.bias", H5P_DEFAULT) >= 0);
    }
    CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains(path) && Catch::Contains("missing") &&
                                                 Catch::Contains("ln_f.bias"));
  }
  SECTION("wrong shape") {
    save_checkpoint(m, path);
    {
      h5::Id f;
      h5::Id params = open_params_rw(path, f);
      REQUIRE(H5Ldelete(params, "blocks.1.mlp.fc.bias", H5P_DEFAULT) >= 0);
      const std::vector<float> wrong(17, 0.0f);
      h5::write_array(params, "blocks.1.mlp.fc.bias", wrong.data(), {17});
    }
    CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains(path) && Catch::Contains("/model/params/blocks.1.mlp.fc.bias") &&
                                                 Catch::Contains("[17]") && Catch::Contains("[16]"));
  }
  SECTION("not float32") {
    save_checkpoint(m, path);
    {
      h5::Id f;
      h5::Id params = open_params_rw(path, f);
      REQUIRE(H5Ldelete(params, "head.bias", H5P_DEFAULT) >= 0);
      const std::vector<double> wrong(7, 0.0);
      const hsize_t dims[1] = {7};
      h5::Id space(H5Screate_simple(1, dims, nullptr));
      h5::Id ds(H5Dcreate2(params, "head.bias", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, wrong.data()) >= 0);
    }
    CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains("head.bias") && Catch::Contains("float32"));
  }
  SECTION("a config that does not match the datasets") {
    Model other(tiny(Position::Sinusoidal, Norm::Layer));  // no pos_emb
    other.init(1);
    save_checkpoint(m, path);
    {
      h5::Id f(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
      h5::Id g = h5::open_group(f, "model");
      REQUIRE(H5Adelete(g, "config") >= 0);
      h5::Id type(H5Tcopy(H5T_C_S1));
      H5Tset_size(type, H5T_VARIABLE);
      h5::Id space(H5Screate(H5S_SCALAR));
      h5::Id attr(H5Acreate2(g, "config", type, space, H5P_DEFAULT, H5P_DEFAULT));
      const std::string yaml = other.config().to_yaml();
      const char* text = yaml.c_str();
      REQUIRE(H5Awrite(attr, type, &text) >= 0);
    }
    CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains("unexpected") && Catch::Contains("pos_emb"));
  }
}

TEST_CASE("checkpoint: missing, foreign and non-checkpoint files are ModelErrors naming the file",
          "[checkpoint][errors]") {
  TempDir dir;
  CHECK_THROWS_AS(load_checkpoint(dir.file("nope.h5")), ModelError);
  CHECK_THROWS_WITH(load_checkpoint(dir.file("nope.h5")), Catch::Contains("nope.h5") && Catch::Contains("no such file"));
  srbench::test::write_file(dir.file("text.h5"), "not hdf5 at all\n");
  CHECK_THROWS_AS(load_checkpoint(dir.file("text.h5")), ModelError);
  CHECK_THROWS_WITH(load_checkpoint(dir.file("text.h5")), Catch::Contains("text.h5") && Catch::Contains("not an HDF5 file"));
  const std::vector<int32_t> x = {1, 2, 3};
  h5::write_file_atomically(dir.file("other.h5"), [&](hid_t f) { h5::write_array(f, "x", x.data(), {3}); });
  CHECK_THROWS_WITH(load_checkpoint(dir.file("other.h5")), Catch::Contains("other.h5") && Catch::Contains("/model"));
  // a /model group without the attributes
  h5::write_file_atomically(dir.file("bare.h5"), [&](hid_t f) { h5::create_group(f, "model"); });
  CHECK_THROWS_WITH(load_checkpoint(dir.file("bare.h5")), Catch::Contains("bare.h5") && Catch::Contains("config"));
}

TEST_CASE("checkpoint: the vocab attribute must agree with the config", "[checkpoint][config]") {
  TempDir dir;
  Model m(tiny(Position::None, Norm::Rms));
  m.init(1);
  const std::string path = dir.file("ck.h5");
  save_checkpoint(m, path);
  {
    h5::Id f(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    h5::Id g = h5::open_group(f, "model");
    h5::Id attr(H5Aopen(g, "vocab", H5P_DEFAULT));
    const int64_t wrong = 9;
    REQUIRE(H5Awrite(attr, H5T_NATIVE_INT64, &wrong) >= 0);
  }
  CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains("vocab is 9") && Catch::Contains("vocab 7"));
}

// ---- the commands ----

TEST_CASE("checkpoint cli: init-checkpoint writes model.md's init for the seed, forward matches the library",
          "[checkpoint][init][cli]") {
  TempDir dir;
  const std::string ck = dir.file("ck.h5");
  auto r = run_srbench({"init-checkpoint", "--vocab", "7", "--seed", "5", "--out", ck, "--set", "d_model=8",
                        "--set", "heads=2", "--set", "layers=2", "--set", "mlp_ratio=2", "--set", "max_len=10",
                        "--set", "position=alibi", "--set", "model.norm=rms"});
  REQUIRE(r.exit_code == 0);
  Model want(tiny(Position::Alibi, Norm::Rms));
  want.init(5);
  const Model got = load_checkpoint(ck);
  CHECK(got.config() == want.config());
  CHECK(same_bits(got, want));

  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 0, 1}, targets = {2, 3, -1, 5, 6, 0, 1, -1};
  write_batch(dir.file("batch.h5"), tokens, {2, 4}, targets, {2, 4});
  r = run_srbench({"forward", "--checkpoint", ck, "--batch", dir.file("batch.h5"), "--out", dir.file("out.h5")});
  REQUIRE(r.exit_code == 0);
  Model lib = load_checkpoint(ck);
  lib.zero_grads();
  const float loss = lib.forward_backward(tokens.data(), targets.data(), 2, 4, true);
  h5::Id f = h5::open_file(dir.file("out.h5"), "test");
  float file_loss = 0;
  h5::Id loss_ds(H5Dopen2(f, "loss", H5P_DEFAULT));
  REQUIRE(H5Dread(loss_ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &file_loss) >= 0);
  CHECK(h5::shape_of(loss_ds).empty());
  CHECK(file_loss == loss);
  h5::Id logits(H5Dopen2(f, "logits", H5P_DEFAULT));
  CHECK(h5::shape_of(logits) == std::vector<int64_t>{2, 4, 7});
  std::vector<float> file_logits(2 * 4 * 7);
  REQUIRE(H5Dread(logits, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, file_logits.data()) >= 0);
  CHECK(std::memcmp(file_logits.data(), lib.logits(), file_logits.size() * sizeof(float)) == 0);
  h5::Id grads = h5::open_group(f, "grads");
  for (const auto& p : lib.layout().tensors()) {
    INFO(p.name);
    h5::Id ds(H5Dopen2(grads, p.name.c_str(), H5P_DEFAULT));
    REQUIRE(ds.valid());
    CHECK(h5::shape_of(ds) == p.shape);
    std::vector<float> g(p.size);
    REQUIRE(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, g.data()) >= 0);
    CHECK(std::memcmp(g.data(), lib.grads() + p.offset, p.size * sizeof(float)) == 0);
  }
}

TEST_CASE("checkpoint cli: init-checkpoint usage errors exit 2 with one line naming the problem",
          "[checkpoint][init][cli][errors]") {
  TempDir dir;
  const std::string ck = dir.file("ck.h5");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"init-checkpoint", "--vocab", "7"}, "--out"},
      {{"init-checkpoint", "--out", ck}, "--vocab"},
      {{"init-checkpoint", "--vocab", "0", "--out", ck}, "--vocab"},
      {{"init-checkpoint", "--vocab", "seven", "--out", ck}, "vocab"},
      {{"init-checkpoint", "--vocab", "7", "--out", ck, "--set", "dmodel=8"}, "model.dmodel"},
      {{"init-checkpoint", "--vocab", "7", "--out", ck, "--set", "d_model=abc"}, "model.d_model"},
      {{"init-checkpoint", "--vocab", "7", "--out", ck, "--set", "d_model"}, "KEY=VALUE"},
      {{"init-checkpoint", "--vocab", "7", "--out", ck, "--set", "heads=5"}, "divisible by heads 5"},
      {{"init-checkpoint", "--vocab", "7", "--out", ck, "--set", "position=absolute"}, "model.position"},
      {{"init-checkpoint", "--vocab", "7", "--out", ck, "--set", "heads=2", "--set", "heads=4"}, "twice"},
      {{"init-checkpoint", "--vocab", "7", "--out", dir.file("no/such/dir/ck.h5")}, "does not exist"},
  };
  for (const auto& c : cases) {
    const auto r = run_srbench(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.says));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK_FALSE(std::filesystem::exists(ck));
  const auto help = run_srbench({"init-checkpoint", "--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("--vocab") && Catch::Contains("--set") && Catch::Contains("--seed"));
}

TEST_CASE("checkpoint cli: forward usage errors exit 2 with one line naming the problem", "[checkpoint][cli][errors]") {
  TempDir dir;
  const std::string ck = dir.file("ck.h5"), out = dir.file("out.h5");
  REQUIRE(run_srbench({"init-checkpoint", "--vocab", "7", "--out", ck, "--set", "d_model=8", "--set", "heads=2",
                       "--set", "max_len=4"})
              .exit_code == 0);
  auto batch = [&](const std::string& name, std::vector<int32_t> tokens, std::vector<int64_t> shape,
                   std::vector<int32_t> targets, std::vector<int64_t> target_shape) {
    write_batch(dir.file(name), tokens, shape, targets, target_shape);
    return dir.file(name);
  };
  const std::string ok = batch("ok.h5", {1, 2, 3, 4}, {1, 4}, {2, 3, 4, -1}, {1, 4});
  const std::string bad_token = batch("tok.h5", {1, 2, 3, 4, 5, 7}, {2, 3}, {1, 1, 1, 1, 1, 1}, {2, 3});
  const std::string bad_target = batch("tgt.h5", {1, 2, 3}, {1, 3}, {1, -2, 1}, {1, 3});
  const std::string too_long = batch("long.h5", {1, 2, 3, 4, 5}, {1, 5}, {1, 2, 3, 4, 5}, {1, 5});
  const std::string mismatch = batch("shape.h5", {1, 2, 3, 4}, {1, 4}, {1, 2, 3, 4}, {2, 2});
  const std::string flat = batch("flat.h5", {1, 2, 3, 4}, {4}, {1, 2, 3, 4}, {4});
  h5::write_file_atomically(dir.file("notargets.h5"), [&](hid_t f) {
    const std::vector<int32_t> t = {1, 2};
    h5::write_array(f, "tokens", t.data(), {1, 2});
  });
  // per-row lengths: [B] integers in [1, T]
  auto with_rows = [&](const std::string& name, const char* dataset, std::vector<int32_t> values) {
    write_batch(dir.file(name), {1, 2, 3, 4}, {1, 4}, {2, 3, 4, -1}, {1, 4});
    const h5::Id f = h5::open_file(dir.file(name), "batch", true);
    h5::write_array(f, dataset, values.data(), {static_cast<int64_t>(values.size())});
    return dir.file(name);
  };
  const std::string long_row = with_rows("rows5.h5", "lengths", {5});
  const std::string zero_input = with_rows("input0.h5", "input_lengths", {0});
  const std::string two_rows = with_rows("rows2.h5", "lengths", {4, 4});
  const std::string good_rows = with_rows("rows-ok.h5", "input_lengths", {3});
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"forward", "--batch", ok, "--out", out}, "--checkpoint"},
      {{"forward", "--checkpoint", ck, "--out", out}, "--batch"},
      {{"forward", "--checkpoint", ck, "--batch", ok}, "--out"},
      {{"forward", "--checkpoint", dir.file("missing.h5"), "--batch", ok, "--out", out}, "missing.h5: no such file"},
      {{"forward", "--checkpoint", ok, "--batch", ok, "--out", out}, "neither a checkpoint (/model) nor a run file"},
      {{"forward", "--checkpoint", ck, "--batch", dir.file("missing.h5"), "--out", out}, "missing.h5: no such file"},
      {{"forward", "--checkpoint", ck, "--batch", bad_token, "--out", out}, "tokens[1][2] = 7 is outside the vocabulary [0, 7)"},
      {{"forward", "--checkpoint", ck, "--batch", bad_target, "--out", out}, "targets[0][1] = -2"},
      {{"forward", "--checkpoint", ck, "--batch", too_long, "--out", out}, "max_len 4"},
      {{"forward", "--checkpoint", ck, "--batch", mismatch, "--out", out}, "differ in shape"},
      {{"forward", "--checkpoint", ck, "--batch", flat, "--out", out}, "2 dimensions"},
      {{"forward", "--checkpoint", ck, "--batch", dir.file("notargets.h5"), "--out", out}, "no dataset 'targets'"},
      {{"forward", "--checkpoint", ck, "--batch", ok, "--out", dir.file("nodir/out.h5")}, "does not exist"},
      {{"forward", "--checkpoint", ck, "--batch", long_row, "--out", out}, "lengths[0] = 5 is outside [1, 4]"},
      {{"forward", "--checkpoint", ck, "--batch", zero_input, "--out", out}, "input_lengths[0] = 0 is outside [1, 4]"},
      {{"forward", "--checkpoint", ck, "--batch", two_rows, "--out", out}, "dataset 'lengths' must be integer [1], got shape [2]"},
  };
  for (const auto& c : cases) {
    const auto r = run_srbench(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.says));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK(run_srbench({"forward", "--checkpoint", ck, "--batch", good_rows, "--out", out}).exit_code == 0);
  CHECK(run_srbench({"forward", "--checkpoint", ck, "--batch", ok, "--out", out}).exit_code == 0);
  CHECK(std::filesystem::exists(out));
  const auto help = run_srbench({"forward", "--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("--checkpoint") && Catch::Contains("--batch") && Catch::Contains("logits"));
}
