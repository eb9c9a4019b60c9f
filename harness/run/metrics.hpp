// The arithmetic of harness.md's per-run metrics: derived from a run's evaluation rows and its
// training curve. Pure functions, checked on hand-made rows.
#pragma once

#include <string>
#include <vector>

#include "harness/core/records.hpp"

namespace srbench::harness {

// A shift condition is one of the form "key=value[,key=value…]"; "id" and modadd's "train" are not.
bool is_shift_condition(const std::string& label);

// id_acc: mean seq_acc of the `id` rows (condition 0) with train_min <= length <= train_max;
// ood_length_acc: mean seq_acc of the `id` rows with length > train_max;
// ood_token_acc: mean token_acc of those rows (the Chomsky-hierarchy benchmark's score);
// shift_acc: the lowest, over shift conditions, of that condition's mean seq_acc;
// shortcut_gap: id_acc − min(ood_length_acc, shift_acc) over those defined;
// steps_to_target: the first curve step whose val_acc (val_token_acc under `fit` token_acc)
// >= target (−1 if never); final_train_loss: the train_loss of the last curve point; fitted: the
// mean `fit` accuracy of id_acc's rows (id_acc itself under seq_acc) >= target (1 or 0; −1 where
// there are no such rows); gen_length: below. NaN where undefined.
RunMetrics derive_metrics(const std::vector<EvalRow>& rows, const std::vector<std::string>& conditions,
                          int train_min, int train_max, const std::vector<CurvePoint>& curve,
                          double target_accuracy, FitMetric fit = FitMetric::seq_acc);

// The longest evaluated length L such that the `fit` accuracy (seq_acc or token_acc) of every `id`
// row (condition 0) of length <= L reaches the target, whatever the training lengths: 0 when the
// shortest evaluated length misses it, NaN when there are no id rows.
double gen_length(const std::vector<EvalRow>& rows, double target_accuracy, FitMetric fit);

}  // namespace srbench::harness
