// modular_arithmetic_brackets (DCF; NNCH tasks/dcf/modular_arithmetic_brackets.py): the value
// mod m of a fully bracketed expression.
//
// Input tape: G(n) of tasks/modular_expression.hpp, exactly n tokens (operators + - and, with
// `mult`, *; unary minus on single digits). One blank, scored with the value mod m. Vocabulary
// `0 … {m-1} + - * ( ) _` (`*` whatever `mult`). Example (m = 5): ( - 2 * - 3 ) _ → 6 → 1.
#include "tasks/chomsky.hpp"
#include "tasks/modular_expression.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class ModularArithmeticBracketsTask : public TapeTask {
 public:
  ModularArithmeticBracketsTask(int modulus, bool mult) : TapeTask("modular_arithmetic_brackets"), mult_(mult) {
    std::vector<std::string> inputs = number_names(modulus);
    inputs.insert(inputs.end(), {"+", "-", "*", "(", ")"});
    set_vocabulary(inputs, number_names(modulus));
    alphabet_ = {.modulus = modulus, .plus = vocab_.id("+"), .minus = vocab_.id("-"), .times = vocab_.id("*"),
                 .open = vocab_.id("("), .close = vocab_.id(")")};
  }
  int output_length(int) const override { return 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    append_bracket_expression(rng, n, mult_, alphabet_, tape);
  }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    out.push_back(evaluate_mod(input, alphabet_));  // the value v is the token `v`, id v
  }

 private:
  bool mult_;
  ExprAlphabet alphabet_;
};

}  // namespace

TaskInfo modular_arithmetic_brackets_info() {
  return {"modular_arithmetic_brackets",
          "DCF: value mod m of a random fully bracketed expression (Delétang et al.)",
          {{"modulus", ParamType::Int, "5", "modulus m, 2..10 (each number one token)"},
           {"mult", ParamType::Bool, "true", "draw * besides + and - (NNCH's experiments: true)"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            const int modulus = static_cast<int>(p.integer_in("modulus", 2, 10));
            return std::make_unique<ModularArithmeticBracketsTask>(modulus, p.boolean("mult"));
          }};
}

}  // namespace srbench::tasks
