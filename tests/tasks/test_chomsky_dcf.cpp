// The deterministic context-free Chomsky tasks (stack_manipulation, reverse_string,
// modular_arithmetic_brackets, solve_equation): vocabularies, chomsky.md's worked examples, small
// n, 1000s of random examples relabelled from the token names (an explicit stack of names, a
// recursive parser of the grammar G, solving an equation by trying every digit), and every bad
// parameter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "tests/tasks/tape_helpers.hpp"

using namespace srbench::tasks;
using namespace srbench::test;

namespace {

bool is_digit(const std::string& s, int m) { return s.size() == 1 && s[0] >= '0' && s[0] < '0' + m; }

// A recursive parser that accepts exactly the grammar G of chomsky.md §3 and evaluates it mod m:
// E := d | - d | ( d ) | ( - d ) | ( E op E ). `x` stands for the digit x_value. It records the
// left operand's length of the outermost ( E op E ) and whether `*` occurs.
struct GrammarParser {
  const Names& t;
  int m;
  int x_value = -1;
  size_t pos = 0;
  bool saw_times = false;
  int root_left_length = -1;

  int digit() {
    REQUIRE(pos < t.size());
    const std::string& s = t[pos++];
    if (s == "x" && x_value >= 0) return x_value;
    REQUIRE(is_digit(s, m));
    return s[0] - '0';
  }
  int64_t expr(int depth = 0) {
    REQUIRE(pos < t.size());
    if (t[pos] == "-") return ++pos, -digit();
    if (t[pos] != "(") return digit();
    ++pos;
    REQUIRE(pos < t.size());
    int64_t v;
    const size_t start = pos;
    if (t[pos] == "-" && pos + 2 < t.size() && t[pos + 2] == ")") {
      ++pos;
      v = -digit();
    } else if (pos + 1 < t.size() && t[pos + 1] == ")") {
      v = digit();
    } else {
      const int64_t left = expr(depth + 1);
      if (depth == 0) root_left_length = static_cast<int>(pos - start);
      REQUIRE(pos < t.size());
      const std::string op = t[pos++];
      const int64_t right = expr(depth + 1);
      REQUIRE((op == "+" || op == "-" || op == "*"));
      saw_times |= op == "*";
      v = op == "+" ? left + right : op == "-" ? left - right : left * right % m;
    }
    REQUIRE(pos < t.size());
    REQUIRE(t[pos++] == ")");
    return v % m;
  }
  // The value mod m in 0..m-1; the whole of `t` must be one expression.
  int value() {
    const int64_t v = expr();
    REQUIRE(pos == t.size());
    return static_cast<int>(((v % m) + m) % m);
  }
};

int grammar_value(const Names& expr, int m, int x_value = -1) {
  GrammarParser p{expr, m, x_value};
  return p.value();
}

}  // namespace

TEST_CASE("chomsky dcf: vocabularies in NNCH's order", "[tasks][chomsky]") {
  CHECK(make_task("stack_manipulation", {})->vocab().names() == Names{"0", "1", "pop", "push0", "push1", "_", "<eos>"});
  CHECK(make_tape_task("stack_manipulation")->output_classes() == std::vector<int32_t>{0, 1, 6});
  CHECK(make_task("reverse_string", {})->vocab().names() == Names{"0", "1", "_"});
  CHECK(make_task("reverse_string", {{"vocab_size", "4"}})->vocab().names() == Names{"0", "1", "2", "3", "_"});
  CHECK(make_task("modular_arithmetic_brackets", {})->vocab().names() ==
        Names{"0", "1", "2", "3", "4", "+", "-", "*", "(", ")", "_"});
  CHECK(make_task("modular_arithmetic_brackets", {{"mult", "false"}, {"modulus", "2"}})->vocab().names() ==
        Names{"0", "1", "+", "-", "*", "(", ")", "_"});
  CHECK(make_task("solve_equation", {})->vocab().names() ==
        Names{"0", "1", "2", "3", "4", "+", "-", "(", ")", "x", "=", "_"});
  CHECK(make_tape_task("solve_equation", {{"modulus", "10"}})->output_classes().size() == 10);
}

TEST_CASE("chomsky dcf: the worked examples of chomsky.md", "[tasks][chomsky]") {
  const auto stack = make_tape_task("stack_manipulation");
  CHECK(worked_example(*stack, {"0", "1", "1", "0", "push1", "pop", "pop"}) ==
        Names{"1", "1", "0", "<eos>", "", "", "", ""});
  CHECK(worked_example(*stack, {"1", "1", "0", "pop", "pop", "pop"}) == Names{"<eos>", "", "", "", "", "", ""});
  CHECK(worked_example(*stack, {"1"}) == Names{"1", "<eos>"});                            // n = 1
  CHECK(worked_example(*stack, {"0", "pop", "pop"}) == Names{"<eos>", "", "", ""});       // pop on empty: nothing
  CHECK(worked_example(*stack, {"0", "push1", "push0"}) == Names{"0", "1", "0", "<eos>"});  // the stack never exceeds n
  CHECK(worked_example(*make_tape_task("reverse_string"), {"0", "1", "1", "0", "1", "0"}) ==
        Names{"0", "1", "0", "1", "1", "0"});
  CHECK(worked_example(*make_tape_task("modular_arithmetic_brackets"), {"(", "-", "2", "*", "-", "3", ")"}) ==
        Names{"1"});
  CHECK(worked_example(*make_tape_task("modular_arithmetic_brackets"), {"-", "2"}) == Names{"3"});
  CHECK(worked_example(*make_tape_task("modular_arithmetic_brackets"), {"(", "-", "2", "+", "3", ")"}) == Names{"1"});
  const auto solve = make_tape_task("solve_equation");
  CHECK(worked_example(*solve, {"(", "4", "-", "(", "x", ")", ")", "=", "1"}) == Names{"3"});
  CHECK(worked_example(*solve, {"0", "0"}) == Names{"0"});  // n = 2: NNCH's placeholder
  CHECK(worked_example(*solve, {"0"}) == Names{"0"});
  CHECK(worked_example(*solve, {"-", "x", "=", "1"}) == Names{"4"});
  CHECK(worked_example(*solve, {"(", "-", "x", ")", "=", "0"}) == Names{"0"});
  CHECK(worked_example(*solve, {"(", "(", "-", "x", ")", "-", "(", "2", "-", "-", "4", ")", ")", "=", "3"}) ==
        Names{"1"});  // -x - 6 ≡ 3 → x ≡ -9 ≡ 1
}

TEST_CASE("chomsky dcf: small n", "[tasks][chomsky]") {
  const auto stack = make_task("stack_manipulation", {}), solve = make_task("solve_equation", {});
  for (uint64_t i = 0; i < 50; ++i) {
    const Example s = stack->sample(0, Stream::Train, i, 1);
    const Names x = input_tape(*stack, s);
    REQUIRE(x.size() == 1);
    REQUIRE((x[0] == "0" || x[0] == "1"));
    CHECK(blank_targets(*stack, s) == Names{x[0], "<eos>"});
    for (int n : {1, 2}) {
      const Example e = solve->sample(0, Stream::Train, i, n);
      CHECK(token_names(*solve, e) == (n == 1 ? Names{"0", "_"} : Names{"0", "0", "_"}));
      CHECK(blank_targets(*solve, e) == Names{"0"});
    }
  }
  // G(1..4) as the grammar fixes them.
  const auto brackets = make_task("modular_arithmetic_brackets", {});
  for (uint64_t i = 0; i < 50; ++i) {
    const Names g1 = input_tape(*brackets, brackets->sample(0, Stream::Train, i, 1));
    const Names g2 = input_tape(*brackets, brackets->sample(0, Stream::Train, i, 2));
    const Names g3 = input_tape(*brackets, brackets->sample(0, Stream::Train, i, 3));
    const Names g4 = input_tape(*brackets, brackets->sample(0, Stream::Train, i, 4));
    CHECK(is_digit(g1[0], 5));
    CHECK((g2[0] == "-" && is_digit(g2[1], 5)));
    CHECK((g3[0] == "(" && is_digit(g3[1], 5) && g3[2] == ")"));
    CHECK((g4[0] == "(" && g4[1] == "-" && is_digit(g4[2], 5) && g4[3] == ")"));
  }
}

TEST_CASE("chomsky dcf: 1000s of random examples relabelled from the token names", "[tasks][chomsky]") {
  const auto stack = make_task("stack_manipulation", {});
  const auto reverse = make_task("reverse_string", {{"vocab_size", "3"}});
  const auto brackets = make_task("modular_arithmetic_brackets", {{"modulus", "7"}});
  const auto no_mult = make_task("modular_arithmetic_brackets", {{"mult", "false"}});
  const auto solve = make_task("solve_equation", {{"modulus", "10"}});
  int times_seen = 0;
  for (uint64_t i = 0; i < 1200; ++i) {
    const int n = 1 + static_cast<int>(i % 40);
    INFO("#" << i << " n = " << n);
    {
      const Example ex = stack->sample(5, Stream::Train, i, n);
      const Names x = input_tape(*stack, ex);
      REQUIRE(static_cast<int>(x.size()) == n);
      size_t k = 0;
      while (k < x.size() && (x[k] == "0" || x[k] == "1")) ++k;
      REQUIRE(k >= 1);
      if (n >= 2) REQUIRE(k <= static_cast<size_t>(n - 1));
      Names st(x.begin(), x.begin() + static_cast<ptrdiff_t>(k));
      for (size_t t = k; t < x.size(); ++t) {
        REQUIRE((x[t] == "pop" || x[t] == "push0" || x[t] == "push1"));
        if (x[t] == "pop") {
          if (!st.empty()) st.pop_back();
        } else {
          st.push_back(x[t] == "push0" ? "0" : "1");
        }
      }
      Names expected(st.rbegin(), st.rend());
      expected.push_back("<eos>");
      expected.resize(static_cast<size_t>(n) + 1, "");
      CHECK(blank_targets(*stack, ex) == expected);
    }
    {
      const Example ex = reverse->sample(5, Stream::Train, i, n);
      Names x = input_tape(*reverse, ex);
      std::reverse(x.begin(), x.end());
      CHECK(blank_targets(*reverse, ex) == x);
    }
    {
      const Example ex = brackets->sample(5, Stream::Train, i, n);
      const Names x = input_tape(*brackets, ex);
      REQUIRE(static_cast<int>(x.size()) == n);
      GrammarParser p{x, 7};
      CHECK(blank_targets(*brackets, ex) == Names{std::to_string(p.value())});
      times_seen += p.saw_times;
      const Names y = input_tape(*no_mult, no_mult->sample(5, Stream::Train, i, n));
      GrammarParser q{y, 5};
      q.value();
      CHECK_FALSE(q.saw_times);
    }
    {
      const Example ex = solve->sample(5, Stream::Train, i, n);
      const Names x = input_tape(*solve, ex);
      REQUIRE(static_cast<int>(x.size()) == n);
      if (n <= 2) continue;
      REQUIRE(std::count(x.begin(), x.end(), "x") == 1);
      REQUIRE(x[x.size() - 2] == "=");
      REQUIRE(is_digit(x.back(), 10));
      const Names lhs(x.begin(), x.end() - 2);
      std::vector<int> solutions;
      for (int d = 0; d < 10; ++d)
        if (grammar_value(lhs, 10, d) == x.back()[0] - '0') solutions.push_back(d);
      REQUIRE(solutions.size() == 1);
      CHECK(blank_targets(*solve, ex) == Names{std::to_string(solutions[0])});
      GrammarParser p{lhs, 10, 0};
      p.value();
      CHECK_FALSE(p.saw_times);
    }
  }
  CHECK(times_seen > 300);  // mult = true draws `*`
}

TEST_CASE("modular_arithmetic_brackets: G's split l is uniform in 1..L-4", "[tasks][chomsky]") {
  const auto task = make_task("modular_arithmetic_brackets", {});
  const int L = 11;
  std::map<int, int> count;
  const int draws = 6000;
  for (uint64_t i = 0; i < draws; ++i) {
    const Names x = input_tape(*task, task->sample(8, Stream::Train, i, L));
    GrammarParser p{x, 5};
    p.value();
    ++count[p.root_left_length];
  }
  REQUIRE(count.size() == static_cast<size_t>(L - 4));
  // 1000 expected per value, sd ≈ 29; 150 is above 5 sd.
  for (int l = 1; l <= L - 4; ++l) CHECK(std::abs(count[l] - draws / (L - 4)) < 150);
}

TEST_CASE("chomsky dcf: long inputs (n = 500, 5000) are generated and labelled", "[tasks][chomsky]") {
  for (const char* name : {"modular_arithmetic_brackets", "solve_equation", "stack_manipulation"})
    for (int n : {500, 5000}) {
      INFO(name << " n = " << n);
      const auto task = make_task(name, {});
      const Example ex = task->sample(1, Stream::Eval, 0, n);
      CHECK(static_cast<int>(ex.tokens.size()) == task->max_sequence_length(n));
      CHECK(ex.input_length == n);
    }
}

TEST_CASE("chomsky dcf: bad parameters are errors naming the task and the parameter", "[tasks][chomsky]") {
  for (const char* task : {"modular_arithmetic_brackets", "solve_equation"}) {
    check_bad_param(task, {{"modulus", "1"}}, "modulus", "outside 2..10");
    check_bad_param(task, {{"modulus", "11"}}, "modulus", "outside 2..10");
    CHECK_NOTHROW(make_task(task, {{"modulus", "10"}}));
  }
  check_bad_param("modular_arithmetic_brackets", {{"mult", "maybe"}}, "mult", "expected true or false");
  check_bad_param("solve_equation", {{"mult", "true"}}, "mult", "unknown parameter");
  check_bad_param("reverse_string", {{"vocab_size", "1"}}, "vocab_size", "outside 2..256");
  check_bad_param("reverse_string", {{"vocab_size", "257"}}, "vocab_size", "outside 2..256");
  check_bad_param("stack_manipulation", {{"vocab_size", "2"}}, "vocab_size", "takes no parameters");
}
