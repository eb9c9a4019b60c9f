// The regular Chomsky tasks (parity_check, even_pairs, cycle_navigation, modular_arithmetic):
// vocabularies, chomsky.md's worked examples, small n, 1000s of random examples relabelled from
// the token names by another method than the generator's, and every bad parameter.
#include <catch2/catch.hpp>

#include <map>

#include "tests/tasks/tape_helpers.hpp"

using namespace srbench::tasks;
using namespace srbench::test;

namespace {

// NNCH's evaluation order (chomsky.md §3): each `-` becomes `+` with the next number negated,
// each maximal run of `*` is multiplied out, then the terms are summed; reduced mod m at the end
// (exact in int64 for the lengths used here: products of at most 10 factors below 10).
int64_t nnch_value(const Names& expr, int64_t m) {
  std::vector<int64_t> terms = {std::stoll(expr[0])};
  for (size_t i = 1; i + 1 < expr.size(); i += 2) {
    const int64_t next = std::stoll(expr[i + 1]);
    if (expr[i] == "*") terms.back() *= next;
    else terms.push_back(expr[i] == "-" ? -next : next);
  }
  int64_t sum = 0;
  for (const int64_t t : terms) sum += t;
  return ((sum % m) + m) % m;
}

}  // namespace

TEST_CASE("chomsky regular: vocabularies in NNCH's order", "[tasks][chomsky]") {
  CHECK(make_task("parity_check", {})->vocab().names() == Names{"0", "1", "_", "c0", "c1"});
  CHECK(make_task("even_pairs", {})->vocab().names() == Names{"0", "1", "_", "c0", "c1"});
  CHECK(make_task("cycle_navigation", {})->vocab().names() ==
        Names{"-1", "0", "+1", "_", "c0", "c1", "c2", "c3", "c4"});
  CHECK(make_task("cycle_navigation", {{"cycle_length", "2"}})->vocab().names() == Names{"-1", "0", "+1", "_", "c0", "c1"});
  CHECK(make_task("modular_arithmetic", {})->vocab().names() == Names{"0", "1", "2", "3", "4", "+", "-", "*", "_"});
  // All three operators whatever `operators`; the output classes are the numbers.
  const auto plus_only = make_tape_task("modular_arithmetic", {{"operators", "+"}, {"modulus", "3"}});
  CHECK(plus_only->vocab().names() == Names{"0", "1", "2", "+", "-", "*", "_"});
  CHECK(plus_only->output_classes() == std::vector<int32_t>{0, 1, 2});
  CHECK(make_tape_task("cycle_navigation", {})->output_classes() == std::vector<int32_t>{4, 5, 6, 7, 8});
}

TEST_CASE("chomsky regular: the worked examples of chomsky.md", "[tasks][chomsky]") {
  CHECK(worked_example(*make_tape_task("parity_check"), {"1", "0", "1", "1", "0"}) == Names{"c1"});
  CHECK(worked_example(*make_tape_task("even_pairs"), {"0", "0", "1", "1", "1", "0"}) == Names{"c0"});
  CHECK(worked_example(*make_tape_task("even_pairs"), {"0", "0", "1", "1", "1", "1"}) == Names{"c1"});
  CHECK(worked_example(*make_tape_task("even_pairs"), {"1"}) == Names{"c0"});
  CHECK(worked_example(*make_tape_task("cycle_navigation"), {"+1", "-1", "0", "-1", "-1"}) == Names{"c3"});
  CHECK(worked_example(*make_tape_task("cycle_navigation", {{"cycle_length", "7"}}), {"-1", "-1"}) == Names{"c5"});
  const auto mod = make_tape_task("modular_arithmetic");
  CHECK(worked_example(*mod, {"1", "+", "2", "*", "3"}) == Names{"2"});
  CHECK(worked_example(*mod, {"1", "-", "1", "-", "1"}) == Names{"4"});
  CHECK(worked_example(*mod, {"0", "*", "1", "+", "4", "*", "3", "-", "2"}) == Names{"0"});
  CHECK(worked_example(*mod, {"3"}) == Names{"3"});
  // m = 1000: 999 * 999 - 2 = 998,001 - 2 → 999 (exact, no overflow; D4).
  CHECK(worked_example(*make_tape_task("modular_arithmetic", {{"modulus", "1000"}}), {"999", "*", "999", "-", "2"}) ==
        Names{"999"});
}

TEST_CASE("modular_arithmetic: odd-length expressions (n even gives n-1 tokens), T = L + 1", "[tasks][chomsky]") {
  const auto task = make_tape_task("modular_arithmetic");
  for (int n = 1; n <= 41; ++n) {
    INFO("n = " << n);
    const int L = n % 2 == 1 ? n : n - 1;
    CHECK(task->input_length(n) == L);
    CHECK(task->max_sequence_length(n) == L + 1);
    const Example ex = task->sample(3, Stream::Train, static_cast<uint64_t>(n), n);
    CHECK(ex.input_length == L);
    CHECK(static_cast<int>(ex.tokens.size()) == L + 1);
  }
  // n = 2 and n = 1 both give one number and a blank.
  const Example two = task->sample(0, Stream::Eval, 5, 2);
  CHECK(token_names(*task, two).back() == "_");
  CHECK(two.tokens.size() == 2);
  CHECK(target_names(*task, two) == Names{"", token_names(*task, two)[0]});
}

TEST_CASE("chomsky regular: 1000s of random examples relabelled from the token names", "[tasks][chomsky]") {
  const auto parity = make_task("parity_check", {}), pairs = make_task("even_pairs", {});
  const auto cycle = make_task("cycle_navigation", {{"cycle_length", "6"}});
  const auto mod = make_task("modular_arithmetic", {{"modulus", "7"}});
  for (uint64_t i = 0; i < 1200; ++i) {
    const int n = 1 + static_cast<int>(i % 40);
    INFO("#" << i << " n = " << n);
    {
      const Example ex = parity->sample(1, Stream::Train, i, n);
      const Names x = input_tape(*parity, ex);
      const auto ones = std::count(x.begin(), x.end(), "1");
      REQUIRE(std::count(x.begin(), x.end(), "0") + ones == n);
      CHECK(blank_targets(*parity, ex) == Names{ones % 2 ? "c1" : "c0"});
    }
    {
      const Example ex = pairs->sample(1, Stream::Train, i, n);
      const Names x = input_tape(*pairs, ex);
      REQUIRE(static_cast<int>(x.size()) == n);
      CHECK(blank_targets(*pairs, ex) == Names{x.front() != x.back() ? "c1" : "c0"});
    }
    {
      const Example ex = cycle->sample(1, Stream::Train, i, n);
      int position = 0;
      for (const auto& a : input_tape(*cycle, ex)) {
        REQUIRE((a == "-1" || a == "0" || a == "+1"));
        position += std::stoi(a);
      }
      CHECK(blank_targets(*cycle, ex) == Names{"c" + std::to_string(((position % 6) + 6) % 6)});
    }
    {
      const Example ex = mod->sample(1, Stream::Train, i, n);
      const Names x = input_tape(*mod, ex);
      REQUIRE(x.size() % 2 == 1);
      for (size_t t = 0; t < x.size(); ++t)
        REQUIRE((t % 2 == 0 ? (x[t].size() == 1 && x[t][0] >= '0' && x[t][0] <= '6')
                            : (x[t] == "+" || x[t] == "-" || x[t] == "*")));
      if (x.size() <= 19) CHECK(blank_targets(*mod, ex) == Names{std::to_string(nnch_value(x, 7))});
    }
  }
}

TEST_CASE("modular_arithmetic: operators drawn uniformly from `operators` only", "[tasks][chomsky]") {
  const auto task = make_task("modular_arithmetic", {{"operators", "*-"}});
  std::map<std::string, int> count;
  int total = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    const Names x = input_tape(*task, task->sample(2, Stream::Train, i, 41));
    for (size_t t = 1; t < x.size(); t += 2) ++count[x[t]], ++total;
  }
  CHECK(count.count("+") == 0);
  // 8,000 draws: sd of a frequency 0.0056, so 0.03 is over 5 sd.
  CHECK(static_cast<double>(count["*"]) / total == Approx(0.5).margin(0.03));
}

TEST_CASE("chomsky regular: bad parameters are errors naming the task and the parameter", "[tasks][chomsky]") {
  check_bad_param("cycle_navigation", {{"cycle_length", "1"}}, "cycle_length", "outside 2..1000");
  check_bad_param("cycle_navigation", {{"cycle_length", "1001"}}, "cycle_length", "outside 2..1000");
  check_bad_param("cycle_navigation", {{"cycle_length", "five"}}, "cycle_length", "expected an integer");
  check_bad_param("modular_arithmetic", {{"modulus", "1"}}, "modulus", "outside 2..1000");
  check_bad_param("modular_arithmetic", {{"modulus", "1001"}}, "modulus", "outside 2..1000");
  check_bad_param("modular_arithmetic", {{"operators", ""}}, "operators", "is empty");
  check_bad_param("modular_arithmetic", {{"operators", "+-+"}}, "operators", "repeats '+'");
  check_bad_param("modular_arithmetic", {{"operators", "+/"}}, "operators", "holds '/'");
  check_bad_param("parity_check", {{"p1", "0.5"}}, "p1", "takes no parameters");
  check_bad_param("even_pairs", {{"n", "3"}}, "n", "unknown parameter");
  CHECK_NOTHROW(make_task("modular_arithmetic", {{"modulus", "1000"}, {"operators", "-"}}));
  CHECK_NOTHROW(make_task("cycle_navigation", {{"cycle_length", "1000"}}));
}
