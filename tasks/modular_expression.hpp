// Modular expressions shared by modular_arithmetic, modular_arithmetic_brackets and solve_equation
// (chomsky.md §3): an evaluator of infix expressions mod m, and the bracket grammar G(n).
//
// In all three vocabularies the digit d (0 ≤ d < m) has token id d; the other symbols' ids are
// given by an ExprAlphabet (-1 where the vocabulary lacks the symbol).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tasks/rng.hpp"

namespace srbench::tasks {

struct ExprAlphabet {
  int modulus = 5;
  int32_t plus = -1, minus = -1, times = -1, open = -1, close = -1, x = -1;
};

// The ordinary arithmetic value of an infix expression, reduced to 0..m-1: `*` binds tighter
// than `+` and `-` (left-associative); a `-` where an operand is expected is unary minus, binding
// tightest; brackets group; the unknown `x` (if any) has the value `x_value`. Iterative, so any
// nesting depth is fine. Throws std::invalid_argument for a malformed expression.
int32_t evaluate_mod(std::span<const int32_t> tokens, const ExprAlphabet& alphabet, int64_t x_value = 0);

// Appends G(length), the fully bracketed expression of exactly `length` tokens:
//   G(1) = d;  G(2) = - d;  G(3) = ( d );  G(4) = ( - d ), d uniform in 0..m-1;
//   G(L ≥ 5) = ( G(l) op G(L-3-l) ), l uniform in 1..L-4, op uniform over + - (and * if `mult`).
// Built from a stack of pending pieces, not by recursion, so any length is safe.
void append_bracket_expression(Rng& rng, int length, bool mult, const ExprAlphabet& alphabet,
                               std::vector<int32_t>& out);

}  // namespace srbench::tasks
