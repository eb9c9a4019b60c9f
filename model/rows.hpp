// What a right-padded batch says about each of its rows, besides tokens and targets.
#pragma once

#include <cstdint>

namespace srbench::model {

// Per row b of a batch [B,T], both optional (nullptr: every row T long, with an input tape of T):
// - lengths[b] in [1, T]: the row's own length; positions at or past it are right padding (a
//   bidirectional model masks them as keys; a causal model is unaffected by them anyway);
// - input_lengths[b] in [1, T]: the length L of the row's input tape (chomsky.md §7.3; a
//   Tape-RNN's jumps move by L).
struct RowLengths {
  const int32_t* lengths = nullptr;
  const int32_t* input_lengths = nullptr;
};

}  // namespace srbench::model
