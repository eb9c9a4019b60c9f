// What a right-padded batch [B,T] says about its targets and each of its rows: shared by the task
// generators (tasks/), the model (model/) and the batch files of `srbench forward` (common/batch_file).
#pragma once

#include <cstdint>

namespace srbench {

inline constexpr int32_t kNotScored = -1;  // a target that is not scored (padding, an unscored position)


// Per row b of a batch [B,T], both optional (nullptr: every row T long, with an input tape of T):
// - lengths[b] in [1, T]: the row's own length; positions at or past it are right padding (a
//   bidirectional model masks them as keys; a causal model is unaffected by them anyway);
// - input_lengths[b] in [1, T]: the length L of the row's input tape (chomsky.md §7.3; a
//   Tape-RNN's jumps move by L).
struct RowLengths {
  const int32_t* lengths = nullptr;
  const int32_t* input_lengths = nullptr;
};

}  // namespace srbench
