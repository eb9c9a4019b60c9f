#include "harness/run/search.hpp"

#include <chrono>
#include <stdexcept>

#include "harness/core/splines.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "model/optim.hpp"
#include "model/params.hpp"

namespace srbench::harness {

SearchResult run_search(const SearchSpec& spec, const SearchObserver& observe, std::vector<model::Model>* trained) {
  const auto wall_start = std::chrono::steady_clock::now();
  SearchResult res;
  res.name = spec.name, res.task = spec.task, res.config_yaml = spec.resolved_yaml, res.population = spec.population;
  try {
    const TrainConfig& tc = spec.train;
    const auto task = tasks::make_task(spec.task, spec.params, {tc.data_seed});
    const int M = static_cast<int>(spec.population);
    const std::vector<tasks::Example> val = validation_set(*task, tc, static_cast<size_t>(spec.eval.val_examples));

    // Per model: a RunSpec (seed, data), its two data parts, model, optimiser, settings.
    std::vector<RunSpec> specs(static_cast<size_t>(M));
    std::vector<TrainingData> wts, arch;
    std::vector<model::Model> models;
    std::vector<model::AdamW> opts;
    std::vector<model::TrainSettings> wset(static_cast<size_t>(M));
    wts.reserve(specs.size()), arch.reserve(specs.size()), models.reserve(specs.size());
    res.models.resize(specs.size());
    for (int m = 0; m < M; ++m) {
      RunSpec& rs = specs[m];
      rs.task = spec.task, rs.params = spec.params, rs.model = spec.model, rs.train = tc, rs.eval = spec.eval;
      rs.seed = spec.seed + static_cast<uint64_t>(m);
      wts.emplace_back(*task, rs, DataPart::Weights, spec.arch_fraction);
      arch.emplace_back(*task, rs, DataPart::Arch, spec.arch_fraction);
      models.emplace_back(spec.model);
      models.back().init(rs.seed);
      opts.emplace_back(models.back().layout(), tc.beta1, tc.beta2, tc.eps);
      res.models[m].seed = rs.seed;
      res.models[m].start_step = spec.stagger ? static_cast<int64_t>(m) * tc.steps / (M + 1) : 0;
      model::TrainSettings& w = wset[m];
      w = tc;  // the optimiser's part of the train config
      w.steps = tc.steps - res.models[m].start_step;
      w.update = model::Update::WeightsOnly;
    }
    // The shared splines start as model 0's (every model's init puts the same function there).
    for (int m = 1; m < M; ++m) models[m].set_spline_values(models[0].spline_values());
    model::TrainSettings sset = wset[0];
    sset.steps = tc.steps;
    sset.update = model::Update::SplinesOnly;

    const size_t B = static_cast<size_t>(tc.batch);
    std::vector<tasks::Example> examples(B);
    SearchEvent ev;
    Batch batch;
    auto fill = [&](TrainingData& data, int64_t local, SearchEvent::Kind kind, int64_t s, int m) {
      ev.kind = kind, ev.step = s, ev.model = m;
      ev.examples.assign(B, 0);
      for (size_t b = 0; b < B; ++b) data.example(static_cast<uint64_t>(local) * B + b, examples[b], &ev.examples[b]);
      batch.assemble(examples);
      if (observe) {
        const auto sv = models[m].spline_values();
        ev.splines.assign(sv.begin(), sv.end());
        observe(ev);
      }
    };
    const size_t n_spline = models[0].spline_values().size();
    std::vector<float> gsum(n_spline);
    std::vector<double> loss_sum(specs.size(), 0.0);
    std::vector<int64_t> loss_n(specs.size(), 0);
    for (int64_t s = 0; s < tc.steps && res.status == "ok"; ++s) {
      // weights: each active model on its own D_wts batch
      for (int m = 0; m < M && res.status == "ok"; ++m) {
        const int64_t local = s - res.models[m].start_step;
        if (local < 0) continue;
        fill(wts[m], local, SearchEvent::Weights, s, m);
        const model::StepResult st = model::train_step(models[m], opts[m], batch.tokens.data(), batch.targets.data(),
                                                       batch.B, batch.T, local, wset[m], batch.rows());
        if (!st.finite) {
          res.status = "diverged";
          res.message = "model " + std::to_string(m) + ": non-finite loss or gradient at step " + std::to_string(s);
          break;
        }
        loss_sum[m] += st.loss, ++loss_n[m];
        if ((local + 1) % tc.eval_every == 0 || s + 1 == tc.steps) {
          CurvePoint p;
          p.step = local + 1;
          p.train_loss = loss_sum[m] / static_cast<double>(loss_n[m]);
          p.lr = st.lr, p.grad_norm = st.grad_norm;
          p.val_acc = evaluate_examples(models[m], val).seq_acc;
          res.models[m].curve.push_back(p);
          loss_sum[m] = 0, loss_n[m] = 0;
        }
      }
      if (res.status != "ok") break;
      // splines: the sum of the active models' D_arch losses, one step
      std::fill(gsum.begin(), gsum.end(), 0.0f);
      double arch_loss = 0;
      for (int m = 0; m < M; ++m) {
        const int64_t local = s - res.models[m].start_step;
        if (local < 0) continue;
        fill(arch[m], local, SearchEvent::Arch, s, m);
        models[m].zero_grads();
        arch_loss +=
            models[m].forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true, batch.rows());
        const auto g = models[m].spline_grads();
        for (size_t i = 0; i < n_spline; ++i) gsum[i] += g[i];
      }
      // Model 0 (always active) carries the shared splines' optimiser state.
      std::copy(gsum.begin(), gsum.end(), models[0].spline_grads().begin());
      const model::StepResult st = model::apply_gradients(models[0], opts[0], arch_loss, s, sset);
      if (!st.finite) {
        res.status = "diverged";
        res.message = "non-finite D_arch loss or spline gradient at step " + std::to_string(s);
        break;
      }
      for (int m = 1; m < M; ++m) models[m].set_spline_values(models[0].spline_values());
    }
    for (auto& mr : res.models)
      if (!mr.curve.empty()) mr.final_val_acc = mr.curve.back().val_acc;
    res.splines = model_splines(models[0]);
    if (trained) *trained = std::move(models);
  } catch (const std::exception& e) {
    res.status = "failed";
    res.message = e.what();
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return res;
}

}  // namespace srbench::harness
