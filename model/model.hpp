// The model (model.md): its parameters and gradients in flat buffers, forward and hand-written
// backward. The network itself is an architecture chosen when the model is built
// (architecture.hpp): the transformer of model.md — decoder-only, pre-norm.
//
//   Model m(cfg);              // cfg.validate() is called; throws ModelError
//   m.init(seed);              // model.md init
//   m.zero_grads();
//   float loss = m.forward_backward(tokens, targets, B, T, /*need_grads=*/true);
//   m.logits();                // [B,T,V] of that call
//
// What a call allocates, for a memory estimate: forward_backward_memory, infer_memory (memory.hpp).
//
// BasicModel<double> exists for finite-difference tests; the program uses Model (float).
// Threads: OpenMP over fixed chunks (examples, heads, row blocks) whose boundaries do not depend
// on the thread count, reductions in a fixed order: results are bit-identical for any thread
// count (set it with omp_set_num_threads before calling).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "model/config.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/params.hpp"
#include "common/rows.hpp"

namespace srbench::model {

using srbench::kNotScored;  // a target that is not scored (padding; common/rows.hpp)
using srbench::RowLengths;  // each row's length and input-tape length (common/rows.hpp)

template <typename S>
class Architecture;  // the network: layout, init, forward, backward, saved activations (architecture.hpp)

template <typename S>
class BasicModel {
 public:
  explicit BasicModel(const ModelConfig& cfg);
  ~BasicModel();
  BasicModel(BasicModel&&) noexcept;
  BasicModel& operator=(BasicModel&&) noexcept;
  BasicModel(const BasicModel&) = delete;
  BasicModel& operator=(const BasicModel&) = delete;

  const ModelConfig& config() const { return cfg_; }
  const ParamLayout& layout() const;
  size_t num_params() const { return params_.size(); }

  // The flat buffers (layout order), and named views into them (ModelError for an unknown name).
  S* params() { return params_.data(); }
  const S* params() const { return params_.data(); }
  S* grads() { return grads_.data(); }
  const S* grads() const { return grads_.data(); }
  std::span<S> param(std::string_view name);
  std::span<const S> param(std::string_view name) const;
  std::span<S> grad(std::string_view name);
  std::span<const S> grad(std::string_view name) const;

  // The values of all splines as one block (ParamLayout::spline_block(): contiguous, layout
  // order; empty without splines), and their gradients: for copying splines between models,
  // summing their gradients, exporting them. set_spline_values copies a block in (ModelError
  // when its size differs).
  std::span<S> spline_values();
  std::span<const S> spline_values() const;
  std::span<S> spline_grads();
  std::span<const S> spline_grads() const;
  void set_spline_values(std::span<const S> values);

  // model.md init: matrices and embeddings N(0, 0.02), attn.o and mlp.proj weights
  // N(0, 0.02/sqrt(2·layers)), biases 0, norm weights 1, spline values their `init` function at
  // the keypoints (spline_init_values). Depends on the seed only.
  void init(uint64_t seed);
  void zero_grads();

  // tokens, targets: row-major [B,T]; targets[i] = kNotScored (-1) where not scored; `rows`
  // (common/rows.hpp): each row's length and input-tape length, optional.
  // Returns the mean cross-entropy over the scored positions (0 if there are none).
  // With need_grads, ADDS the gradient of that loss into grads() (call zero_grads() first).
  // Throws ModelError for B < 1, T < 1, T > max_len, a token outside [0, vocab), a target
  // outside [0, vocab) other than -1, or a row length outside [1, T]. Allocates only when B·T or
  // T grows past earlier calls.
  S forward_backward(const int32_t* tokens, const int32_t* targets, int B, int T, bool need_grads,
                     const RowLengths& rows = {});
  // Forward only (no gradients); targets may be nullptr (then the loss is 0).
  S forward(const int32_t* tokens, const int32_t* targets, int B, int T, const RowLengths& rows = {}) {
    return forward_backward(tokens, targets, B, T, false, rows);
  }

  // Forward only, for evaluation: the loss and logits forward() returns (the transformer: bit for
  // bit in float), in memory linear in T: no attention matrices or per-layer activations are
  // kept (the transformer runs groups of examples with attention in query strips), so the
  // activation views below are not available after it (ModelError until the next forward).
  S infer(const int32_t* tokens, const int32_t* targets, int B, int T, const RowLengths& rows = {});

  // Results of the last call: logits [B,T,V] row-major, and how many positions were scored.
  const S* logits() const;
  int last_batch() const { return last_B_; }
  int last_length() const { return last_T_; }
  int64_t scored() const { return scored_; }

  // Activations of the last call, for diagnostics (read-only views into the workspace, valid
  // until the next call; no copies). Layer l in [0, layers); B, T = last_batch(), last_length();
  // row n = b·T + t. ModelError for a bad l or before any call.
  // has_attention(): whether attention(l) and values(l) exist (the transformer: yes; an
  //   architecture without attention, e.g. a recurrent stack, has only block_output(l)).
  bool has_attention() const;
  // attention(l): [B,H,T,T] row-major, the attention weights α of head h, query i, key j (the
  //   probabilities under softmax; 0 for j > i).
  const S* attention(int l) const;
  // values(l): [B,T,C] the value vectors as attention uses them (under LIMe the mixed values),
  //   heads concatenated (head h:
  //   columns h·hs … h·hs+hs−1); row n starts at values(l) + n·values_stride() (not contiguous).
  const S* values(int l) const;
  int64_t values_stride() const;
  // block_output(l): [B,T,C] contiguous, the residual stream after block l (before ln_f); for an
  //   architecture without blocks, layer l's outputs.
  const S* block_output(int l) const;

 private:
  void reserve(int B, int T, bool need_grads);  // the loss's buffers and the architecture's workspace
  void note_call(int B, int T, int64_t scored, bool views);  // the last call's sizes, scored rows, views
  // ModelError (naming `what`) for a bad layer, no call yet, or attention asked of a model without.
  void check_view(int l, bool needs_attention, const char* what) const;

  ModelConfig cfg_;
  std::unique_ptr<Architecture<S>> arch_;
  std::vector<S> params_, grads_;
  std::vector<S> logits_, dlogits_, losses_;  // (N,V), (N,V), (N) of the last call
  int last_B_ = 0, last_T_ = 0;
  int64_t scored_ = 0;
  bool views_ = false;  // the last call kept the activations the views read (forward, not infer)
};

using Model = BasicModel<float>;

// θ_k = f(x_k) at the keypoints x_k = −R + k·2R/(K−1) of a spline (computed in double):
// gelu (erf form), relu, identity, exp, elu1 (elu(x)+1), zero.
std::vector<double> spline_init_values(const SplineConfig& sc, SplineInit init);

extern template class BasicModel<float>;
extern template class BasicModel<double>;

}  // namespace srbench::model
