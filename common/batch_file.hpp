// The batch file of `srbench forward`: an HDF5 file with integer datasets `tokens` and `targets`
// [B,T] and, optionally, `lengths` and `input_lengths` [B] (common/rows.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/rows.hpp"

namespace srbench {

struct TokenBatch {
  int B = 0, T = 0;
  std::vector<int32_t> tokens, targets;  // row-major [B,T]; targets may hold kNotScored (-1)
  std::vector<int32_t> lengths, input_lengths;  // [B] each, or empty when the file has none
  RowLengths rows() const {
    return {lengths.empty() ? nullptr : lengths.data(), input_lengths.empty() ? nullptr : input_lengths.data()};
  }
};

// Reads `path` and checks it against a model's vocabulary and max_len: same shape, B, T >= 1,
// T <= max_len, tokens in [0, vocab), targets in [0, vocab) or -1, lengths in [1, T].
// InputError naming the file, the dataset and the first offending entry otherwise.
TokenBatch read_token_batch(const std::string& path, int vocab, int max_len);

}  // namespace srbench
