// The parameter layout: every learnable tensor of a model, by its checkpoint name (model.md,
// "Checkpoint"), with its shape and its place in one flat buffer. Gradients and the AdamW
// moments use the same layout, so zeroing, clipping, AdamW and checkpointing are single loops.
//
// Order in the buffer (q, k, v of a block are adjacent so that they form one [3d, d] matrix and
// one [3d] bias — the fused projection):
//   tok_emb [V,d]   pos_emb [max_len,d] (learned only)
//   per block l: ln1.weight [d] (ln1.bias [d]: layer norm only)
//                attn.q.weight attn.k.weight attn.v.weight [d,d] each
//                attn.q.bias attn.k.bias attn.v.bias [d] each
//                attn.o.weight [d,d] attn.o.bias [d]
//                attn.rel.u [H,d_h] attn.rel.v [H,d_h] attn.rel.proj.weight [d,d] (position: relative;
//                chomsky.md §7.3: u, v no weight decay, W_R decayed, all in the main group)
//                ln2.weight [d] (ln2.bias [d])
//                mlp.fc.weight [m·d,d] mlp.fc.bias [m·d] mlp.proj.weight [d,m·d] mlp.proj.bias [d]
//   ln_f.weight [d] (ln_f.bias [d])   head.weight [V,d]   head.bias [V]
//   LIMe (`lime: static`), group Router, no weight decay: per block l >= 1
//                blocks.{l}.attn.router [H,(l+1)·H]
//   then the splines, contiguous (spline_block()), group Spline, no weight decay:
//     share layer: per block l: attn.kernel.values [K] (spline attention), mlp.act.values [K]
//                  (spline activation), named blocks.{l}.…
//     share model: spline.attn.values [K], spline.mlp.values [K]
// A recurrent arch (recurrent.md) has its own layout (recurrent_init.cpp, add_recurrent), as has
// mamba (linear-rnn.md; mamba.hpp, add_mamba).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.hpp"

namespace srbench::model {

// Optimiser groups: each has its own learning rate and weight decay (optim.hpp). The splines'
// values are "architecture parameters" (model.md); LIMe's routers have their own learning rate.
enum class ParamGroup { Main = 0, Spline = 1, Router = 2 };
inline constexpr int kNumParamGroups = 3;
const char* to_string(ParamGroup g);

// Which spline a tensor holds the values of (None: not a spline).
enum class SplineSite { None, Mlp, Attn };

struct ParamInfo {
  std::string name;             // exact checkpoint name, e.g. "blocks.0.attn.q.weight"
  std::vector<int64_t> shape;   // row-major
  size_t offset = 0;            // into the flat buffer, in elements
  size_t size = 0;              // product of shape
  bool decay = false;           // weight decay applies (matrices and embeddings only)
  ParamGroup group = ParamGroup::Main;
  SplineSite spline = SplineSite::None;
};

class ParamLayout {
 public:
  ParamLayout() = default;
  explicit ParamLayout(const ModelConfig& cfg);  // cfg must be valid

  const std::vector<ParamInfo>& tensors() const { return tensors_; }
  size_t total() const { return total_; }  // elements in the flat buffer
  // Throws ModelError for a name that is not a parameter of this model.
  const ParamInfo& at(std::string_view name) const;
  const ParamInfo* find(std::string_view name) const;  // nullptr when absent

  // The spline tensors, contiguous in layout order: [offset, offset + size) of the flat buffer
  // (size 0 for a model without splines).
  struct Block {
    size_t offset = 0, size = 0;
  };
  Block spline_block() const { return spline_block_; }

 private:
  void add(std::string name, std::vector<int64_t> shape, bool decay, SplineSite spline = SplineSite::None,
           ParamGroup group = ParamGroup::Main);
  void add_recurrent(const ModelConfig& cfg);  // recurrent.md's tensors (recurrent_init.cpp)
  void add_mamba(const ModelConfig& cfg);      // linear-rnn.md's mamba tensors (mamba.cpp)
  void add_deltanet(const ModelConfig& cfg);   // linear-rnn.md's deltanet tensors (deltanet.cpp)
  void add_gla(const ModelConfig& cfg);        // linear-rnn.md's gla tensors (gla.cpp)
  // The tensors of mixer_stack.hpp's LM, each block's mixer tensors added by mixer("blocks.{l}.mixer.")
  void add_mixer_mlp(const ModelConfig& cfg, const std::function<void(const std::string&)>& mixer);
  Block spline_block_;
  std::vector<ParamInfo> tensors_;
  size_t total_ = 0;
};

}  // namespace srbench::model
