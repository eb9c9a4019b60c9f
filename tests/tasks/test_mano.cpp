#include <catch2/catch.hpp>
#include <map>

#include "tasks/mano.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

bool is_operator(const std::string& name) { return name == "+" || name == "-" || name == "*"; }

// Evaluates a prefix expression given by names, left to right: operators and numbers are pushed;
// whenever the top two entries are numbers over an operator, the three are replaced by the result.
int64_t evaluate_names(const std::vector<std::string>& expr, int64_t p) {
  struct Entry {
    bool is_number;
    int64_t value;
    std::string op;
  };
  std::vector<Entry> stack;
  for (const auto& name : expr) {
    if (is_operator(name)) {
      stack.push_back({false, 0, name});
      continue;
    }
    stack.push_back({true, std::stoll(name), ""});
    while (stack.size() >= 3 && stack[stack.size() - 1].is_number && stack[stack.size() - 2].is_number &&
           !stack[stack.size() - 3].is_number) {
      const int64_t right = stack.back().value;
      stack.pop_back();
      const int64_t left = stack.back().value;
      stack.pop_back();
      const std::string op = stack.back().op;
      const int64_t raw = op == "+" ? left + right : op == "-" ? left - right : left * right;
      stack.back() = {true, ((raw % p) + p) % p, ""};
    }
  }
  REQUIRE(stack.size() == 1);
  REQUIRE(stack[0].is_number);
  return stack[0].value;
}

// Number of operators in the root's left subtree of a prefix expression.
int left_operators(const std::vector<std::string>& expr) {
  int open = 1, ops = 0;  // subtrees still to be completed
  for (size_t t = 1; open > 0; ++t) {
    if (is_operator(expr.at(t))) ++ops, ++open;
    else --open;
  }
  return ops;
}

void require_error(const RawParams& params, const std::string& param) {
  try {
    make_task("mano", params);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "mano");
    CHECK(e.param() == param);
  }
}

}  // namespace

TEST_CASE("mano: hand-worked examples", "[tasks][mano]") {
  const auto task = make_task("mano", {});
  const auto& m = dynamic_cast<const ManoTask&>(*task);
  REQUIRE(m.vocab().size() == 3 + 23 + 1);
  CHECK(m.vocab().name(0) == "+");
  CHECK(m.vocab().name(1) == "-");
  CHECK(m.vocab().name(2) == "*");
  CHECK(m.vocab().name(m.number_token(0)) == "0");
  CHECK(m.vocab().name(m.number_token(22)) == "22");
  CHECK(m.vocab().name(26) == "=");
  const int32_t plus = 0, minus = 1, times = 2;
  auto num = [&](int v) { return m.number_token(v); };

  // * + 3 4 5 = → (3+4)·5 = 35 ≡ 12 (mod 23)
  Example ex;
  m.format({times, plus, num(3), num(4), num(5)}, ex);
  CHECK(token_names(m, ex) == V{"*", "+", "3", "4", "5", "="});
  CHECK(target_names(m, ex) == V{"", "", "", "", "", "12"});

  // - 2 7 = → -5 ≡ 18: the label is non-negative
  ex.clear();
  m.format({minus, num(2), num(7)}, ex);
  CHECK(target_names(m, ex) == V{"", "", "", "18"});

  // - * 4 6 + 1 - 9 3 = → 24 - (1 + 6) = 17
  ex.clear();
  m.format({minus, times, num(4), num(6), plus, num(1), minus, num(9), num(3)}, ex);
  CHECK(token_names(m, ex) == V{"-", "*", "4", "6", "+", "1", "-", "9", "3", "="});
  CHECK(target_names(m, ex).back() == "17");
  CHECK(m.evaluate({num(22)}) == 22);
}

TEST_CASE("mano: 1000 random examples agree with a stack evaluation of the names", "[tasks][mano]") {
  for (int p : {2, 23, 997}) {
    INFO("p " << p);
    const auto task = make_task("mano", {{"p", std::to_string(p)}});
    for (uint64_t i = 0; i < 1000; ++i) {
      const int n = 1 + static_cast<int>(i % 40);
      const Example ex = task->sample(5, Stream::Train, i, n);
      const auto tok = token_names(*task, ex), tgt = target_names(*task, ex);
      REQUIRE(tok.size() == static_cast<size_t>(2 * n + 2));
      REQUIRE(tok.back() == "=");
      const std::vector<std::string> expr(tok.begin(), tok.end() - 1);
      REQUIRE(std::count_if(expr.begin(), expr.end(), is_operator) == n);
      for (size_t t = 0; t + 1 < tgt.size(); ++t) REQUIRE(tgt[t].empty());
      REQUIRE(tgt.back() == std::to_string(evaluate_names(expr, p)));
    }
  }
}

TEST_CASE("mano: tree shape, operators and leaves are uniform as specified", "[tasks][mano]") {
  const auto task = make_task("mano", {{"p", "5"}});
  // n = 3: the root's left subtree holds 0, 1 or 2 operators, each with probability 1/3.
  std::vector<int> left_counts(3, 0);
  std::map<std::string, int> ops, leaves;
  const int draws = 6000;
  for (uint64_t i = 0; i < draws; ++i) {
    const auto tok = token_names(*task, task->sample(9, Stream::Train, i, 3));
    left_counts.at(static_cast<size_t>(left_operators(tok))) += 1;
    for (size_t t = 0; t + 1 < tok.size(); ++t) (is_operator(tok[t]) ? ops : leaves)[tok[t]] += 1;
  }
  for (int c : left_counts) CHECK(c / double(draws) == Approx(1.0 / 3).margin(0.03));
  REQUIRE(ops.size() == 3);
  for (const auto& [name, c] : ops) CHECK(c / (3.0 * draws) == Approx(1.0 / 3).margin(0.02));
  REQUIRE(leaves.size() == 5);
  for (const auto& [name, c] : leaves) CHECK(c / (4.0 * draws) == Approx(0.2).margin(0.02));
}

TEST_CASE("mano: long expressions (deep trees) do not exhaust the stack", "[tasks][mano]") {
  const auto task = make_task("mano", {{"p", "7"}});
  for (int n : {3000, 200000}) {
    const Example ex = task->sample(1, Stream::Eval, 0, n);
    const auto tok = token_names(*task, ex);
    REQUIRE(tok.size() == static_cast<size_t>(2 * n + 2));
    CHECK(target_names(*task, ex).back() == std::to_string(evaluate_names({tok.begin(), tok.end() - 1}, 7)));
  }
  // A left comb of 100000 operators: + + + … 1 1 … (depth 100000).
  const auto& m = dynamic_cast<const ManoTask&>(*task);
  std::vector<int32_t> comb(100000, 0);
  comb.insert(comb.end(), 100001, m.number_token(1));
  CHECK(m.evaluate(comb) == 100001 % 7);
}

TEST_CASE("mano: bad parameters are errors naming them", "[tasks][mano]") {
  for (const char* p : {"1", "0", "1001", "2.5", "many"}) require_error({{"p", p}}, "p");
  CHECK_NOTHROW(make_task("mano", {{"p", "1000"}}));
  CHECK_NOTHROW(make_task("mano", {{"p", "2"}}));
}
