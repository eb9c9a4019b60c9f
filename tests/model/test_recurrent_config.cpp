// The recurrent archs' config keys (recurrent.md, "Config keys"): which keys apply under which
// arch, the resolved YAML's keys and order, round trips, errors naming the key, and that the
// transformer's configs keep their text.
#include <catch2/catch.hpp>

#include <set>

#include "model/checkpoint.hpp"
#include "model/config.hpp"
#include <algorithm>
#include "model/model.hpp"
#include "tests/support.hpp"

using namespace srbench::model;

TEST_CASE("recurrent config: a recurrent config's YAML holds its own keys in recurrent.md's order",
          "[recurrent][config]") {
  ModelConfig c;
  c.vocab = 7;
  c.heads = 8;          // transformer keys changed from their defaults: not written
  c.position = Position::Rope;
  c.activation = Activation::Spline;
  c.stack_size = 5;     // another arch's key changed: not written either
  c.arch = Arch::Rnn;
  CHECK(c.to_yaml() == "vocab: 7\narch: rnn\nlayers: 2\nd_model: 64\nmax_len: 256\nnonlinearity: tanh\n");
  c.arch = Arch::Lstm;
  CHECK(c.to_yaml() == "vocab: 7\narch: lstm\nlayers: 2\nd_model: 64\nmax_len: 256\n");
  c.arch = Arch::Gru;
  CHECK(c.to_yaml() == "vocab: 7\narch: gru\nlayers: 2\nd_model: 64\nmax_len: 256\n");
  c.arch = Arch::StackRnn;
  CHECK(c.to_yaml() == "vocab: 7\narch: stack_rnn\nlayers: 2\nd_model: 64\nmax_len: 256\nstack_size: 5\n"
                       "stack_cell_size: 8\n");
  c.arch = Arch::TapeRnn;
  CHECK(c.to_yaml() == "vocab: 7\narch: tape_rnn\nlayers: 2\nd_model: 64\nmax_len: 256\ntape_size: 40\n"
                       "tape_cell_size: 8\ntape_mlp: 64\n");
}

TEST_CASE("recurrent config: a transformer's YAML is unchanged by the recurrent keys", "[recurrent][config]") {
  ModelConfig c;
  c.vocab = 11;
  const std::string before = c.to_yaml();
  c.nonlinearity = Nonlinearity::Relu;
  c.stack_size = 3, c.stack_cell_size = 2, c.tape_size = 9, c.tape_cell_size = 1, c.tape_mlp = 5;
  CHECK(c.to_yaml() == before);
  CHECK(before.find("arch") == std::string::npos);
  // model.md's keys, as every transformer config and checkpoint has written them
  CHECK(before.rfind("vocab: 11\nlayers: 2\nd_model: 64\nheads: 4\nmlp_ratio: 4\nmax_len: 256\nposition: learned\n", 0) == 0);
  // a config without arch is a transformer
  CHECK(ModelConfig::from_yaml(before).arch == Arch::Transformer);
  CHECK(ModelConfig::from_yaml(before) == c);
}

TEST_CASE("recurrent config: round trips, equality ignores the keys an arch does not have", "[recurrent][config]") {
  for (const char* arch : {"rnn", "lstm", "gru", "stack_rnn", "tape_rnn"}) {
    INFO(arch);
    ModelConfig c;
    c.vocab = 5;
    c.set("arch", arch);
    c.set("layers", "3");
    c.set("d_model", "24");
    c.set("max_len", "100");
    if (c.arch == Arch::Rnn) c.set("nonlinearity", "relu");
    if (c.arch == Arch::StackRnn) c.set("stack_size", "4"), c.set("stack_cell_size", "3");
    if (c.arch == Arch::TapeRnn) c.set("tape_size", "6"), c.set("tape_cell_size", "2"), c.set("tape_mlp", "9");
    const ModelConfig back = ModelConfig::from_yaml(c.to_yaml());
    CHECK(back == c);
    CHECK(back.to_yaml() == c.to_yaml());
    ModelConfig other = c;
    other.heads = 3;  // not a key of a recurrent arch
    other.mlp_spline.keypoints = 9;
    CHECK(other == c);
    other.d_model = 25;
    CHECK_FALSE(other == c);
  }
  ModelConfig a, b;
  a.vocab = b.vocab = 5;
  a.arch = Arch::Lstm;
  b.arch = Arch::Gru;
  CHECK_FALSE(a == b);
}

TEST_CASE("recurrent config: applies() is recurrent.md's table (and linear-rnn.md's for mamba, deltanet and gla)",
          "[recurrent][config]") {
  const std::set<std::string> mamba_own = {"d_state", "d_conv", "expand", "dt_rank", "eigenvalues", "final_norm", "init"};
  const std::set<std::string> deltanet_own = {"heads", "d_conv", "beta_scale", "gated", "output_gate", "mlp_hidden",
                                              "norm", "final_norm", "init"};
  const std::set<std::string> gla_own = {"heads", "gla_decay", "mlp_hidden", "norm", "final_norm"};
  const std::set<std::string> linear_only = {"d_state",    "d_conv", "expand",      "dt_rank",    "eigenvalues", "final_norm",
                                             "init",       "beta_scale", "gated", "output_gate", "mlp_hidden",  "gla_decay"};
  for (const auto& key : ModelConfig::keys()) {
    INFO(key);
    const bool recurrent_own = key == "nonlinearity" || key.rfind("stack_", 0) == 0 || key.rfind("tape_", 0) == 0;
    const bool common = key == "vocab" || key == "arch" || key == "layers" || key == "d_model" || key == "max_len";
    CHECK(ModelConfig::applies(Arch::Transformer, key) == !(recurrent_own || linear_only.count(key)));
    CHECK(ModelConfig::applies(Arch::Mamba, key) == (common || mamba_own.count(key) || key == "norm"));
    CHECK(ModelConfig::applies(Arch::DeltaNet, key) == (common || deltanet_own.count(key) > 0));
    CHECK(ModelConfig::applies(Arch::Gla, key) == (common || gla_own.count(key) > 0));
    CHECK(ModelConfig::applies(Arch::Lstm, key) == common);
    CHECK(ModelConfig::applies(Arch::Gru, key) == common);
    CHECK(ModelConfig::applies(Arch::Rnn, key) == (common || key == "nonlinearity"));
    CHECK(ModelConfig::applies(Arch::StackRnn, key) == (common || key.rfind("stack_", 0) == 0));
    CHECK(ModelConfig::applies(Arch::TapeRnn, key) == (common || key.rfind("tape_", 0) == 0));
  }
  for (const char* key : {"heads", "mlp_ratio", "position", "norm", "activation", "attention", "lime", "lime_init",
                          "mlp_spline.keypoints", "attn_spline.init", "mlp_spline"})
    CHECK_FALSE(ModelConfig::applies(Arch::Rnn, key));
}

TEST_CASE("recurrent config: errors name the key and the arch", "[recurrent][config][errors]") {
  // a stated key that does not apply (a checkpoint's config, a model: map)
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{arch: lstm, heads: 4}"),
                    Catch::Contains("model.heads") && Catch::Contains("does not apply under arch lstm"));
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{heads: 4, arch: gru}"), Catch::Contains("model.heads"));  // any order
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{arch: rnn, mlp_spline: {keypoints: 9}}"),
                    Catch::Contains("model.mlp_spline.keypoints"));
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{arch: lstm, stack_size: 4}"),
                    Catch::Contains("model.stack_size") && Catch::Contains("arch lstm"));
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{stack_size: 4}"),
                    Catch::Contains("model.stack_size") && Catch::Contains("arch transformer"));
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{arch: stack_rnn, nonlinearity: relu}"), Catch::Contains("model.nonlinearity"));
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{arch: rnn, tape_mlp: 3}"), Catch::Contains("model.tape_mlp"));
  ModelConfig::from_yaml("{arch: rnn, nonlinearity: relu}");  // its own key
  // unknown arch: the nearest valid name
  ModelConfig c;
  CHECK_THROWS_WITH(c.set("arch", "lstn"), Catch::Contains("model.arch") && Catch::Contains("did you mean 'lstm'"));
  CHECK_THROWS_WITH(c.set("arch", "stackrnn"), Catch::Contains("did you mean 'stack_rnn'"));
  CHECK_THROWS_WITH(c.set("arch", "mambo"), Catch::Contains("unknown value 'mambo'") &&
                                                Catch::Contains("did you mean 'mamba'") &&
                                                Catch::Contains("transformer, rnn, lstm, gru, stack_rnn, tape_rnn, mamba, deltanet"));
  CHECK_THROWS_WITH(c.set("nonlinearity", "sigmoid"), Catch::Contains("model.nonlinearity") && Catch::Contains("tanh, relu"));
  // ranges, checked only under the arch that has the key
  c.vocab = 3;
  c.stack_size = 1;
  c.validate();  // a transformer: stack_size is not its key
  c.arch = Arch::StackRnn;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.stack_size") && Catch::Contains(">= 2, got 1"));
  c.stack_size = 2;
  c.stack_cell_size = 0;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.stack_cell_size"));
  c.arch = Arch::TapeRnn;
  c.tape_size = 1;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.tape_size"));
  c.tape_size = 2;
  c.tape_mlp = 0;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.tape_mlp"));
  // the transformer's cross-field checks are not a recurrent model's
  ModelConfig r;
  r.vocab = 3;
  r.arch = Arch::Gru;
  r.d_model = 10;
  r.heads = 4;  // 10 % 4 != 0 would be an error for a transformer
  r.validate();
}

TEST_CASE("recurrent config: a checkpoint of every arch round-trips its config and parameters",
          "[recurrent][config][checkpoint]") {
  srbench::test::TempDir dir;
  for (const char* arch : {"rnn", "lstm", "gru", "stack_rnn", "tape_rnn"}) {
    INFO(arch);
    ModelConfig c;
    c.vocab = 6;
    c.set("arch", arch);
    c.set("d_model", "8");
    Model m(c);
    m.init(4);
    const std::string path = dir.file(std::string(arch) + ".h5");
    save_checkpoint(m, path);
    const Model back = load_checkpoint(path);
    CHECK(back.config() == c);
    CHECK(back.config().to_yaml() == c.to_yaml());
    REQUIRE(back.num_params() == m.num_params());
    CHECK(std::equal(m.params(), m.params() + m.num_params(), back.params()));
  }
}
