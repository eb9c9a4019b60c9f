#include "harness/run/evaluate.hpp"

#include <algorithm>
#include <memory>

#include "harness/run/data.hpp"

namespace srbench::harness {

uint64_t SeenSet::hash(const std::vector<int32_t>& tokens) {
  uint64_t h = 0xcbf29ce484222325ULL ^ tokens.size();  // FNV-1a over the ids' bytes
  for (int32_t t : tokens)
    for (int k = 0; k < 4; ++k) h = (h ^ ((static_cast<uint32_t>(t) >> (8 * k)) & 0xffU)) * 0x100000001b3ULL;
  return h;
}

void SeenSet::seal() {
  std::sort(hashes_.begin(), hashes_.end());
  hashes_.erase(std::unique(hashes_.begin(), hashes_.end()), hashes_.end());
}

bool SeenSet::contains(const std::vector<int32_t>& tokens) const {
  return std::binary_search(hashes_.begin(), hashes_.end(), hash(tokens));
}

BatchScorer model_scorer(model::Model& m) {
  return [&m](const Batch& bt) {
    const double mean_loss = m.infer(bt.tokens.data(), bt.targets.data(), bt.B, bt.T, bt.rows());
    BatchOutput out;
    out.logits = m.logits();
    out.vocab = m.config().vocab;
    out.loss_sum = mean_loss * static_cast<double>(m.scored());
    return out;
  };
}

EvalScore evaluate_examples(const BatchScorer& score, const std::vector<tasks::Example>& examples, int batch,
                            const SeenSet* seen, const WrongExample& wrong) {
  EvalScore s;
  double loss_sum = 0;
  int64_t correct_tokens = 0, correct_seqs = 0, seen_count = 0;
  std::vector<int64_t> pos_scored, pos_correct;  // per position
  Batch bt;
  std::vector<tasks::Example> chunk;
  std::vector<int32_t> predictions;  // of one example, for `wrong`
  for (size_t start = 0; start < examples.size(); start += static_cast<size_t>(batch)) {
    const size_t end = std::min(examples.size(), start + static_cast<size_t>(batch));
    chunk.assign(examples.begin() + static_cast<ptrdiff_t>(start), examples.begin() + static_cast<ptrdiff_t>(end));
    bt.assemble(chunk);
    const BatchOutput out = score(bt);
    loss_sum += out.loss_sum;
    const size_t V = static_cast<size_t>(out.vocab);
    if (pos_scored.size() < static_cast<size_t>(bt.T)) pos_scored.resize(bt.T, 0), pos_correct.resize(bt.T, 0);
    for (int b = 0; b < bt.B; ++b) {
      bool all = true;
      if (wrong) predictions.assign(chunk[b].tokens.size(), tasks::kNotScored);
      for (int t = 0; t < bt.T; ++t) {
        const int32_t target = bt.targets[static_cast<size_t>(b) * bt.T + t];
        if (target < 0) continue;
        const size_t at = static_cast<size_t>(b) * bt.T + t;
        int32_t pred;
        if (out.logits) {
          const float* row = out.logits + at * V;
          pred = static_cast<int32_t>(std::max_element(row, row + V) - row);
        } else {
          pred = out.predictions[at];
        }
        if (wrong) predictions[static_cast<size_t>(t)] = pred;
        ++s.scored;
        ++pos_scored[t];
        if (pred == target) ++correct_tokens, ++pos_correct[t];
        else all = false;
      }
      correct_seqs += all;
      if (!all && wrong) wrong(start + static_cast<size_t>(b), predictions);
      if (seen) seen_count += seen->contains(chunk[b].tokens);
    }
    s.examples += bt.B;
  }
  if (s.scored > 0) {
    s.loss = loss_sum / static_cast<double>(s.scored);
    s.token_acc = static_cast<double>(correct_tokens) / static_cast<double>(s.scored);
  }
  if (s.examples > 0) s.seq_acc = static_cast<double>(correct_seqs) / static_cast<double>(s.examples);
  if (seen && s.examples > 0) s.seen_frac = static_cast<double>(seen_count) / static_cast<double>(s.examples);
  // up to the last position any example scores
  size_t last = pos_scored.size();
  while (last > 0 && pos_scored[last - 1] == 0) --last;
  for (size_t t = 0; t < last; ++t)
    s.position_acc.push_back(pos_scored[t] > 0 ? static_cast<double>(pos_correct[t]) / static_cast<double>(pos_scored[t])
                                               : kNaN);
  return s;
}

void evaluate_run(const BatchScorer& score, const tasks::Task& task, const RunSpec& spec, RunResult& r,
                  const SeenSet* seen, int batch, const EvalProgress& progress) {
  const TrainConfig& tc = spec.train;
  std::vector<std::unique_ptr<tasks::Task>> cond_tasks;
  for (const auto& sh : spec.eval.shifts) {
    tasks::RawParams p = spec.params;
    for (const auto& [k, v] : sh.params) p[k] = v;
    cond_tasks.push_back(tasks::make_task(spec.task, p, {tc.data_seed}));
    r.conditions.push_back(sh.label);
  }
  std::vector<int> lengths = spec.eval.lengths;
  if (!task.uses_length()) lengths = {tc.length_max};  // modadd: one length
  // The rows, in order: every length of condition id, each shift at the lengths inside the
  // training range, modadd's training pairs; then each evaluated (progress: rows done of all).
  struct Row {
    const tasks::Task* task;
    tasks::Stream stream;
    int64_t length, condition;
  };
  std::vector<Row> plan;
  for (int n : lengths) plan.push_back({&task, tasks::Stream::Eval, n, 0});
  for (size_t c = 0; c < cond_tasks.size(); ++c)
    for (int n : lengths)
      if (n >= tc.length_min && n <= tc.length_max)
        plan.push_back({cond_tasks[c].get(), tasks::Stream::Eval, n, static_cast<int64_t>(c + 1)});
  if (!task.uses_length()) {  // modadd: also report the training pairs
    r.conditions.push_back("train");
    plan.push_back({&task, tasks::Stream::Train, tc.length_max, static_cast<int64_t>(r.conditions.size() - 1)});
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    const Row& row = plan[i];
    const int length = static_cast<int>(row.length);
    const EvalScore sc = evaluate_examples(
        score, evaluation_set(*row.task, tc.data_seed, row.stream, length, spec.eval.examples), batch, seen);
    r.eval.push_back({row.length, row.condition, sc.loss, sc.token_acc, sc.seq_acc, sc.seen_frac, sc.position_acc,
                      row.task->input_space_size(length)});
    if (progress) progress(i + 1, plan.size());
  }
}

}  // namespace srbench::harness
