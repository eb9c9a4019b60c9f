// quaternion: the running product in the quaternion group Q8.
//
// Inputs `1 i j k`, uniform; labels `+1 -1 +i -i +j -j +k -k`; initial state +1; reading x gives
// q ← q·x (right multiplication).
// Example (states): i j j k → +i +k -i +j  (i·j = k, k·j = -i, -i·k = j).
#pragma once

#include <cmath>

#include <array>

#include "tasks/automaton.hpp"

namespace srbench::tasks {

class QuaternionTask : public Task {
 public:
  explicit QuaternionTask(OutputMode mode);
  int max_sequence_length(int n) const override { return automaton_max_sequence_length(mode_, n); }
  // State label ids after each input (input ids: `1` = 0, `i` = 1, `j` = 2, `k` = 3).
  std::vector<int32_t> labels(const std::vector<int32_t>& inputs) const;
  double input_space_size(int n) const override { return std::pow(4.0, n); }

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  OutputMode mode_;
  int32_t first_label_;
  // next_[s][x]: the state after state s (index into the labels, +1 = 0) reads input x.
  std::array<std::array<int32_t, 4>, 8> next_;
};

TaskInfo quaternion_info();

}  // namespace srbench::tasks
