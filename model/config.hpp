// The model's configuration: the `model:` section of a suite, and the config stored in a
// checkpoint (model.md, "Config keys"). Defaults are model.md's.
//
// Spline settings are nested maps (`mlp_spline: {keypoints: 32}` in YAML), set one at a time
// with dotted keys (`set("mlp_spline.keypoints", "32")`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "common/field_table.hpp"

namespace YAML {
class Node;
}

namespace srbench::model {

enum class Position { Learned, Sinusoidal, Rope, Alibi, None, Relative };
enum class Norm { Layer, Rms };
enum class Activation { Gelu, Relu, Spline };
enum class Attention { Softmax, SplineScore, SplineKernel };
enum class Lime { None, Static };
enum class Extrapolate { Constant, Linear };
enum class SplineInit { Gelu, Relu, Identity, Exp, Elu1, Zero };
enum class SplineShare { Layer, Model };
// recurrent.md: the network (`arch`), and rnn's nonlinearity.
enum class Arch { Transformer, Rnn, Lstm, Gru, StackRnn, TapeRnn, Mamba, DeltaNet, Gla };
enum class Nonlinearity { Tanh, Relu };
// linear-rnn.md: Mamba's eigenvalue range ([0, 1] or [−1, 1]) and the init scheme.
enum class Eigenvalues { Positive, Signed };
enum class InitScheme { Default, Grazzi };
// linear-rnn.md: GLA's decay (α = exp(logsigmoid(z)/16), or none: causal linear attention).
enum class GlaDecay { Gated, None };

const char* to_string(Position p);
const char* to_string(Norm n);
const char* to_string(Activation a);
const char* to_string(Attention a);
const char* to_string(Lime l);
const char* to_string(Extrapolate e);
const char* to_string(SplineInit i);
const char* to_string(SplineShare s);
const char* to_string(Arch a);
const char* to_string(Nonlinearity n);
const char* to_string(Eigenvalues e);
const char* to_string(InitScheme i);
const char* to_string(GlaDecay g);

// One learnable spline φ (model.md, "The learnable spline"): K keypoints x_k = −R + k·h,
// h = 2R/(K−1), with learnable values θ_k.
struct SplineConfig {
  int keypoints = 64;    // K >= 2
  double range = 8.0;    // R > 0
  Extrapolate extrapolate = Extrapolate::Constant;
  std::optional<SplineInit> init;  // unset: the default of its site (ModelConfig::mlp_init / attn_init)
  SplineShare share = SplineShare::Layer;

  double step() const { return 2.0 * range / (keypoints - 1); }  // h
  bool operator==(const SplineConfig&) const = default;
};

struct ModelConfig {
  static constexpr int kMaxLayers = 1024;  // the deepest stack validate() accepts

  int vocab = 0;           // vocabulary size V; 0 = not set yet (comes from the task)
  int layers = 2;          // 1 … kMaxLayers
  int d_model = 64;
  int heads = 4;           // d_model must be divisible by heads
  int mlp_ratio = 4;       // MLP hidden width = mlp_ratio * d_model
  int max_len = 256;       // longest sequence the model accepts (rows of a learned table)
  Position position = Position::Learned;
  Norm norm = Norm::Layer;
  Activation activation = Activation::Gelu;
  Attention attention = Attention::Softmax;
  Lime lime = Lime::None;
  std::string lime_init = "uniform";  // uniform | identity: the routers' init under `lime: static`
  // false: the bidirectional transformer (chomsky.md §7.3): every position attends to every
  // position of its own example, padding keys masked. Written into the YAML only when false.
  bool causal = true;
  SplineConfig mlp_spline;   // used by `activation: spline`
  SplineConfig attn_spline;  // used by `attention: spline-score | spline-kernel`

  // ---- recurrent.md: `arch` and the recurrent archs' own keys (each applies under one arch) ----
  Arch arch = Arch::Transformer;
  Nonlinearity nonlinearity = Nonlinearity::Tanh;  // rnn: tanh (torch.nn.RNN's default) or relu
  int stack_size = 30;                             // stack_rnn: n >= 2 cells per stack
  int stack_cell_size = 8;                         // stack_rnn: c >= 1 values per cell
  int tape_size = 40;                              // tape_rnn: n >= 2 cells
  int tape_cell_size = 8;                          // tape_rnn: c >= 1 values per cell
  int tape_mlp = 64;                               // tape_rnn: k, the write MLP's hidden width
  bool recurrent() const { return arch != Arch::Transformer && !linear(); }

  // ---- linear-rnn.md: the linear recurrent archs (mamba) and their keys ----
  int d_state = 16;                               // mamba: N >= 1
  int d_conv = 4;                                 // mamba: κ >= 1; deltanet: κ >= 0 (0: no short convolution)
  int expand = 2;                                 // mamba: E = expand·d_model
  int dt_rank = 0;                                // mamba: R >= 1; 0 = ⌈d_model/16⌉ (resolved_dt_rank)
  Eigenvalues eigenvalues = Eigenvalues::Positive;  // mamba: Ā in (0, 1) or (−1, 1)
  bool final_norm = true;                         // linear archs: ln_f before the head
  InitScheme init = InitScheme::Default;          // mamba, deltanet: the reference LM's init or Grazzi et al.'s
  int beta_scale = 1;                             // deltanet: β = beta_scale·σ(·), 1 or 2 (eigenvalues in [−1, 1])
  bool gated = false;                             // deltanet: Gated DeltaNet's decay α
  bool output_gate = false;                       // deltanet: ô ⊙ SiLU(W_g u)
  int gated_mlp_hidden = -1;                      // key mlp_hidden: deltanet, gla: the SwiGLU MLP's width; 0 none; −1 = F's rule (resolved_mlp_hidden)
  GlaDecay gla_decay = GlaDecay::Gated;           // gla: the gate, or α ≡ 1
  // `norm` as stated (set() marks it): under the linear archs an unstated norm is rms (their
  // default), under the transformer layer (model.md's).
  bool norm_stated = false;
  bool linear() const { return arch == Arch::Mamba || arch == Arch::DeltaNet || arch == Arch::Gla; }
  bool transformer() const { return arch == Arch::Transformer; }
  Norm resolved_norm() const { return linear() && !norm_stated ? Norm::Rms : norm; }
  int resolved_dt_rank() const { return dt_rank > 0 ? dt_rank : (d_model + 15) / 16; }
  // F's GatedMLP width for hidden_ratio 4: 256·⌈⌊8d/3⌋/256⌉ (256 for d <= 96, 512 for d = 128)
  // The SwiGLU MLP's width in a linear arch's blocks: 0 under mamba (its blocks have none), else
  // mlp_hidden, or F's rule when it is −1.
  int resolved_mlp_hidden() const {
    if (arch == Arch::Mamba) return 0;
    return gated_mlp_hidden >= 0 ? gated_mlp_hidden : 256 * ((8 * d_model / 3 + 255) / 256);
  }
  // Whether `key` (a key of keys(), or a spline section's name) applies under `a`: under the
  // transformer every key but the recurrent and linear archs' own; under a recurrent or linear
  // arch vocab, arch, layers, d_model, max_len and that arch's own keys (linear-rnn.md's table). A key that does not apply is not written
  // by to_yaml(), not compared by ==, not checked by validate().
  static bool applies(Arch a, const std::string& key);
  // ModelError naming the first of `stated` (keys given explicitly, e.g. a checkpoint's config
  // or init-checkpoint --set) that does not apply under this config's arch.
  void check_applies(const std::vector<std::string>& stated) const;

  bool mlp_has_spline() const { return arch == Arch::Transformer && activation == Activation::Spline; }
  bool attn_has_spline() const { return arch == Arch::Transformer && attention != Attention::Softmax; }
  // The spline inits with model.md's defaults filled in: gelu for the MLP; exp for spline-score,
  // elu1 for spline-kernel.
  SplineInit mlp_init() const { return mlp_spline.init.value_or(SplineInit::Gelu); }
  SplineInit attn_init() const {
    return attn_spline.init.value_or(attention == Attention::SplineKernel ? SplineInit::Elu1 : SplineInit::Exp);
  }

  int head_size() const { return d_model / heads; }
  int mlp_hidden() const { return mlp_ratio * d_model; }

  // Sets one key from its text, read as a YAML scalar (`--set KEY=VALUE`, without "model.");
  // spline settings by dotted keys (`mlp_spline.keypoints`), or a whole section as a YAML map
  // (`mlp_spline`, `{keypoints: 32, init: relu}`).
  // Throws ModelError naming the key for an unknown key, a wrong type or a bad value.
  void set(const std::string& key, const std::string& value_text);

  // Applies every key of a YAML map (a suite's `model:` section); keys not given keep their
  // value (nested maps: `mlp_spline: {keypoints: 32}`). Throws ModelError naming the key for
  // anything set() rejects, and for a key that does not apply under the resulting arch.
  void apply_yaml(const YAML::Node& map);
  // The resolved config as a YAML block map (every key, `vocab` included; spline sections as
  // nested maps with their inits resolved); from_yaml(to_yaml()) gives back an equal config.
  std::string to_yaml() const;
  static ModelConfig from_yaml(const std::string& text);

  // Throws ModelError naming the offending key: vocab not set, sizes < 1, d_model not divisible
  // by heads, odd head size under rope, odd d_model under sinusoidal or relative, spline
  // keypoints < 2 or range not > 0, alibi or relative with spline-kernel attention; under a
  // recurrent arch only its own keys are checked (sizes >= 1, stack_size and tape_size >= 2).
  void validate() const;

  // Every scalar key set() accepts, in the order to_yaml() writes them; spline settings dotted
  // ("mlp_spline.keypoints", …). set() also takes the section names "mlp_spline", "attn_spline".
  static const std::vector<std::string>& keys();

  // Equal resolved configs: an unset spline init equals its default given explicitly.
  bool operator==(const ModelConfig& o) const;
};

// The config's field table (common/field_table.hpp), in the order to_yaml() writes the keys: the
// one list of the model's keys. Each field reads its value from the text of a YAML scalar
// (ModelError naming the key), writes it, compares it resolved, and — for the fields with a
// range — checks it (validate()). A new model key is one entry here (config.cpp) plus its check.
const FieldTable<ModelConfig, const std::string&>& model_fields();

}  // namespace srbench::model
