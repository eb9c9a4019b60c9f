// The input tape shared by binary_addition and binary_multiplication (chomsky.md §3), digits
// `0 1` with ids 0 and 1, `op` the operator's id (`+` or `*`):
//   n = 1: `0` (NNCH draws from 0..2^n-2);
//   n = 2: v uniform in {0, 1, 2} as 2 digits, least significant first, without an operator;
//   n ≥ 3: a uniform in 1..n-2, b = n-1-a; x uniform in 1..2^a-1 as exactly a digits, `op`,
//          y uniform in 1..2^b-1 as exactly b digits (least significant first: the top digit
//          may be 0, an operand is never all zeros).
#pragma once

#include <span>
#include <vector>

#include "tasks/natural.hpp"
#include "tasks/rng.hpp"

namespace srbench::tasks {

// Appends `digits` binary digits, least significant first, of a number uniform in
// 1..2^digits-1 (a uniform digit string, redrawn while all zeros).
void append_nonzero_bits(Rng& rng, int digits, std::vector<int32_t>& tape);

void append_binary_operands(Rng& rng, int n, int32_t op, std::vector<int32_t>& tape);

// The numbers written before and after `op`; without `op` the whole tape is x (and y is 0).
struct BinaryOperands {
  Natural x, y;
  bool has_operator = false;
};
BinaryOperands read_binary_operands(std::span<const int32_t> tape, int32_t op);

}  // namespace srbench::tasks
