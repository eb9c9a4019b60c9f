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
//                ln2.weight [d] (ln2.bias [d])
//                mlp.fc.weight [m·d,d] mlp.fc.bias [m·d] mlp.proj.weight [d,m·d] mlp.proj.bias [d]
//   ln_f.weight [d] (ln_f.bias [d])   head.weight [V,d]   head.bias [V]
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.hpp"

namespace srbench::model {

// Optimiser groups: each has its own learning rate and weight decay (optim.hpp). Splines and
// LIMe routers will be their own groups.
enum class ParamGroup { Main = 0 };  // later: Spline, Router
inline constexpr int kNumParamGroups = 1;
const char* to_string(ParamGroup g);

struct ParamInfo {
  std::string name;             // exact checkpoint name, e.g. "blocks.0.attn.q.weight"
  std::vector<int64_t> shape;   // row-major
  size_t offset = 0;            // into the flat buffer, in elements
  size_t size = 0;              // product of shape
  bool decay = false;           // weight decay applies (matrices and embeddings only)
  ParamGroup group = ParamGroup::Main;
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

 private:
  void add(std::string name, std::vector<int64_t> shape, bool decay);
  std::vector<ParamInfo> tensors_;
  size_t total_ = 0;
};

}  // namespace srbench::model
