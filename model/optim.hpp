// Training arithmetic (model.md, "Training"): learning-rate schedule, global-norm clipping,
// AdamW exactly as torch.optim.AdamW, and one whole training step.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "model/params.hpp"

namespace srbench::model {

enum class Schedule { Cosine, Linear, Constant };
const char* to_string(Schedule s);
Schedule parse_schedule(const std::string& text);  // ModelError naming `schedule` otherwise

// The learning rate at step s = 0..steps-1: base_lr·(s+1)/warmup while s < warmup; then, with
// lr_min = 0.1·base_lr, cosine lr_min + (base_lr − lr_min)·½(1 + cos(π(s−W)/(S−W))), linear
// base_lr − (base_lr − lr_min)(s−W)/(S−W), or constant base_lr.
double scheduled_lr(double base_lr, int64_t step, int64_t warmup, int64_t steps, Schedule kind);

// sqrt of the sum of squares of g[0..n) (accumulated in double, fixed order).
double global_norm(const float* g, size_t n);

// Which optimiser groups a step updates (indexed by ParamGroup).
using GroupMask = std::array<bool, kNumParamGroups>;
// The global norm and clipping over the tensors of the groups in `mask` only (as clip_grad_norm_
// over those parameters). With every tensor included it is global_norm / clip_grad_norm over
// the whole buffer, bit for bit.
double global_norm(const ParamLayout& layout, const float* g, const GroupMask& mask);
double clip_grad_norm(const ParamLayout& layout, float* g, const GroupMask& mask, double max_norm);
// torch.nn.utils.clip_grad_norm_: norm = global_norm(g); if max_norm/(norm + 1e-6) < 1, scales g
// by that coefficient. Returns the norm before clipping. A non-finite norm leaves g unchanged.
double clip_grad_norm(float* g, size_t n, double max_norm);

// Per-group hyperparameters of one step (indexed by ParamGroup).
struct GroupHyper {
  double lr = 1e-3;
  double weight_decay = 0.01;  // applied only to tensors whose ParamInfo::decay is set
  bool update = true;          // false: the group is left exactly as it is (values, moments, step count)
};
using GroupHypers = std::array<GroupHyper, kNumParamGroups>;

// torch.optim.AdamW (β1 0.9, β2 0.98, ε 1e-9): at step t (from 1), per element
// θ ← θ·(1 − lr·wd); m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²;
// θ ← θ − lr/(1−β1^t) · m / (√v/√(1−β2^t) + ε).  m and v share the parameter layout. Each
// group counts its own steps t (as torch counts per parameter): a group skipped by
// GroupHyper::update = false does not advance.
class AdamW {
 public:
  explicit AdamW(const ParamLayout& layout, double beta1 = 0.9, double beta2 = 0.98, double eps = 1e-9);
  void step(float* params, const float* grads, const GroupHypers& hypers);
  int64_t steps_taken() const { return t_[static_cast<size_t>(ParamGroup::Main)]; }
  int64_t steps_taken(ParamGroup g) const { return t_[static_cast<size_t>(g)]; }
  const std::vector<float>& m() const { return m_; }
  const std::vector<float>& v() const { return v_; }
  void reset();

 private:
  ParamLayout layout_;  // a copy: the optimiser stays valid if the model it serves is moved
  double beta1_, beta2_, eps_;
  std::array<int64_t, kNumParamGroups> t_{};
  std::vector<float> m_, v_;
};

// Which parameters a step updates: all, the weights only (every group but the splines: LIMe's
// routers count as weights), or the splines only — the two halves of the spline search (weights from one batch, splines from
// another).
enum class Update { All, WeightsOnly, SplinesOnly };

// The settings of a training run that a step needs.
struct TrainSettings {
  int64_t steps = 2000;
  int64_t warmup = 100;
  Schedule schedule = Schedule::Cosine;
  double lr = 1e-3;
  double weight_decay = 0.01;
  double clip = 1.0;  // <= 0: no clipping
  double spline_lr = 1e-2;      // the splines' learning rate, on the same schedule; no weight decay
  double router_lr = 1e-2;      // LIMe's routers' learning rate, on the same schedule; no weight decay
  bool freeze_splines = false;  // splines never updated (bit-identical), not in the clipping norm
  Update update = Update::All;
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;  // AdamW's (the optimiser is built with them)
};

struct StepResult {
  double loss = 0;       // mean cross-entropy of the batch (before the update)
  double grad_norm = 0;  // gradient norm before clipping, over the parameters the step updates
  double lr = 0;         // learning rate used for the main group
  double spline_lr = 0;  // learning rate used for the splines
  double router_lr = 0;  // learning rate used for LIMe's routers
  bool finite = true;    // false: loss or gradient not finite; the parameters were NOT updated
};

// The groups a step with these settings updates.
GroupMask updated_groups(const TrainSettings& settings);

// One step at step index s (0-based): zero grads, forward+backward, then apply_gradients.
// Never throws for a diverged step: it returns finite = false instead.
StepResult train_step(Model& model, AdamW& opt, const int32_t* tokens, const int32_t* targets, int B,
                      int T, int64_t s, const TrainSettings& settings, const RowLengths& rows = {});
// The update half of train_step on gradients already in model.grads() (e.g. summed over several
// models' batches): norm and clipping over the updated groups, then AdamW with the scheduled
// learning rates (main: lr, splines: spline_lr, routers: router_lr) on those groups only. `loss` is reported back
// and checked for finiteness.
StepResult apply_gradients(Model& model, AdamW& opt, double loss, int64_t s, const TrainSettings& settings);

}  // namespace srbench::model
