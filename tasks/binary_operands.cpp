#include "tasks/binary_operands.hpp"

#include <algorithm>

namespace srbench::tasks {

void append_nonzero_bits(Rng& rng, int digits, std::vector<int32_t>& tape) {
  const size_t start = tape.size();
  bool nonzero = false;
  while (!nonzero) {
    tape.resize(start);
    uint64_t word = 0;
    for (int i = 0; i < digits; ++i) {
      if (i % 64 == 0) word = rng.next();
      const auto bit = static_cast<int32_t>((word >> (i % 64)) & 1);
      tape.push_back(bit);
      nonzero |= bit != 0;
    }
  }
}

void append_binary_operands(Rng& rng, int n, int32_t op, std::vector<int32_t>& tape) {
  if (n == 1) {
    tape.push_back(0);
  } else if (n == 2) {
    const auto v = static_cast<int32_t>(rng.below(3));
    tape.push_back(v & 1);
    tape.push_back(v >> 1);
  } else {
    const int a = static_cast<int>(rng.between(1, n - 2));
    append_nonzero_bits(rng, a, tape);
    tape.push_back(op);
    append_nonzero_bits(rng, n - 1 - a, tape);
  }
}

BinaryOperands read_binary_operands(std::span<const int32_t> tape, int32_t op) {
  const auto at = std::find(tape.begin(), tape.end(), op);
  if (at == tape.end()) return {Natural::from_bits_le(tape), Natural(), false};
  const auto split = static_cast<size_t>(at - tape.begin());
  return {Natural::from_bits_le(tape.first(split)), Natural::from_bits_le(tape.subspan(split + 1)), true};
}

}  // namespace srbench::tasks
