// The modular expressions of tasks/modular_expression.hpp: the evaluator's precedence,
// associativity, unary minus and errors; nesting 100,000 deep; G(L) of exactly L tokens for any L.
#include <catch2/catch.hpp>

#include "tasks/modular_expression.hpp"

using namespace srbench::tasks;

namespace {

// m = 1000; the operators' ids follow the digits, as in the tasks' vocabularies.
const ExprAlphabet A{.modulus = 1000, .plus = 1000, .minus = 1001, .times = 1002, .open = 1003, .close = 1004, .x = 1005};
constexpr int32_t P = 1000, M = 1001, T = 1002, O = 1003, C = 1004, X = 1005;

}  // namespace

TEST_CASE("evaluate_mod: ordinary arithmetic, reduced mod m", "[tasks][chomsky]") {
  CHECK(evaluate_mod(std::vector<int32_t>{1, P, 2, T, 3}, A) == 7);           // * before +
  CHECK(evaluate_mod(std::vector<int32_t>{8, M, 3, M, 2}, A) == 3);           // left-associative
  CHECK(evaluate_mod(std::vector<int32_t>{2, T, 3, M, 4, T, 5}, A) == 986);   // 6 - 20 = -14
  CHECK(evaluate_mod(std::vector<int32_t>{O, 1, P, 2, C, T, 3}, A) == 9);     // brackets group
  CHECK(evaluate_mod(std::vector<int32_t>{M, 2, P, 3}, A) == 1);              // unary minus binds tightest
  CHECK(evaluate_mod(std::vector<int32_t>{O, M, 2, T, M, 3, C}, A) == 6);
  CHECK(evaluate_mod(std::vector<int32_t>{5, M, M, 3}, A) == 8);              // 5 - (-3)
  CHECK(evaluate_mod(std::vector<int32_t>{999, T, 999, T, 999}, A) == 999);   // (-1)^3, products reduced
  CHECK(evaluate_mod(std::vector<int32_t>{O, X, M, 4, C}, A, 10) == 6);
  CHECK(evaluate_mod(std::vector<int32_t>{M, X}, A, 3) == 997);
}

TEST_CASE("evaluate_mod: malformed expressions are errors", "[tasks][chomsky]") {
  for (const auto& bad : std::vector<std::vector<int32_t>>{
           {}, {1, P}, {P, 1}, {1, 1}, {O, 1}, {1, C}, {O, C}, {1, O, 2, C}, {1, T, T, 2}, {M}, {1006}})
    CHECK_THROWS_AS(evaluate_mod(bad, A), std::invalid_argument);
}

TEST_CASE("evaluate_mod: nesting 100,000 deep to the left and to the right", "[tasks][chomsky]") {
  const int depth = 100000;
  std::vector<int32_t> left(depth, O), right;
  left.push_back(1);  // E_0 = 1, E_{i+1} = ( E_i + 1 ): the value depth + 1
  for (int i = 0; i < depth; ++i) left.insert(left.end(), {P, 1, C});
  CHECK(evaluate_mod(left, A) == (depth + 1) % 1000);
  for (int i = 0; i < depth; ++i) right.insert(right.end(), {O, 1, M});  // E_{i+1} = ( 1 - E_i ): 1, 0, 1, …
  right.push_back(1);
  right.insert(right.end(), depth, C);
  CHECK(evaluate_mod(right, A) == (depth % 2 == 0 ? 1 : 0));
}

TEST_CASE("append_bracket_expression: exactly L well-formed tokens, any L", "[tasks][chomsky]") {
  const ExprAlphabet five{.modulus = 5, .plus = 5, .minus = 6, .times = 7, .open = 8, .close = 9};
  Rng rng(4);
  for (int L : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 37, 200, 5000, 100000})
    for (int i = 0; i < (L < 1000 ? 40 : 2); ++i) {
      INFO("L = " << L);
      std::vector<int32_t> e;
      append_bracket_expression(rng, L, i % 2 == 0, five, e);
      REQUIRE(static_cast<int>(e.size()) == L);
      int depth = 0;
      for (const int32_t t : e) {
        depth += (t == five.open) - (t == five.close);
        REQUIRE(depth >= 0);
        if (i % 2 == 1) REQUIRE(t != five.times);
      }
      CHECK(depth == 0);
      CHECK_NOTHROW(evaluate_mod(e, five));
    }
}
