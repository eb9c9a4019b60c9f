// ModelConfig: --set parsing, YAML round trip, validation errors naming the key.
#include <catch2/catch.hpp>

#include "model/config.hpp"
#include "model/params.hpp"

using namespace srbench::model;

TEST_CASE("config: defaults are model.md's") {
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

TEST_CASE("config: set parses values and names the key on errors") {
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
  CHECK_THROWS_WITH(c.set("activation", "spline"), Catch::Contains("model.activation") && Catch::Contains("not implemented"));
  CHECK_THROWS_WITH(c.set("attention", "spline-score"), Catch::Contains("not implemented"));
  CHECK_THROWS_WITH(c.set("attention", "spline-kernel"), Catch::Contains("not implemented"));
  CHECK_THROWS_WITH(c.set("lime", "static"), Catch::Contains("model.lime") && Catch::Contains("not implemented"));
  CHECK_THROWS_WITH(c.set("mlp_spline.keypoints", "32"), Catch::Contains("not implemented"));
}

TEST_CASE("config: YAML round trip") {
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
  CHECK_THROWS_WITH(ModelConfig::from_yaml("{mlp_spline: {keypoints: 8}}"), Catch::Contains("mlp_spline.keypoints"));
}

TEST_CASE("config: validate names the offending key") {
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
}

TEST_CASE("params: layout names, shapes and decay as model.md lists them") {
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
