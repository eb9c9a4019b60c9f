// ModelConfig: --set parsing, YAML round trip, validation errors naming the key.
#include <catch2/catch.hpp>

#include <algorithm>

#include "model/config.hpp"
#include "model/params.hpp"

using namespace srbench::model;

TEST_CASE("config: defaults are model.md's", "[config]") {
  ModelConfig c;
  CHECK(c.layers == 2);
  CHECK(c.d_model == 64);
  CHECK(c.heads == 4);
  CHECK(c.mlp_ratio == 4);
  CHECK(c.max_len == 256);
  CHECK(c.position == Position::Learned);
  CHECK(c.norm == Norm::Layer);
  CHECK(c.activation == Activation::Gelu);
  CHECK(c.attention == Attention::Softmax);
}

TEST_CASE("config: set parses values and names the key on errors", "[config][errors]") {
  ModelConfig c;
  c.set("d_model", "128");
  c.set("position", "rope");
  c.set("norm", "rms");
  c.set("activation", "relu");
  c.set("max_len", " 512 ");
  CHECK(c.d_model == 128);
  CHECK(c.position == Position::Rope);
  CHECK(c.norm == Norm::Rms);
  CHECK(c.activation == Activation::Relu);
  CHECK(c.max_len == 512);
  CHECK_THROWS_WITH(c.set("d_model", "abc"), Catch::Contains("model.d_model") && Catch::Contains("integer"));
  CHECK_THROWS_WITH(c.set("d_model", "1.5"), Catch::Contains("model.d_model"));
  CHECK_THROWS_WITH(c.set("position", "absolute"),
                    Catch::Contains("model.position") && Catch::Contains("learned, sinusoidal, rope, alibi, none"));
  CHECK_THROWS_WITH(c.set("dmodel", "3"), Catch::Contains("model.dmodel") && Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(c.set("activation", "swish"), Catch::Contains("model.activation") && Catch::Contains("gelu, relu, spline"));
  CHECK_THROWS_WITH(c.set("attention", "linear"),
                    Catch::Contains("model.attention") && Catch::Contains("softmax, spline-score, spline-kernel"));
  CHECK_THROWS_WITH(c.set("lime", "dynamic"), Catch::Contains("model.lime") && Catch::Contains("none, static"));
}

TEST_CASE("config: YAML round trip", "[config]") {
  ModelConfig c;
  c.vocab = 11;
  c.layers = 3;
  c.d_model = 48;
  c.heads = 6;
  c.mlp_ratio = 2;
  c.max_len = 100;
  c.position = Position::Alibi;
  c.norm = Norm::Rms;
  c.activation = Activation::Relu;
  const std::string y = c.to_yaml();
  CHECK_THAT(y, Catch::Contains("position: alibi"));
  CHECK(ModelConfig::from_yaml(y) == c);
  // a partial section keeps the defaults of the keys it does not give
  const ModelConfig p = ModelConfig::from_yaml("{d_model: 32, position: none}");
  CHECK(p.d_model == 32);
  CHECK(p.position == Position::None);
  CHECK(p.layers == 2);
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{heads: [1, 2]}"), Catch::Contains("model.heads"));
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{mlp_spline: {keypoints: 1}}"), Catch::Contains("mlp_spline.keypoints"));
}

TEST_CASE("config: validate names the offending key", "[config]") {
  ModelConfig c;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.vocab"));
  c.vocab = 7;
  c.validate();
  c.heads = 5;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.d_model") && Catch::Contains("divisible by heads 5"));
  c.heads = 4;
  c.d_model = 12;  // head size 3
  c.position = Position::Rope;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.position") && Catch::Contains("even head size"));
  c.d_model = 16;
  c.validate();
  c.layers = 0;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.layers"));
  // The deepest stack accepted, for a transformer and a recurrent arch alike; one more is refused
  // with the bound (a suite asking 65,536 layers failed fast instead of listing 786k tensors).
  for (Arch arch : {Arch::Transformer, Arch::Lstm}) {
    c.arch = arch;
    c.layers = ModelConfig::kMaxLayers;
    c.validate();
    c.layers = ModelConfig::kMaxLayers + 1;
    CHECK_THROWS_WITH(c.validate(), Catch::Contains("model.layers") && Catch::Contains("must be <= 1024, got 1025"));
  }
}

TEST_CASE("params: layout names, shapes and decay as model.md lists them", "[config]") {
  ModelConfig c;
  c.vocab = 7;
  c.d_model = 8;
  c.heads = 2;
  c.layers = 2;
  c.max_len = 16;
  const ParamLayout lay(c);
  CHECK(lay.at("tok_emb").shape == std::vector<int64_t>{7, 8});
  CHECK(lay.at("pos_emb").shape == std::vector<int64_t>{16, 8});
  CHECK(lay.at("blocks.1.attn.q.weight").shape == std::vector<int64_t>{8, 8});
  CHECK(lay.at("blocks.1.mlp.fc.weight").shape == std::vector<int64_t>{32, 8});
  CHECK(lay.at("blocks.1.mlp.proj.weight").shape == std::vector<int64_t>{8, 32});
  CHECK(lay.at("blocks.0.mlp.fc.bias").shape == std::vector<int64_t>{32});
  CHECK(lay.at("head.weight").shape == std::vector<int64_t>{7, 8});
  CHECK(lay.at("head.bias").shape == std::vector<int64_t>{7});
  CHECK(lay.at("blocks.0.attn.k.weight").decay);
  CHECK_FALSE(lay.at("blocks.0.attn.k.bias").decay);
  CHECK_FALSE(lay.at("blocks.0.ln1.weight").decay);
  CHECK(lay.at("tok_emb").decay);
  // q, k, v adjacent: one [3d, d] matrix
  CHECK(lay.at("blocks.0.attn.k.weight").offset == lay.at("blocks.0.attn.q.weight").offset + 64);
  CHECK(lay.at("blocks.0.attn.v.weight").offset == lay.at("blocks.0.attn.q.weight").offset + 128);
  // contiguous, no overlaps, total = sum of sizes
  size_t off = 0, count = 0;
  for (const auto& p : lay.tensors()) {
    CHECK(p.offset == off);
    off += p.size;
    ++count;
  }
  CHECK(off == lay.total());
  // 1 + 1 + per block (2 + 3 + 3 + 2 + 2 + 4) + 2 + 2
  CHECK(count == 2 + 2 * 16 + 4);
  CHECK_THROWS_WITH(lay.at("blocks.2.attn.q.weight"), Catch::Contains("blocks.2.attn.q.weight"));

  c.norm = Norm::Rms;
  c.position = Position::Rope;
  const ParamLayout rms(c);
  CHECK(rms.find("pos_emb") == nullptr);
  CHECK(rms.find("blocks.0.ln1.bias") == nullptr);
  CHECK(rms.find("ln_f.bias") == nullptr);
  CHECK(rms.find("ln_f.weight") != nullptr);
}

TEST_CASE("config: spline settings by dotted keys, nested YAML, defaults and validation", "[config][splines]") {
  ModelConfig c;
  // model.md's defaults
  CHECK(c.mlp_spline.keypoints == 64);
  CHECK(c.mlp_spline.range == 8.0);
  CHECK(c.mlp_spline.extrapolate == Extrapolate::Constant);
  CHECK(c.mlp_spline.share == SplineShare::Layer);
  CHECK(c.mlp_init() == SplineInit::Gelu);
  CHECK(c.attn_init() == SplineInit::Exp);
  c.set("attention", "spline-kernel");
  CHECK(c.attention == Attention::SplineKernel);
  CHECK(c.attn_init() == SplineInit::Elu1);
  c.set("attention", "spline-score");
  CHECK(c.attn_init() == SplineInit::Exp);
  c.set("activation", "spline");
  CHECK(c.activation == Activation::Spline);

  c.set("mlp_spline.keypoints", "32");
  c.set("mlp_spline.range", "4.5");
  c.set("mlp_spline.extrapolate", "linear");
  c.set("mlp_spline.init", "relu");
  c.set("mlp_spline.share", "model");
  c.set("attn_spline", "{keypoints: 17, init: zero}");
  CHECK(c.mlp_spline.keypoints == 32);
  CHECK(c.mlp_spline.range == 4.5);
  CHECK(c.mlp_spline.extrapolate == Extrapolate::Linear);
  CHECK(c.mlp_init() == SplineInit::Relu);
  CHECK(c.mlp_spline.share == SplineShare::Model);
  CHECK(c.attn_spline.keypoints == 17);
  CHECK(c.attn_init() == SplineInit::Zero);
  c.set("attention", "spline-kernel");
  CHECK(c.attn_init() == SplineInit::Zero);  // an explicit init stays

  CHECK_THROWS_WITH(c.set("mlp_spline.keypoints", "1"), Catch::Contains("model.mlp_spline.keypoints") && Catch::Contains("at least 2"));
  CHECK_THROWS_WITH(c.set("attn_spline.range", "0"), Catch::Contains("model.attn_spline.range") && Catch::Contains("> 0"));
  CHECK_THROWS_WITH(c.set("attn_spline.range", "-1"), Catch::Contains("model.attn_spline.range"));
  CHECK_THROWS_WITH(c.set("attn_spline.range", "wide"), Catch::Contains("model.attn_spline.range") && Catch::Contains("number"));
  CHECK_THROWS_WITH(c.set("mlp_spline.init", "tanh"),
                    Catch::Contains("model.mlp_spline.init") && Catch::Contains("gelu, relu, identity, exp, elu1, zero"));
  CHECK_THROWS_WITH(c.set("mlp_spline.extrapolate", "cubic"), Catch::Contains("constant, linear"));
  CHECK_THROWS_WITH(c.set("mlp_spline.share", "block"), Catch::Contains("model.mlp_spline.share") && Catch::Contains("layer, model"));
  CHECK_THROWS_WITH(c.set("mlp_spline.knots", "3"), Catch::Contains("model.mlp_spline.knots") && Catch::Contains("keypoints, range"));
  CHECK_THROWS_WITH(c.set("mlp_spline", "32"), Catch::Contains("model.mlp_spline") && Catch::Contains("map"));
  // the unchanged values after the rejected ones
  CHECK(c.mlp_spline.keypoints == 32);
  CHECK(c.attn_spline.range == 8.0);

  // keys() lists the dotted keys
  const auto& keys = ModelConfig::keys();
  for (const char* k : {"mlp_spline.keypoints", "mlp_spline.range", "mlp_spline.extrapolate", "mlp_spline.init",
                        "mlp_spline.share", "attn_spline.keypoints", "attn_spline.share"})
    CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());

  // YAML round trip: nested maps, inits resolved
  c.vocab = 5;
  c.validate();
  const std::string y = c.to_yaml();
  CHECK_THAT(y, Catch::Contains("mlp_spline:") && Catch::Contains("range: 4.5") && Catch::Contains("init: zero"));
  CHECK(ModelConfig::from_yaml(y) == c);
  ModelConfig d;  // defaults: the resolved inits are written out, and read back equal
  d.attention = Attention::SplineKernel;
  CHECK_THAT(d.to_yaml(), Catch::Contains("init: elu1") && Catch::Contains("init: gelu"));
  CHECK(ModelConfig::from_yaml(d.to_yaml()) == d);
  ModelConfig e = d;
  e.attn_spline.init = SplineInit::Exp;
  CHECK_FALSE(e == d);
  const ModelConfig n = ModelConfig::from_yaml("{activation: spline, mlp_spline: {keypoints: 9, range: 2}}");
  CHECK(n.mlp_spline.keypoints == 9);
  CHECK(n.mlp_spline.range == 2.0);
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{mlp_spline: {init: [1]}}"), Catch::Contains("model.mlp_spline.init"));
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{attn_spline: {range: -2}}"), Catch::Contains("model.attn_spline.range"));

  // validate: alibi has no meaning for the kernel form; a config error naming both keys
  ModelConfig v;
  v.vocab = 5;
  v.position = Position::Alibi;
  v.attention = Attention::SplineKernel;
  CHECK_THROWS_WITH(v.validate(), Catch::Contains("model.position") && Catch::Contains("alibi") &&
                                      Catch::Contains("model.attention") && Catch::Contains("spline-kernel"));
  v.attention = Attention::SplineScore;
  v.validate();
  v.mlp_spline.keypoints = 1;  // set directly, past set()'s check
  CHECK_THROWS_WITH(v.validate(), Catch::Contains("model.mlp_spline.keypoints"));
  v.mlp_spline.keypoints = 2;
  v.attn_spline.range = 0;
  CHECK_THROWS_WITH(v.validate(), Catch::Contains("model.attn_spline.range"));
}

TEST_CASE("params: spline values as model.md names them, in their own group, contiguous at the end",
          "[config][splines]") {
  ModelConfig c;
  c.vocab = 7;
  c.d_model = 8;
  c.heads = 2;
  c.layers = 2;
  c.max_len = 16;
  const ParamLayout plain(c);
  CHECK(plain.spline_block().size == 0);
  c.activation = Activation::Spline;
  c.attention = Attention::SplineScore;
  c.mlp_spline.keypoints = 10;
  c.attn_spline.keypoints = 12;
  const ParamLayout lay(c);
  CHECK(lay.total() == plain.total() + 2 * (10 + 12));
  for (int l = 0; l < 2; ++l) {
    const auto& m = lay.at("blocks." + std::to_string(l) + ".mlp.act.values");
    const auto& a = lay.at("blocks." + std::to_string(l) + ".attn.kernel.values");
    CHECK(m.shape == std::vector<int64_t>{10});
    CHECK(a.shape == std::vector<int64_t>{12});
    CHECK(m.group == ParamGroup::Spline);
    CHECK(m.spline == SplineSite::Mlp);
    CHECK(a.spline == SplineSite::Attn);
    CHECK_FALSE(m.decay);
    CHECK(m.offset >= lay.spline_block().offset);
    CHECK(m.offset + m.size <= lay.spline_block().offset + lay.spline_block().size);
  }
  CHECK(lay.spline_block().offset == plain.total());
  CHECK(lay.spline_block().size == 44);
  CHECK(lay.find("spline.mlp.values") == nullptr);
  for (const auto& p : lay.tensors())
    CHECK((p.group == ParamGroup::Spline) == (p.offset >= lay.spline_block().offset));

  c.mlp_spline.share = SplineShare::Model;
  c.attn_spline.share = SplineShare::Model;
  const ParamLayout shared(c);
  CHECK(shared.at("spline.mlp.values").shape == std::vector<int64_t>{10});
  CHECK(shared.at("spline.attn.values").shape == std::vector<int64_t>{12});
  CHECK(shared.find("blocks.0.mlp.act.values") == nullptr);
  CHECK(shared.spline_block().size == 22);
}
