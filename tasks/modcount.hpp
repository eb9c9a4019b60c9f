// modcount: counting modulo m (the cyclic group C_m).
//
// Inputs `a0..a{m-1}` (a_v adds v), drawn from the allowed `actions` with probabilities `probs`;
// labels `q0..q{m-1}`; initial state q0; q_t = (v_0 + … + v_t) mod m.
// Example (m = 5, states): a3 a4 a0 a3 → q3 q2 q2 q0.
#pragma once

#include <cmath>

#include "tasks/automaton.hpp"

namespace srbench::tasks {

class ModCountTask : public Task {
 public:
  // actions: distinct values in 0..m-1, non-empty; probs: one per action, summing to 1.
  ModCountTask(int m, std::vector<int> actions, std::vector<double> probs, OutputMode mode);
  int max_sequence_length(int n) const override { return automaton_max_sequence_length(mode_, n); }
  // State label ids (`q0..q{m-1}`) after each input (input ids: `a_v` = v).
  std::vector<int32_t> labels(const std::vector<int32_t>& inputs) const;
  double input_space_size(int n) const override { return std::pow(static_cast<double>(drawable_.size()), n); }

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int m_;
  std::vector<int> drawable_;       // the actions of nonzero probability
  std::vector<double> cumulative_;  // their cumulative probabilities
  OutputMode mode_;
  int32_t q0_;
};

TaskInfo modcount_info();

}  // namespace srbench::tasks
