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
// steps_to_target: the first curve step with val_acc >= target (−1 if never);
// final_train_loss: the train_loss of the last curve point; fitted: id_acc >= target (1 or 0;
// −1 where id_acc is undefined). NaN where undefined.
RunMetrics derive_metrics(const std::vector<EvalRow>& rows, const std::vector<std::string>& conditions,
                          int train_min, int train_max, const std::vector<CurvePoint>& curve,
                          double target_accuracy);

}  // namespace srbench::harness
