#include "harness/run/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace srbench::harness {

bool is_shift_condition(const std::string& label) { return label.find('=') != std::string::npos; }

namespace {

double mean_or_nan(double sum, int count) { return count > 0 ? sum / count : kNaN; }

double accuracy(const EvalRow& r, FitMetric fit) { return fit == FitMetric::token_acc ? r.token_acc : r.seq_acc; }
double accuracy(const CurvePoint& p, FitMetric fit) { return fit == FitMetric::token_acc ? p.val_token_acc : p.val_acc; }

}  // namespace

double gen_length(const std::vector<EvalRow>& rows, double target_accuracy, FitMetric fit) {
  std::map<int64_t, bool> reached;  // each evaluated id length: every row there reaches the target
  for (const auto& r : rows)
    if (r.condition == 0) {
      const bool ok = accuracy(r, fit) >= target_accuracy;  // false for NaN
      auto [it, fresh] = reached.emplace(r.length, ok);
      if (!fresh) it->second = it->second && ok;
    }
  if (reached.empty()) return kNaN;
  int64_t longest = 0;
  for (const auto& [length, ok] : reached) {
    if (!ok) break;
    longest = length;
  }
  return static_cast<double>(longest);
}

RunMetrics derive_metrics(const std::vector<EvalRow>& rows, const std::vector<std::string>& conditions,
                          int train_min, int train_max, const std::vector<CurvePoint>& curve,
                          double target_accuracy, FitMetric fit) {
  RunMetrics m;
  double id_sum = 0, id_token_sum = 0, ood_sum = 0, ood_token_sum = 0;
  int id_n = 0, ood_n = 0;
  std::vector<double> cond_sum(conditions.size(), 0.0);
  std::vector<int> cond_n(conditions.size(), 0);
  for (const auto& r : rows) {
    if (r.condition == 0) {
      if (r.length >= train_min && r.length <= train_max) id_sum += r.seq_acc, id_token_sum += r.token_acc, ++id_n;
      else if (r.length > train_max) ood_sum += r.seq_acc, ood_token_sum += r.token_acc, ++ood_n;
    } else if (r.condition > 0 && static_cast<size_t>(r.condition) < conditions.size()) {
      cond_sum[r.condition] += r.seq_acc, ++cond_n[r.condition];
    }
  }
  m.id_acc = mean_or_nan(id_sum, id_n);
  m.ood_length_acc = mean_or_nan(ood_sum, ood_n);
  m.ood_token_acc = mean_or_nan(ood_token_sum, ood_n);
  for (size_t c = 1; c < conditions.size(); ++c) {
    if (!is_shift_condition(conditions[c]) || cond_n[c] == 0) continue;
    const double acc = cond_sum[c] / cond_n[c];
    if (std::isnan(m.shift_acc) || acc < m.shift_acc) m.shift_acc = acc;
  }
  double off = kNaN;
  for (double v : {m.ood_length_acc, m.shift_acc})
    if (!std::isnan(v) && (std::isnan(off) || v < off)) off = v;
  if (!std::isnan(m.id_acc) && !std::isnan(off)) m.shortcut_gap = m.id_acc - off;
  for (const auto& p : curve)
    if (accuracy(p, fit) >= target_accuracy) {
      m.steps_to_target = p.step;
      break;
    }
  if (!curve.empty()) m.final_train_loss = curve.back().train_loss;
  const double fit_acc = fit == FitMetric::token_acc ? mean_or_nan(id_token_sum, id_n) : m.id_acc;
  if (!std::isnan(fit_acc)) m.fitted = fit_acc >= target_accuracy ? 1 : 0;
  m.gen_length = gen_length(rows, target_accuracy, fit);
  return m;
}

}  // namespace srbench::harness
