#include "harness/core/metric_fields.hpp"

#include <stdexcept>

namespace srbench::harness {

double MetricField::value(const RunMetrics& m) const {
  return std::visit([&](auto member) { return static_cast<double>(m.*member); }, member);
}

const std::vector<MetricField>& metric_fields() {
  using M = RunMetrics;
  static const std::vector<MetricField> t = {
      {"id_acc", &M::id_acc, false, true, "mean seq_acc of the id rows within the training lengths"},
      {"ood_length_acc", &M::ood_length_acc, false, true, "mean seq_acc of the id rows beyond the training lengths"},
      {"ood_token_acc", &M::ood_token_acc, true, true,
       "mean token_acc of the id rows beyond the training lengths: the Chomsky-hierarchy score (chomsky.md §7.1)"},
      {"shift_acc", &M::shift_acc, false, true, "the lowest, over shift conditions, of the condition's mean seq_acc"},
      {"shortcut_gap", &M::shortcut_gap, false, true, "id_acc − min(ood_length_acc, shift_acc) over those defined"},
      {"steps_to_target", &M::steps_to_target, false, false,
       "the first curve step with val_acc (val_token_acc under train.fit_metric: token_acc) >= "
       "train.target_accuracy (−1: never)"},
      {"final_train_loss", &M::final_train_loss, false, true, "the train_loss of the last curve point"},
      {"fitted", &M::fitted, true, false,
       "1: the mean train.fit_metric (seq_acc: id_acc) of id_acc's rows >= train.target_accuracy, 0: below it, "
       "−1: no such rows"},
      {"gen_length", &M::gen_length, true, true,
       "the longest evaluated length L with train.fit_metric >= train.target_accuracy at every evaluated id length "
       "<= L (0: not even the shortest)"},
  };
  return t;
}

const MetricField& metric_field(const std::string& name) {
  std::string names;
  for (const auto& f : metric_fields()) {
    if (f.name == name) return f;
    names += (names.empty() ? "" : ", ") + f.name;
  }
  throw std::invalid_argument("no metric '" + name + "' (metrics: " + names + ")");
}

std::vector<std::string> report_metrics() {
  std::vector<std::string> out;
  for (const auto& f : metric_fields())
    if (f.summarised) out.push_back(f.name);
  return out;
}

}  // namespace srbench::harness
