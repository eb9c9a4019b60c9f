// parity: the running parity of a bit string.
//
// Inputs x_t ~ Bernoulli(p1) over tokens `0 1`; labels `q0 q1`; initial state q0;
// q_t = (x_0 + … + x_t) mod 2. Example (states): 1 0 1 1 → q1 q1 q0 q1.
#pragma once

#include <cmath>

#include "tasks/automaton.hpp"

namespace srbench::tasks {

class ParityTask : public Task {
 public:
  ParityTask(double p1, OutputMode mode);
  int max_sequence_length(int n) const override { return automaton_max_sequence_length(mode_, n); }
  // State label ids (`q0`/`q1`) after each input (input ids: `0` = 0, `1` = 1).
  std::vector<int32_t> labels(const std::vector<int32_t>& inputs) const;
  double input_space_size(int n) const override { return p1_ > 0 && p1_ < 1 ? std::pow(2.0, n) : 1.0; }

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  double p1_;
  OutputMode mode_;
  int32_t q0_;
};

TaskInfo parity_info();

}  // namespace srbench::tasks
