#include "harness/run/trainer.hpp"

#include <chrono>
#include <set>
#include <stdexcept>

#include "harness/core/splines.hpp"
#include "harness/run/data.hpp"
#include "harness/run/diagnostics.hpp"
#include "harness/run/evaluate.hpp"
#include "harness/run/metrics.hpp"
#include "model/optim.hpp"
#include "tasks/tape.hpp"

namespace srbench::harness {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kDiagExamples = 64;  // the diagnostics batch (harness.md, Diagnostics)

// A LIMe model's routers blocks.{l}.attn.router, l = 1 … layers−1 (none for other models).
std::vector<RouterWeights> learned_routers(const model::Model& m) {
  std::vector<RouterWeights> out;
  for (int l = 1; l < m.config().layers; ++l) {
    const model::ParamInfo* p = m.layout().find("blocks." + std::to_string(l) + ".attn.router");
    if (!p) continue;
    const float* x = m.params() + p->offset;
    out.push_back({l, p->shape[0], p->shape[1], std::vector<float>(x, x + p->size)});
  }
  return out;
}

}  // namespace

double uniform_guess_accuracy(const std::vector<tasks::Example>& val) {
  std::set<int32_t> classes;
  for (const auto& ex : val)
    for (const int32_t t : ex.targets)
      if (t != tasks::kNotScored) classes.insert(t);
  return classes.empty() ? kNaN : 1.0 / static_cast<double>(classes.size());
}

RunResult run_training(const RunSpec& spec, std::unique_ptr<model::Model>* trained, const BatchObserver& observe) {
  const auto wall_start = Clock::now();
  RunResult r = result_of(spec);
  try {
    const TrainConfig& tc = spec.train;
    const auto task = tasks::make_task(spec.task, spec.params, {tc.data_seed});
    r.bits_per_byte = task->reports_bits_per_byte();
    if (const auto* tape = dynamic_cast<const tasks::TapeTask*>(task.get()))
      r.chance = 1.0 / static_cast<double>(tape->output_classes().size());
    auto model = std::make_unique<model::Model>(spec.model);
    model->init(spec.seed);
    model::AdamW opt(model->layout(), tc.beta1, tc.beta2, tc.eps);
    model::TrainSettings settings = tc;  // the optimiser's part of the train config
    settings.freeze_splines = spec.freeze_splines;
    r.splines_from = spec.splines_from;
    if (!spec.splines_from.empty()) {  // stage 2: the splines of a search (or a splines file)
      if (spec.splines.empty()) throw std::runtime_error("splines_from '" + spec.splines_from + "': no splines given");
      const std::string why = splines_mismatch(spec.splines, spec.model);
      if (!why.empty()) throw std::runtime_error("splines of '" + spec.splines_from + "': " + why);
      if (spec.splines_randomise >= 0) {
        // the control: the source's deviation from this model's initial splines, randomised at
        // the same roughness; it is no task's spline, so it names none (and stays out of the
        // transfer matrix)
        set_model_splines(*model, randomise_splines(spec.splines, model_splines(*model),
                                                    static_cast<uint64_t>(spec.splines_randomise), spec.seed));
      } else {
        set_model_splines(*model, spec.splines);
        r.splines_task = spec.splines_task;
      }
    }

    const std::vector<tasks::Example> val = validation_set(*task, tc, static_cast<size_t>(spec.eval.val_examples));
    if (std::isnan(r.chance)) r.chance = uniform_guess_accuracy(val);
    // Diagnostics on a fixed ID batch: the first 64 examples of the validation stream (the
    // validation set, extended or cut to 64), the same for every seed; once at initialisation
    // (forward passes only: the weights and every later number are those of a run without it)
    // and once after training.
    const std::vector<tasks::Example> diag_examples = validation_set(*task, tc, kDiagExamples);
    r.diag_init = compute_diagnostics(*model, diag_examples);
    TrainingData data(*task, spec);
    std::vector<tasks::Example> examples(static_cast<size_t>(tc.batch));
    Batch batch;
    SeenSet seen;  // every training example drawn (8 bytes each), for eval/seen_frac
    double train_seconds = 0, eval_seconds = 0, loss_sum = 0;
    int64_t real_tokens = 0, loss_n = 0;
    for (int64_t s = 0; s < tc.steps; ++s) {
      for (int64_t b = 0; b < tc.batch; ++b) {
        data.example(static_cast<uint64_t>(s * tc.batch + b), examples[b]);
        seen.add(examples[b].tokens);
      }
      batch.assemble(examples);
      if (observe) observe(s, batch);
      const auto t0 = Clock::now();
      const model::StepResult step =
          model::train_step(*model, opt, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, s, settings,
                            batch.rows());
      train_seconds += seconds_since(t0);
      if (!step.finite) {
        r.status = "diverged";
        r.message = "non-finite loss or gradient at step " + std::to_string(s);
        break;
      }
      real_tokens += batch.real_tokens;
      loss_sum += step.loss, ++loss_n;
      if ((s + 1) % tc.eval_every == 0 || s + 1 == tc.steps) {
        CurvePoint p;
        p.step = s + 1;
        p.train_loss = loss_sum / static_cast<double>(loss_n);
        p.lr = step.lr;
        p.grad_norm = step.grad_norm;
        const auto e0 = Clock::now();
        const EvalScore score = evaluate_examples(*model, val);
        p.val_acc = score.seq_acc;
        if (tc.fit_metric == FitMetric::token_acc) p.val_token_acc = score.token_acc;  // else not written
        eval_seconds += seconds_since(e0);
        r.curve.push_back(p);
        loss_sum = 0, loss_n = 0;
      }
    }
    if (train_seconds > 0) r.tokens_per_s = static_cast<double>(real_tokens) / train_seconds;
    if (r.status == "ok") {
      seen.seal();
      const auto e0 = Clock::now();
      evaluate_run(*model, *task, spec, r, &seen);
      eval_seconds += seconds_since(e0);
      r.diag = compute_diagnostics(*model, diag_examples);
      r.routers = learned_routers(*model);
    }
    r.eval_s = eval_seconds;
    r.splines = model_splines(*model);
    r.metrics = derive_metrics(r.eval, r.conditions, tc.length_min, tc.length_max, r.curve, tc.target_accuracy,
                               tc.fit_metric);
    if (trained) *trained = std::move(model);
  } catch (const std::exception& e) {
    r.status = "failed";
    r.message = e.what();
  }
  r.wall_s = seconds_since(wall_start);
  return r;
}

}  // namespace srbench::harness
