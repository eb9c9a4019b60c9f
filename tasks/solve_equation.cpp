// solve_equation (DCF; NNCH tasks/dcf/solve_equation.py): solve a linear equation mod m for x.
//
// Input tape (n ≥ 3): E = G(n-2) of tasks/modular_expression.hpp without `*`, of value v; a
// digit of E replaced by `x`, then `=` and v (one digit): n tokens. The digit is found from
// i uniform in 0..n-3 by stepping i ← (i+1) mod (n-2) until E_i is a digit, so a digit is chosen
// with probability (its cyclic distance from the previous digit) / (n-2), as NNCH does. One
// blank, scored with the replaced digit d — the unique solution, x having coefficient ±1.
// n ≤ 2: n tokens `0`, label `0` (NNCH's placeholder). Vocabulary `0 … {m-1} + - ( ) x = _`.
// Examples (m = 5): ( 4 - ( x ) ) = 1 _ → 3;  0 0 _ (n = 2) → 0.
#include <stdexcept>

#include "tasks/chomsky.hpp"
#include "tasks/modular_expression.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class SolveEquationTask : public TapeTask {
 public:
  explicit SolveEquationTask(int modulus) : TapeTask("solve_equation") {
    std::vector<std::string> inputs = number_names(modulus);
    inputs.insert(inputs.end(), {"+", "-", "(", ")", "x", "="});
    set_vocabulary(inputs, number_names(modulus));
    alphabet_ = {.modulus = modulus, .plus = vocab_.id("+"), .minus = vocab_.id("-"), .open = vocab_.id("("),
                 .close = vocab_.id(")"), .x = vocab_.id("x")};
    equals_ = vocab_.id("=");
  }
  int output_length(int) const override { return 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    if (n <= 2) {
      tape.assign(static_cast<size_t>(n), 0);
      return;
    }
    const size_t length = static_cast<size_t>(n - 2);
    append_bracket_expression(rng, n - 2, false, alphabet_, tape);
    const int32_t value = evaluate_mod(tape, alphabet_);
    size_t i = rng.below(length);
    while (!is_digit(tape[i])) i = (i + 1) % length;
    tape[i] = alphabet_.x;
    tape.push_back(equals_);
    tape.push_back(value);
  }
  // E(x) = c0 + coefficient·x with coefficient ±1 (its own inverse), so x = coefficient·(v - c0).
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    if (input.size() <= 2) {
      out.push_back(0);
      return;
    }
    const int64_t m = alphabet_.modulus;
    if (input[input.size() - 2] != equals_ || !is_digit(input.back()))
      throw std::invalid_argument("solve_equation: the tape does not end in = v");
    const auto lhs = input.first(input.size() - 2);
    const int64_t c0 = evaluate_mod(lhs, alphabet_, 0);
    const int64_t coefficient = (evaluate_mod(lhs, alphabet_, 1) - c0 + m) % m;
    if (coefficient != 1 && coefficient != m - 1)
      throw std::invalid_argument("solve_equation: x does not have coefficient +1 or -1");
    out.push_back(static_cast<int32_t>(coefficient * ((input.back() - c0 + m) % m) % m));
  }

 private:
  bool is_digit(int32_t token) const { return token >= 0 && token < alphabet_.modulus; }
  ExprAlphabet alphabet_;
  int32_t equals_;
};

}  // namespace

TaskInfo solve_equation_info() {
  return {"solve_equation",
          "DCF: the digit x solving a bracketed linear equation mod m (Delétang et al.)",
          {{"modulus", ParamType::Int, "5", "modulus m, 2..10 (each number one token)"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<SolveEquationTask>(static_cast<int>(p.integer_in("modulus", 2, 10)));
          }};
}

}  // namespace srbench::tasks
