// The model (model.hpp): the flat parameter and gradient buffers, a batch's input checks and
// the loss, around the architecture that does the rest (architecture.hpp).
#include "model/model.hpp"

#include <algorithm>
#include <string>

#include "model/architecture.hpp"
#include "model/buffers.hpp"
#include "model/layers.hpp"

namespace srbench::model {

template <typename S>
BasicModel<S>::BasicModel(const ModelConfig& cfg) : cfg_(cfg) {
  cfg_.validate();
  arch_ = make_architecture<S>(cfg_);
  params_.assign(layout().total(), S(0));
  grads_.assign(layout().total(), S(0));
}

template <typename S>
BasicModel<S>::~BasicModel() = default;
template <typename S>
BasicModel<S>::BasicModel(BasicModel&&) noexcept = default;
template <typename S>
BasicModel<S>& BasicModel<S>::operator=(BasicModel&&) noexcept = default;

template <typename S>
std::span<S> BasicModel<S>::param(std::string_view name) {
  const auto& p = layout().at(name);
  return {params_.data() + p.offset, p.size};
}
template <typename S>
std::span<const S> BasicModel<S>::param(std::string_view name) const {
  const auto& p = layout().at(name);
  return {params_.data() + p.offset, p.size};
}
template <typename S>
std::span<S> BasicModel<S>::grad(std::string_view name) {
  const auto& p = layout().at(name);
  return {grads_.data() + p.offset, p.size};
}
template <typename S>
std::span<const S> BasicModel<S>::grad(std::string_view name) const {
  const auto& p = layout().at(name);
  return {grads_.data() + p.offset, p.size};
}

template <typename S>
std::span<S> BasicModel<S>::spline_values() {
  const auto blk = layout().spline_block();
  return {params_.data() + blk.offset, blk.size};
}
template <typename S>
std::span<const S> BasicModel<S>::spline_values() const {
  const auto blk = layout().spline_block();
  return {params_.data() + blk.offset, blk.size};
}
template <typename S>
std::span<S> BasicModel<S>::spline_grads() {
  const auto blk = layout().spline_block();
  return {grads_.data() + blk.offset, blk.size};
}
template <typename S>
std::span<const S> BasicModel<S>::spline_grads() const {
  const auto blk = layout().spline_block();
  return {grads_.data() + blk.offset, blk.size};
}
template <typename S>
void BasicModel<S>::set_spline_values(std::span<const S> values) {
  const auto blk = layout().spline_block();
  if (values.size() != blk.size)
    throw ModelError("set_spline_values: got " + std::to_string(values.size()) + " values, this model's splines hold " +
                     std::to_string(blk.size) + " (same spline settings and layers needed)");
  std::copy(values.begin(), values.end(), params_.begin() + static_cast<std::ptrdiff_t>(blk.offset));
}

template <typename S>
const ParamLayout& BasicModel<S>::layout() const {
  return arch_->layout();
}

template <typename S>
void BasicModel<S>::init(uint64_t seed) {
  arch_->init(params_.data(), seed);
}

template <typename S>
void BasicModel<S>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), S(0));
}

namespace {

// The number of scored positions of tokens, targets (N = B·T; targets may be nullptr): ModelError
// for a batch the model cannot take.
int64_t check_batch(const ModelConfig& cfg, const int32_t* tokens, const int32_t* targets, int B, int T,
                    bool need_grads, const RowLengths& rows) {
  if (B < 1 || T < 1)
    throw ModelError("forward: batch size and length must be >= 1, got B=" + std::to_string(B) +
                     ", T=" + std::to_string(T));
  if (T > cfg.max_len)
    throw ModelError("forward: sequence length " + std::to_string(T) + " exceeds model.max_len " +
                     std::to_string(cfg.max_len) + " (raise max_len to evaluate longer sequences)");
  if (need_grads && !targets) throw ModelError("forward_backward: gradients need targets");
  for (const auto& [values, name] : {std::pair{rows.lengths, "length"}, std::pair{rows.input_lengths, "input length"}})
    for (int b = 0; values && b < B; ++b)
      if (values[b] < 1 || values[b] > T)
        throw ModelError("forward: the " + std::string(name) + " " + std::to_string(values[b]) + " of example " +
                         std::to_string(b) + " is outside [1, " + std::to_string(T) + "]");
  const int V = cfg.vocab;
  const int64_t N = static_cast<int64_t>(B) * T;
  auto where = [&](int64_t n) {
    return "[example " + std::to_string(n / T) + ", position " + std::to_string(n % T) + "]";
  };
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (tokens[n] < 0 || tokens[n] >= V)
      throw ModelError("forward: token id " + std::to_string(tokens[n]) + " at " + where(n) +
                       " is outside the vocabulary [0, " + std::to_string(V) + ")");
    if (targets) {
      if (targets[n] >= V || targets[n] < kNotScored)
        throw ModelError("forward: target " + std::to_string(targets[n]) + " at " + where(n) +
                         " is outside the vocabulary [0, " + std::to_string(V) + ") and not -1 (unscored)");
      if (targets[n] >= 0) ++count;
    }
  }
  return count;
}

// loss = the mean over the `count` (> 0) scored rows of the cross-entropy of logits (N,V)
// against targets (N); losses (N) gets each row's loss, dlogits (N,V) (unless nullptr) ∂loss/∂logits.
template <typename S>
S loss_forward(S* losses, S* dlogits, const S* logits, const int32_t* targets, int64_t count, int N, int V) {
  crossentropy_forward_backward(losses, dlogits, logits, targets, S(1) / static_cast<S>(count), N, V);
  double total = 0;
  for (int64_t i = 0; i < N; ++i) total += losses[i];
  return static_cast<S>(total / static_cast<double>(count));
}

}  // namespace

// logits_, dlogits_ (N,V), losses_ (N), and the architecture's workspace.
template <typename S>
void BasicModel<S>::reserve(int B, int T, bool need_grads) {
  const int64_t N = static_cast<int64_t>(B) * T;
  grow(logits_, N * cfg_.vocab);
  grow(dlogits_, N * cfg_.vocab);
  grow(losses_, N);
  arch_->reserve(B, T, need_grads);
}

// What the first forward_backward and infer allocate: the architecture's workspace (its buffer
// lists) and the model's own buffers, those reserve above and infer below grow.
CallMemory forward_backward_memory(const ModelConfig& cfg, int B, int T, bool need_grads, int threads) {
  cfg.validate();
  CallMemory m = make_architecture<float>(cfg)->workspace(B, T, need_grads, threads);
  const int64_t N = static_cast<int64_t>(B) * T;
  m.outputs = static_cast<int64_t>(sizeof(float)) * (2 * N * cfg.vocab + N);  // logits_, dlogits_, losses_
  return m;
}

int64_t packing_bytes(const ModelConfig& cfg, int threads) {
  int64_t wide = 0;
  const ParamLayout layout(cfg);
  for (const ParamInfo& t : layout.tensors())
    if (t.shape.size() == 2) wide = std::max({wide, t.shape[0], t.shape[1]});
  return static_cast<int64_t>(sizeof(float)) * std::max(threads, 1) * (wide + cfg.vocab + 32) * 512;
}

CallMemory infer_memory(const ModelConfig& cfg, int B, int T, int threads) {
  cfg.validate();
  CallMemory m = make_architecture<float>(cfg)->infer_workspace(B, T, threads);
  const int64_t N = static_cast<int64_t>(B) * T;
  m.outputs = static_cast<int64_t>(sizeof(float)) * (N * cfg.vocab + N);  // logits_, losses_
  return m;
}

template <typename S>
void BasicModel<S>::note_call(int B, int T, int64_t scored, bool views) {
  last_B_ = B;
  last_T_ = T;
  scored_ = scored;
  views_ = views;
}

template <typename S>
S BasicModel<S>::forward_backward(const int32_t* tokens, const int32_t* targets, int B, int T, bool need_grads,
                                  const RowLengths& rows) {
  const int64_t count = check_batch(cfg_, tokens, targets, B, T, need_grads, rows);
  reserve(B, T, need_grads);
  note_call(B, T, count, true);
  arch_->forward(logits_.data(), tokens, params_.data(), B, T, rows);
  if (!targets || count == 0) return S(0);
  const S loss = loss_forward(losses_.data(), need_grads ? dlogits_.data() : nullptr, logits_.data(), targets, count,
                              B * T, cfg_.vocab);
  if (need_grads) arch_->backward(grads_.data(), dlogits_.data(), tokens, params_.data());
  return loss;
}

template <typename S>
S BasicModel<S>::infer(const int32_t* tokens, const int32_t* targets, int B, int T, const RowLengths& rows) {
  const int64_t count = check_batch(cfg_, tokens, targets, B, T, false, rows);
  const int64_t N = static_cast<int64_t>(B) * T;
  grow(logits_, N * cfg_.vocab);
  grow(losses_, N);
  note_call(B, T, count, false);
  arch_->infer(logits_.data(), tokens, params_.data(), B, T, rows);
  if (!targets || count == 0) return S(0);
  return loss_forward(losses_.data(), static_cast<S*>(nullptr), logits_.data(), targets, count, B * T, cfg_.vocab);
}

template <typename S>
const S* BasicModel<S>::logits() const {
  return logits_.data();
}

template <typename S>
void BasicModel<S>::check_view(int l, bool needs_attention, const char* what) const {
  if (needs_attention && !arch_->has_attention())
    throw ModelError(std::string(what) + ": this model has no attention (its architecture has no attention weights "
                     "or value vectors; check has_attention())");
  if (last_B_ == 0)
    throw ModelError(std::string(what) + ": no forward call yet (call forward before reading activations)");
  if (!views_)
    throw ModelError(std::string(what) + ": the last call was infer, which keeps no activations (call forward "
                     "before reading them)");
  if (l < 0 || l >= cfg_.layers)
    throw ModelError(std::string(what) + ": layer " + std::to_string(l) + " is outside [0, " +
                     std::to_string(cfg_.layers) + ")");
}

template <typename S>
bool BasicModel<S>::has_attention() const {
  return arch_->has_attention();
}

template <typename S>
const S* BasicModel<S>::attention(int l) const {
  check_view(l, true, "attention");
  return arch_->attention(l);
}

template <typename S>
const S* BasicModel<S>::values(int l) const {
  check_view(l, true, "values");
  return arch_->values(l);
}

template <typename S>
int64_t BasicModel<S>::values_stride() const {
  return arch_->values_stride();
}

template <typename S>
const S* BasicModel<S>::block_output(int l) const {
  check_view(l, false, "block_output");
  return arch_->block_output(l);
}

template class BasicModel<float>;
template class BasicModel<double>;

}  // namespace srbench::model
