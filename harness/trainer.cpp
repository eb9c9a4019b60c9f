#include "harness/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "harness/diagnostics.hpp"
#include "harness/metrics.hpp"
#include "harness/results.hpp"
#include "harness/search.hpp"
#include "model/optim.hpp"
#include "tasks/rng.hpp"

namespace srbench::harness {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Hash tags keep the streams of lengths and orders apart from each other.
constexpr uint64_t kTrainLengthTag = 0x6c656e677468ULL;  // length of training example k
constexpr uint64_t kFiniteLengthTag = 0x66696e697465ULL;  // length of finite-set example j
constexpr uint64_t kEpochOrderTag = 0x65706f6368ULL;      // order of the finite set in epoch e
constexpr uint64_t kArchLengthTag = 0x61726368ULL;        // length of train-arch example k (searches)
constexpr uint64_t kArchOrderTag = 0x617263686fULL;       // order of D_arch in epoch e (searches)
constexpr uint64_t kValLengthTag = 0x76616c6964ULL;       // length of validation example i
constexpr uint64_t kValIndexBase = 1ULL << 40;            // validation examples: eval stream, far indices
constexpr int kDiagExamples = 64;                         // the diagnostics batch (harness.md, Diagnostics)

int draw_length(uint64_t seed, uint64_t index, uint64_t tag, int lo, int hi) {
  tasks::Rng rng(tasks::hash_words({seed, index, tag}));
  return static_cast<int>(rng.between(lo, hi));
}

model::Schedule schedule_of(const std::string& s) { return model::parse_schedule(s); }

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

TrainingData::TrainingData(const tasks::Task& task, const RunSpec& spec, DataPart part, double arch_fraction)
    : task_(task), spec_(spec), part_(part) {
  const TrainConfig& t = spec.train;
  if (t.examples > 0) {
    finite_.resize(static_cast<size_t>(t.examples));
    for (size_t j = 0; j < finite_.size(); ++j)
      task.sample_into(t.data_seed, tasks::Stream::Train, j,
                       draw_length(t.data_seed, j, kFiniteLengthTag, t.length_min, t.length_max), finite_[j]);
    const uint64_t n = finite_.size();
    const uint64_t n_arch = part == DataPart::All ? 0 : arch_examples(n, arch_fraction);
    const uint64_t lo = part == DataPart::Arch ? n - n_arch : 0;
    const uint64_t hi = part == DataPart::Weights ? n - n_arch : n;
    for (uint64_t j = lo; j < hi; ++j) pool_.push_back(j);
  }
}

uint64_t arch_examples(uint64_t n, double arch_fraction) {
  return static_cast<uint64_t>(std::llround(arch_fraction * static_cast<double>(n)));
}

void TrainingData::example(uint64_t k, tasks::Example& out, uint64_t* source) {
  const TrainConfig& t = spec_.train;
  if (finite_.empty()) {
    const bool arch = part_ == DataPart::Arch;
    task_.sample_into(spec_.seed, arch ? tasks::Stream::TrainArch : tasks::Stream::Train, k,
                      draw_length(spec_.seed, k, arch ? kArchLengthTag : kTrainLengthTag, t.length_min, t.length_max),
                      out);
    if (source) *source = k;
    return;
  }
  const uint64_t n = pool_.size(), epoch = k / n;
  if (epoch != epoch_ || order_.empty()) {
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), uint64_t{0});
    tasks::Rng rng(tasks::hash_words({spec_.seed, epoch, part_ == DataPart::Arch ? kArchOrderTag : kEpochOrderTag}));
    rng.shuffle(order_);
    epoch_ = epoch;
  }
  const uint64_t j = pool_[order_[k % n]];
  out = finite_[j];
  if (source) *source = j;
}

std::vector<tasks::Example> validation_set(const tasks::Task& task, const TrainConfig& tc, size_t n) {
  std::vector<tasks::Example> val(n);
  for (size_t i = 0; i < n; ++i)
    task.sample_into(tc.data_seed, tasks::Stream::Eval, kValIndexBase + i,
                     draw_length(tc.data_seed, i, kValLengthTag, tc.length_min, tc.length_max), val[i]);
  return val;
}

void Batch::assemble(const std::vector<tasks::Example>& examples) {
  B = static_cast<int>(examples.size());
  T = 0;
  real_tokens = 0;
  for (const auto& e : examples) T = std::max(T, static_cast<int>(e.tokens.size()));
  tokens.assign(static_cast<size_t>(B) * T, 0);
  targets.assign(static_cast<size_t>(B) * T, tasks::kNotScored);
  for (int b = 0; b < B; ++b) {
    const auto& e = examples[b];
    std::copy(e.tokens.begin(), e.tokens.end(), tokens.begin() + static_cast<ptrdiff_t>(b) * T);
    std::copy(e.targets.begin(), e.targets.end(), targets.begin() + static_cast<ptrdiff_t>(b) * T);
    real_tokens += static_cast<int64_t>(e.tokens.size());
  }
}

EvalScore evaluate_examples(model::Model& m, const std::vector<tasks::Example>& examples, int batch) {
  EvalScore s;
  double loss_sum = 0;
  int64_t correct_tokens = 0, correct_seqs = 0;
  Batch bt;
  std::vector<tasks::Example> chunk;
  const int V = m.config().vocab;
  for (size_t start = 0; start < examples.size(); start += static_cast<size_t>(batch)) {
    const size_t end = std::min(examples.size(), start + static_cast<size_t>(batch));
    chunk.assign(examples.begin() + static_cast<ptrdiff_t>(start), examples.begin() + static_cast<ptrdiff_t>(end));
    bt.assemble(chunk);
    const double mean_loss = m.forward(bt.tokens.data(), bt.targets.data(), bt.B, bt.T);
    loss_sum += mean_loss * static_cast<double>(m.scored());
    const float* logits = m.logits();
    for (int b = 0; b < bt.B; ++b) {
      bool all = true;
      for (int t = 0; t < bt.T; ++t) {
        const int32_t target = bt.targets[static_cast<size_t>(b) * bt.T + t];
        if (target < 0) continue;
        const float* row = logits + (static_cast<size_t>(b) * bt.T + t) * V;
        const int32_t pred = static_cast<int32_t>(std::max_element(row, row + V) - row);
        ++s.scored;
        if (pred == target) ++correct_tokens;
        else all = false;
      }
      correct_seqs += all;
    }
    s.examples += bt.B;
  }
  if (s.scored > 0) {
    s.loss = loss_sum / static_cast<double>(s.scored);
    s.token_acc = static_cast<double>(correct_tokens) / static_cast<double>(s.scored);
  }
  if (s.examples > 0) s.seq_acc = static_cast<double>(correct_seqs) / static_cast<double>(s.examples);
  return s;
}

RunResult run_training(const RunSpec& spec, std::unique_ptr<model::Model>* trained) {
  const auto wall_start = Clock::now();
  RunResult r;
  r.run_id = spec.id, r.task = spec.task, r.entry = spec.entry, r.model = spec.model_name, r.grid = spec.grid;
  r.seed = spec.seed;
  r.config_yaml = spec.resolved_yaml;
  try {
    const TrainConfig& tc = spec.train;
    const auto task = tasks::make_task(spec.task, spec.params, {tc.data_seed});
    r.bits_per_byte = task->reports_bits_per_byte();
    auto model = std::make_unique<model::Model>(spec.model);
    model->init(spec.seed);
    model::AdamW opt(model->layout());
    model::TrainSettings settings;
    settings.steps = tc.steps, settings.warmup = tc.warmup, settings.schedule = schedule_of(tc.schedule);
    settings.lr = tc.lr, settings.weight_decay = tc.weight_decay, settings.clip = tc.clip;
    settings.spline_lr = tc.spline_lr, settings.freeze_splines = spec.freeze_splines;
    r.splines_from = spec.splines_from;
    if (!spec.splines_from.empty()) {  // stage 2: the splines of a search (or a splines file)
      if (spec.splines_path.empty()) throw std::runtime_error("splines_from '" + spec.splines_from + "': no splines file given");
      const SplinesFile f = read_splines_file(spec.splines_path);
      const std::string why = splines_mismatch(f.splines, spec.model);
      if (!why.empty()) throw std::runtime_error("splines file " + spec.splines_path + ": " + why);
      set_model_splines(*model, f.splines);
      r.splines_task = f.task;
    }
    settings.router_lr = tc.router_lr;

    const std::vector<tasks::Example> val = validation_set(*task, tc, static_cast<size_t>(spec.eval.val_examples));
    TrainingData data(*task, spec);
    std::vector<tasks::Example> examples(static_cast<size_t>(tc.batch));
    Batch batch;
    double train_seconds = 0, loss_sum = 0;
    int64_t real_tokens = 0, loss_n = 0;
    for (int64_t s = 0; s < tc.steps; ++s) {
      for (int64_t b = 0; b < tc.batch; ++b) data.example(static_cast<uint64_t>(s * tc.batch + b), examples[b]);
      batch.assemble(examples);
      const auto t0 = Clock::now();
      const model::StepResult step =
          model::train_step(*model, opt, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, s, settings);
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
        p.val_acc = evaluate_examples(*model, val).seq_acc;
        r.curve.push_back(p);
        loss_sum = 0, loss_n = 0;
      }
    }
    if (train_seconds > 0) r.tokens_per_s = static_cast<double>(real_tokens) / train_seconds;

    if (r.status == "ok") {
      // Final evaluation: every length × condition (shifts at the lengths inside the training range).
      std::vector<std::unique_ptr<tasks::Task>> cond_tasks;
      for (const auto& sh : spec.eval.shifts) {
        tasks::RawParams p = spec.params;
        for (const auto& [k, v] : sh.params) p[k] = v;
        cond_tasks.push_back(tasks::make_task(spec.task, p, {tc.data_seed}));
        r.conditions.push_back(sh.label);
      }
      std::vector<int> lengths = spec.eval.lengths;
      if (!task->uses_length()) lengths = {tc.length_max};  // modadd: one length
      auto eval_set = [&](const tasks::Task& t, tasks::Stream stream, int n) {
        std::vector<tasks::Example> ex(static_cast<size_t>(spec.eval.examples));
        for (size_t i = 0; i < ex.size(); ++i) t.sample_into(tc.data_seed, stream, i, n, ex[i]);
        return ex;
      };
      auto add_row = [&](int64_t length, int64_t condition, const EvalScore& sc) {
        r.eval.push_back({length, condition, sc.loss, sc.token_acc, sc.seq_acc});
      };
      for (int n : lengths) add_row(n, 0, evaluate_examples(*model, eval_set(*task, tasks::Stream::Eval, n)));
      for (size_t c = 0; c < cond_tasks.size(); ++c)
        for (int n : lengths)
          if (n >= tc.length_min && n <= tc.length_max)
            add_row(n, static_cast<int64_t>(c + 1),
                    evaluate_examples(*model, eval_set(*cond_tasks[c], tasks::Stream::Eval, n)));
      if (!task->uses_length()) {  // modadd: also report the training pairs
        r.conditions.push_back("train");
        add_row(tc.length_max, static_cast<int64_t>(r.conditions.size() - 1),
                evaluate_examples(*model, eval_set(*task, tasks::Stream::Train, tc.length_max)));
      }
      // Diagnostics on a fixed ID batch: the first 64 examples of the validation stream (the
      // validation set, extended or cut to 64), the same for every seed.
      r.diag = compute_diagnostics(*model, validation_set(*task, tc, kDiagExamples));
      r.routers = learned_routers(*model);
    }
    r.splines = model_splines(*model);
    r.metrics = derive_metrics(r.eval, r.conditions, tc.length_min, tc.length_max, r.curve, tc.target_accuracy);
    if (trained) *trained = std::move(model);
  } catch (const std::exception& e) {
    r.status = "failed";
    r.message = e.what();
  }
  r.wall_s = seconds_since(wall_start);
  return r;
}

}  // namespace srbench::harness
