#include "model/optim.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/fastmath.hpp"
#include "model/parallel.hpp"

namespace srbench::model {

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::Cosine: return "cosine";
    case Schedule::Linear: return "linear";
    case Schedule::Constant: return "constant";
  }
  return "?";
}

Schedule parse_schedule(const std::string& text) {
  for (Schedule s : {Schedule::Cosine, Schedule::Linear, Schedule::Constant})
    if (text == to_string(s)) return s;
  throw ModelError("train.schedule: unknown value '" + text + "' (expected one of: cosine, linear, constant)");
}

double scheduled_lr(double base_lr, int64_t step, int64_t warmup, int64_t steps, Schedule kind) {
  if (step < warmup) return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double lr_min = 0.1 * base_lr;
  const double span = static_cast<double>(steps - warmup);
  const double frac = span > 0 ? std::min(1.0, static_cast<double>(step - warmup) / span) : 1.0;
  switch (kind) {
    case Schedule::Cosine: return lr_min + (base_lr - lr_min) * 0.5 * (1.0 + std::cos(M_PI * frac));
    case Schedule::Linear: return base_lr - (base_lr - lr_min) * frac;
    case Schedule::Constant: return base_lr;
  }
  return base_lr;
}

namespace {
constexpr int64_t kChunk = 4096;  // elements per partial sum: fixed, so the sum's order is too
}

double global_norm(const float* g, size_t n) {
  const int64_t nc = (static_cast<int64_t>(n) + kChunk - 1) / kChunk;
  thread_local std::vector<double> partial_sums;  // grows once: no allocation in later steps
  partial_sums.assign(static_cast<size_t>(nc), 0.0);
  double* partial = partial_sums.data();  // the calling thread's buffer, shared with the workers
  parallel_for(nc, nc > 16, [&](int64_t c) {
    const int64_t e = std::min<int64_t>(static_cast<int64_t>(n), (c + 1) * kChunk);
    const float* gc = g + c * kChunk;
    partial[c] = fastmath::lane_sum<double>(e - c * kChunk, [&](int64_t i) { return static_cast<double>(gc[i]) * gc[i]; });
  });
  double total = 0;
  for (int64_t c = 0; c < nc; ++c) total += partial[c];
  return std::sqrt(total);
}

namespace {
// Calls f(offset, end) for each maximal run [offset, end) of included tensors of the flat
// buffer, in layout order (no allocation: this runs every step).
template <typename F>
void for_each_included_run(const ParamLayout& layout, const GroupMask& mask, F&& f) {
  size_t b = 0, e = 0;
  bool open = false;
  for (const ParamInfo& p : layout.tensors()) {
    if (!mask[static_cast<size_t>(p.group)] || p.size == 0) continue;
    if (open && e == p.offset) {
      e += p.size;
      continue;
    }
    if (open) f(b, e);
    b = p.offset;
    e = p.offset + p.size;
    open = true;
  }
  if (open) f(b, e);
}
}  // namespace

double global_norm(const ParamLayout& layout, const float* g, const GroupMask& mask) {
  int runs = 0;
  size_t b0 = 0, e0 = 0;
  for_each_included_run(layout, mask, [&](size_t b, size_t e) {
    if (runs++ == 0) b0 = b, e0 = e;
  });
  if (runs == 1) return global_norm(g + b0, e0 - b0);
  double total = 0;  // several runs: squares of the runs' norms, in order
  for_each_included_run(layout, mask, [&](size_t b, size_t e) {
    const double n = global_norm(g + b, e - b);
    total += n * n;
  });
  return std::sqrt(total);
}

double clip_grad_norm(const ParamLayout& layout, float* g, const GroupMask& mask, double max_norm) {
  const double norm = global_norm(layout, g, mask);
  if (!std::isfinite(norm)) return norm;
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0) {
    const float c = static_cast<float>(coef);
    for_each_included_run(layout, mask, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) g[i] *= c;
    });
  }
  return norm;
}

double clip_grad_norm(float* g, size_t n, double max_norm) {
  const double norm = global_norm(g, n);
  if (!std::isfinite(norm)) return norm;
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0) {
    const float c = static_cast<float>(coef);
    for (size_t i = 0; i < n; ++i) g[i] *= c;
  }
  return norm;
}

AdamW::AdamW(const ParamLayout& layout, double beta1, double beta2, double eps)
    : layout_(layout), beta1_(beta1), beta2_(beta2), eps_(eps), m_(layout.total(), 0.0f), v_(layout.total(), 0.0f) {}

void AdamW::reset() {
  t_.fill(0);
  std::fill(m_.begin(), m_.end(), 0.0f);
  std::fill(v_.begin(), v_.end(), 0.0f);
}

namespace {
struct AdamWScalars {
  float decay, b1, one_b1, b2, one_b2, bc2_sqrt, eps, step_size;
};
// The update of n elements. The pointers do not alias and the scalars are copies, so the
// compiler vectorises the loop (with -fno-math-errno for std::sqrt, model/CMakeLists.txt): the
// same arithmetic per element as a scalar loop.
void adamw_update(float* __restrict x, float* __restrict m, float* __restrict v, const float* __restrict g, int64_t n,
                  const AdamWScalars k) {
  for (int64_t i = 0; i < n; ++i) {
    x[i] *= k.decay;
    m[i] = m[i] * k.b1 + g[i] * k.one_b1;
    v[i] = v[i] * k.b2 + g[i] * g[i] * k.one_b2;
    const float denom = std::sqrt(v[i]) / k.bc2_sqrt + k.eps;
    x[i] -= k.step_size * (m[i] / denom);
  }
}
}  // namespace

void AdamW::step(float* params, const float* grads, const GroupHypers& hypers) {
  for (size_t g = 0; g < t_.size(); ++g)
    if (hypers[g].update) ++t_[g];
  // As torch.optim.AdamW (single-tensor path): scalars in double, then float arithmetic.
  const float b1 = static_cast<float>(beta1_), b2 = static_cast<float>(beta2_);
  const float one_b1 = static_cast<float>(1.0 - beta1_), one_b2 = static_cast<float>(1.0 - beta2_);
  const float eps = static_cast<float>(eps_);
  for (const ParamInfo& p : layout_.tensors()) {
    const GroupHyper& hp = hypers[static_cast<size_t>(p.group)];
    if (!hp.update) continue;
    const double t = static_cast<double>(t_[static_cast<size_t>(p.group)]);
    const double bc1 = 1.0 - std::pow(beta1_, t);
    const double bc2 = 1.0 - std::pow(beta2_, t);
    const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
    const float decay = p.decay ? static_cast<float>(1.0 - hp.lr * hp.weight_decay) : 1.0f;
    const float step_size = static_cast<float>(hp.lr / bc1);
    float* x = params + p.offset;
    const float* g = grads + p.offset;
    float* m = m_.data() + p.offset;
    float* v = v_.data() + p.offset;
    const int64_t n = static_cast<int64_t>(p.size);
    const AdamWScalars k{decay, b1, one_b1, b2, one_b2, bc2_sqrt, eps, step_size};
    const int64_t nc = (n + kChunk - 1) / kChunk;
    parallel_for(nc, n >= 65536, [&](int64_t c) {
      const int64_t b = c * kChunk;
      adamw_update(x + b, m + b, v + b, g + b, std::min(kChunk, n - b), k);
    });
  }
}

GroupMask updated_groups(const TrainSettings& st) {
  GroupMask mask;
  mask[static_cast<size_t>(ParamGroup::Main)] = st.update != Update::SplinesOnly;
  mask[static_cast<size_t>(ParamGroup::Spline)] = st.update != Update::WeightsOnly && !st.freeze_splines;
  mask[static_cast<size_t>(ParamGroup::Router)] = st.update != Update::SplinesOnly;
  return mask;
}

StepResult apply_gradients(Model& model, AdamW& opt, double loss, int64_t s, const TrainSettings& st) {
  StepResult r;
  r.loss = loss;
  const GroupMask mask = updated_groups(st);
  r.grad_norm = st.clip > 0 ? clip_grad_norm(model.layout(), model.grads(), mask, st.clip)
                            : global_norm(model.layout(), model.grads(), mask);
  r.lr = scheduled_lr(st.lr, s, st.warmup, st.steps, st.schedule);
  r.spline_lr = scheduled_lr(st.spline_lr, s, st.warmup, st.steps, st.schedule);
  r.router_lr = scheduled_lr(st.router_lr, s, st.warmup, st.steps, st.schedule);
  r.finite = std::isfinite(r.loss) && std::isfinite(r.grad_norm);
  if (!r.finite) return r;
  GroupHypers hypers;
  hypers[static_cast<size_t>(ParamGroup::Main)] = {r.lr, st.weight_decay, mask[static_cast<size_t>(ParamGroup::Main)]};
  hypers[static_cast<size_t>(ParamGroup::Spline)] = {r.spline_lr, 0.0, mask[static_cast<size_t>(ParamGroup::Spline)]};
  hypers[static_cast<size_t>(ParamGroup::Router)] = {r.router_lr, 0.0, mask[static_cast<size_t>(ParamGroup::Router)]};
  opt.step(model.params(), model.grads(), hypers);
  return r;
}

StepResult train_step(Model& model, AdamW& opt, const int32_t* tokens, const int32_t* targets, int B, int T,
                      int64_t s, const TrainSettings& st, const RowLengths& rows) {
  model.zero_grads();
  const double loss = model.forward_backward(tokens, targets, B, T, true, rows);
  return apply_gradients(model, opt, loss, s, st);
}

}  // namespace srbench::model
