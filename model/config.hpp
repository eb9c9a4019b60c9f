// The model's configuration: the `model:` section of a suite, and the config stored in a
// checkpoint (model.md, "Config keys"). Defaults are model.md's.
//
// Not implemented yet (rejected with a ModelError naming the key): `activation: spline`,
// `attention: spline-score | spline-kernel`, `lime: static`, the `mlp_spline.*` and
// `attn_spline.*` settings. The enums below are where they will be added.
#pragma once

#include <string>
#include <vector>

#include "model/error.hpp"

namespace YAML {
class Node;
}

namespace srbench::model {

enum class Position { Learned, Sinusoidal, Rope, Alibi, None };
enum class Norm { Layer, Rms };
enum class Activation { Gelu, Relu };   // later: Spline
enum class Attention { Softmax };       // later: SplineScore, SplineKernel
enum class Lime { None };               // later: Static

const char* to_string(Position p);
const char* to_string(Norm n);
const char* to_string(Activation a);
const char* to_string(Attention a);
const char* to_string(Lime l);

struct ModelConfig {
  int vocab = 0;           // vocabulary size V; 0 = not set yet (comes from the task)
  int layers = 2;
  int d_model = 64;
  int heads = 4;           // d_model must be divisible by heads
  int mlp_ratio = 4;       // MLP hidden width = mlp_ratio * d_model
  int max_len = 256;       // longest sequence the model accepts (rows of a learned table)
  Position position = Position::Learned;
  Norm norm = Norm::Layer;
  Activation activation = Activation::Gelu;
  Attention attention = Attention::Softmax;
  Lime lime = Lime::None;
  std::string lime_init = "uniform";  // uniform | identity; only meaningful once `lime: static` exists

  int head_size() const { return d_model / heads; }
  int mlp_hidden() const { return mlp_ratio * d_model; }

  // Sets one key from its text, read as a YAML scalar (`--set KEY=VALUE`, without "model.").
  // Throws ModelError naming the key for an unknown key, a wrong type or a bad value.
  void set(const std::string& key, const std::string& value_text);

  // Applies every key of a YAML map (a suite's `model:` section); keys not given keep their
  // value. Throws ModelError naming the key for anything set() rejects.
  void apply_yaml(const YAML::Node& map);
  // The resolved config as a YAML block map (every key, `vocab` included); from_yaml(to_yaml())
  // gives back an equal config.
  std::string to_yaml() const;
  static ModelConfig from_yaml(const std::string& text);

  // Throws ModelError naming the offending key: vocab not set, sizes < 1, d_model not divisible
  // by heads, odd head size under rope, odd d_model under sinusoidal.
  void validate() const;

  // Every key set() accepts, in the order to_yaml() writes them.
  static const std::vector<std::string>& keys();

  bool operator==(const ModelConfig&) const = default;
};

}  // namespace srbench::model
