// flipflop: remember the last value written.
//
// Each input is a write `w_v` with probability p_write (v uniform in 1..values), else a read `r`.
// Labels `q0..q{values}`: q_v after a write of v; `r` keeps the state; initial q0 = nothing
// written yet. Example (states): r w1 r w2 r → q0 q1 q1 q2 q2.
#pragma once

#include "tasks/automaton.hpp"

namespace srbench::tasks {

class FlipFlopTask : public Task {
 public:
  FlipFlopTask(int values, double p_write, OutputMode mode);
  int max_sequence_length(int n) const override { return automaton_max_sequence_length(mode_, n); }
  // State label ids (`q0..q{values}`) after each input (input ids: `r` = 0, `w_v` = v).
  std::vector<int32_t> labels(const std::vector<int32_t>& inputs) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int values_;
  double p_write_;
  OutputMode mode_;
  int32_t q0_;
};

TaskInfo flipflop_info();

}  // namespace srbench::tasks
