// modular_arithmetic (R; NNCH tasks/regular/modular_arithmetic.py): the value of an unbracketed
// expression mod m.
//
// Input tape: an expression of odd length L = n (n odd) or n-1 (n even: NNCH forces odd length,
// so n = 2k draws as n = 2k-1 does): numbers uniform in 0..m-1 at positions 0, 2, …, L-1,
// operators uniform over `operators` at 1, 3, …. One blank, scored with the ordinary arithmetic
// value mod m (`*` before `+ -`, left-associative), computed exactly. Vocabulary
// `0 … {m-1} + - * _` (all three operators whatever `operators`). Examples (m = 5):
// 1 + 2 * 3 _ → 7 → 2;  1 - 1 - 1 _ → -1 → 4;  0 * 1 + 4 * 3 - 2 _ → 10 → 0.
#include "tasks/chomsky.hpp"
#include "tasks/modular_expression.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class ModularArithmeticTask : public TapeTask {
 public:
  ModularArithmeticTask(int modulus, const std::string& operators) : TapeTask("modular_arithmetic") {
    std::vector<std::string> inputs = number_names(modulus);
    inputs.insert(inputs.end(), {"+", "-", "*"});
    set_vocabulary(inputs, number_names(modulus));
    alphabet_ = {.modulus = modulus, .plus = vocab_.id("+"), .minus = vocab_.id("-"), .times = vocab_.id("*")};
    for (const char c : operators) operators_.push_back(vocab_.id(std::string(1, c)));
  }
  int input_length(int n) const override { return n % 2 == 1 ? n : n - 1; }
  int output_length(int) const override { return 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    const int L = input_length(n);
    for (int t = 0; t < L; ++t)
      tape.push_back(t % 2 == 0 ? static_cast<int32_t>(rng.below(static_cast<uint64_t>(alphabet_.modulus)))
                                : operators_[rng.below(operators_.size())]);
  }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    out.push_back(evaluate_mod(input, alphabet_));  // the value v is the token `v`, id v
  }

 private:
  ExprAlphabet alphabet_;
  std::vector<int32_t> operators_;
};

// `operators`: a non-empty string of distinct characters from `+ - *`.
std::string read_operators(const ParamReader& p) {
  const std::string ops = p.string("operators");
  if (ops.empty()) p.fail("operators", "is empty; give some of + - * (e.g. +-*)");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i] != '+' && ops[i] != '-' && ops[i] != '*')
      p.fail("operators", "'" + ops + "' holds '" + ops.substr(i, 1) + "'; only + - * are operators");
    if (ops.find(ops[i]) != i) p.fail("operators", "'" + ops + "' repeats '" + ops.substr(i, 1) + "'");
  }
  return ops;
}

}  // namespace

TaskInfo modular_arithmetic_info() {
  return {"modular_arithmetic",
          "R: value mod m of an unbracketed expression of odd length (Delétang et al.)",
          {{"modulus", ParamType::Int, "5", "modulus m, 2..1000 (numbers 0..m-1)"},
           {"operators", ParamType::String, "+-*", "the operators drawn: distinct characters from + - *"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            const int modulus = static_cast<int>(p.integer_in("modulus", 2, 1000));
            return std::make_unique<ModularArithmeticTask>(modulus, read_operators(p));
          }};
}

}  // namespace srbench::tasks
