#include "tasks/modular_expression.hpp"

#include <stdexcept>

namespace srbench::tasks {

namespace {

enum class Op { Open, Add, Sub, Mul, Neg };

int precedence(Op op) {
  switch (op) {
    case Op::Open: return 0;
    case Op::Add:
    case Op::Sub: return 1;
    case Op::Mul: return 2;
    case Op::Neg: return 3;
  }
  return 0;
}

[[noreturn]] void malformed(const char* why) {
  throw std::invalid_argument(std::string("malformed expression: ") + why);
}

}  // namespace

// Operator precedence parsing with two stacks: values (reduced mod m) and pending operators.
int32_t evaluate_mod(std::span<const int32_t> tokens, const ExprAlphabet& a, int64_t x_value) {
  const int64_t m = a.modulus;
  std::vector<int64_t> values;
  std::vector<Op> ops;
  auto reduce = [&] {
    const Op op = ops.back();
    ops.pop_back();
    if (op == Op::Neg) {
      if (values.empty()) malformed("unary minus without an operand");
      values.back() = (m - values.back()) % m;
      return;
    }
    if (values.size() < 2) malformed("an operator without two operands");
    const int64_t right = values.back();
    values.pop_back();
    int64_t& left = values.back();
    left = op == Op::Add ? (left + right) % m : op == Op::Sub ? (left - right + m) % m : left * right % m;
  };
  // Reduces the pending operators that bind at least as tightly as `prec` (left-associativity).
  auto reduce_down_to = [&](int prec) {
    while (!ops.empty() && ops.back() != Op::Open && precedence(ops.back()) >= prec) reduce();
  };
  bool expect_operand = true;
  for (const int32_t t : tokens) {
    if (t >= 0 && t < m) {
      if (!expect_operand) malformed("two operands in a row");
      values.push_back(t);
      expect_operand = false;
    } else if (t == a.x && t >= 0) {
      if (!expect_operand) malformed("two operands in a row");
      values.push_back(((x_value % m) + m) % m);
      expect_operand = false;
    } else if (t == a.open && t >= 0) {
      if (!expect_operand) malformed("an opening bracket after an operand");
      ops.push_back(Op::Open);
    } else if (t == a.close && t >= 0) {
      if (expect_operand) malformed("a closing bracket where an operand is expected");
      reduce_down_to(0);
      if (ops.empty()) malformed("an unmatched closing bracket");
      ops.pop_back();
    } else if (t == a.minus && t >= 0 && expect_operand) {
      ops.push_back(Op::Neg);
    } else if ((t == a.plus || t == a.minus || t == a.times) && t >= 0) {
      if (expect_operand) malformed("a binary operator where an operand is expected");
      const Op op = t == a.plus ? Op::Add : t == a.minus ? Op::Sub : Op::Mul;
      reduce_down_to(precedence(op));
      ops.push_back(op);
      expect_operand = true;
    } else {
      malformed("a token that is not part of an expression");
    }
  }
  if (expect_operand) malformed("it ends where an operand is expected");
  reduce_down_to(0);
  if (!ops.empty()) malformed("an unmatched opening bracket");
  if (values.size() != 1) malformed("operands left over");
  return static_cast<int32_t>(values.back());
}

void append_bracket_expression(Rng& rng, int length, bool mult, const ExprAlphabet& a, std::vector<int32_t>& out) {
  // A pending piece: a subexpression of `length` > 0 tokens, or (length 0) the token `token`,
  // or (length -1) an operator still to draw. Pieces are pushed in reverse order of writing.
  struct Piece {
    int length;
    int32_t token;
  };
  const int32_t operators[] = {a.plus, a.minus, a.times};
  const uint64_t operator_count = mult ? 3 : 2;
  auto digit = [&] { return static_cast<int32_t>(rng.below(static_cast<uint64_t>(a.modulus))); };
  std::vector<Piece> pending = {{length, 0}};
  while (!pending.empty()) {
    const Piece p = pending.back();
    pending.pop_back();
    if (p.length == 0) {
      out.push_back(p.token);
    } else if (p.length < 0) {
      out.push_back(operators[rng.below(operator_count)]);
    } else if (p.length <= 4) {
      if (p.length >= 3) out.push_back(a.open);
      if (p.length % 2 == 0) out.push_back(a.minus);
      out.push_back(digit());
      if (p.length >= 3) out.push_back(a.close);
    } else {
      const int left = static_cast<int>(rng.between(1, p.length - 4));
      out.push_back(a.open);
      pending.push_back({0, a.close});
      pending.push_back({p.length - 3 - left, 0});
      pending.push_back({-1, 0});
      pending.push_back({left, 0});
    }
  }
}

}  // namespace srbench::tasks
