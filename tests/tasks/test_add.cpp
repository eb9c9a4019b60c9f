// add: hand-worked sums, 1000s of random sums re-added by schoolbook arithmetic on digit strings
// (and by __int128 where the numbers are small), operand shapes and digit frequencies, and
// every bad parameter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "tasks/add.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

// Schoolbook addition of two numbers written most-significant digit first, in `base`.
std::string schoolbook_sum(const std::string& a, const std::string& b, int base) {
  std::string out;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const int da = i < a.size() ? a[a.size() - 1 - i] - '0' : 0;
    const int db = i < b.size() ? b[b.size() - 1 - i] - '0' : 0;
    out.insert(out.begin(), static_cast<char>('0' + (da + db + carry) % base));
    carry = (da + db + carry) / base;
  }
  if (carry) out.insert(out.begin(), static_cast<char>('0' + carry));
  const size_t nonzero = out.find_first_not_of('0');
  return nonzero == std::string::npos ? "0" : out.substr(nonzero);
}

__int128 value(const std::string& msd_first, int base) {
  __int128 v = 0;
  for (const char c : msd_first) v = v * base + (c - '0');
  return v;
}

Example formatted(const Task& task, const std::vector<int>& a, const std::vector<int>& b) {
  Example ex;
  dynamic_cast<const AddTask&>(task).format(a, b, ex);
  return ex;
}

void check_error(const RawParams& params, const std::string& param) {
  INFO("expect an error naming " << param);
  try {
    make_task("add", params)->sample(0, Stream::Train, 0, 3);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "add");
    CHECK(e.param() == param);
  }
}

}  // namespace

TEST_CASE("add: vocabulary and hand-worked sums", "[tasks][add]") {
  CHECK(make_task("add", {})->vocab().names() == V{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "+", "=", "<eos>"});
  CHECK(make_task("add", {{"base", "2"}})->vocab().names() == V{"0", "1", "+", "=", "<eos>"});
  {
    // 12 + 99 = 111, little-endian: 2 1 + 9 9 = 1 1 1 <eos>
    const auto task = make_task("add", {});
    const Example ex = formatted(*task, {2, 1}, {9, 9});
    CHECK(token_names(*task, ex) == V{"2", "1", "+", "9", "9", "=", "1", "1", "1", "<eos>"});
    CHECK(target_names(*task, ex) == V{"", "", "", "", "", "1", "1", "1", "<eos>", ""});
  }
  {
    // 12 + 99 = 111, big-endian: 1 2 + 9 9 = 1 1 1 <eos>
    const auto task = make_task("add", {{"little_endian", "false"}});
    const Example ex = formatted(*task, {2, 1}, {9, 9});
    CHECK(token_names(*task, ex) == V{"1", "2", "+", "9", "9", "=", "1", "1", "1", "<eos>"});
    CHECK(target_names(*task, ex) == V{"", "", "", "", "", "1", "1", "1", "<eos>", ""});
  }
  {
    // 35 + 41 = 76 big-endian: the answer's digit order differs from little-endian.
    const auto big = make_task("add", {{"little_endian", "false"}});
    CHECK(token_names(*big, formatted(*big, {5, 3}, {1, 4})) == V{"3", "5", "+", "4", "1", "=", "7", "6", "<eos>"});
    const auto little = make_task("add", {});
    CHECK(token_names(*little, formatted(*little, {5, 3}, {1, 4})) == V{"5", "3", "+", "1", "4", "=", "6", "7", "<eos>"});
  }
  {
    // base 2: 1 + 1 = 10, written 0 1 little-endian
    const auto task = make_task("add", {{"base", "2"}});
    const Example ex = formatted(*task, {1}, {1});
    CHECK(token_names(*task, ex) == V{"1", "+", "1", "=", "0", "1", "<eos>"});
    CHECK(target_names(*task, ex) == V{"", "", "", "0", "1", "<eos>", ""});
  }
  {
    // 0 + 0 = 0 is written `0`; 999 + 1 = 1000 (mixed lengths) carries through.
    const auto task = make_task("add", {{"mixed_lengths", "true"}});
    CHECK(token_names(*task, formatted(*task, {0}, {0})) == V{"0", "+", "0", "=", "0", "<eos>"});
    const Example ex = formatted(*task, {9, 9, 9}, {1});
    CHECK(token_names(*task, ex) == V{"9", "9", "9", "+", "1", "=", "0", "0", "0", "1", "<eos>"});
    CHECK(target_names(*task, ex) == V{"", "", "", "", "", "0", "0", "0", "1", "<eos>", ""});
  }
  {
    // base 7, big-endian: 66 + 1 = 100 (48 + 1 = 49)
    const auto task = make_task("add", {{"base", "7"}, {"little_endian", "false"}});
    CHECK(token_names(*task, formatted(*task, {6, 6}, {1})) == V{"6", "6", "+", "1", "=", "1", "0", "0", "<eos>"});
  }
  CHECK(add_digits({0, 0}, {0}, 10) == std::vector<int>{0});
  CHECK(add_digits({5, 0, 0}, {5}, 10) == std::vector<int>{0, 1});
}

TEST_CASE("add: 1000s of random sums agree with schoolbook arithmetic on the digits", "[tasks][add]") {
  for (int base : {2, 3, 7, 10})
    for (bool little : {true, false})
      for (bool mixed : {false, true}) {
        const auto task = make_task("add", {{"base", std::to_string(base)},
                                            {"little_endian", little ? "true" : "false"},
                                            {"mixed_lengths", mixed ? "true" : "false"}});
        std::vector<long> lengths(31, 0);
        std::vector<long> low_digits(10, 0), top_digits(10, 0);
        for (uint64_t i = 0; i < 1000; ++i) {
          INFO("base=" << base << " little=" << little << " mixed=" << mixed << " #" << i);
          const int n = i % 5 == 0 ? 100 + static_cast<int>(i % 7) : 1 + static_cast<int>(i % 30);
          const Example ex = task->sample(2, Stream::Train, i, n);
          const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
          REQUIRE(tok.size() <= static_cast<size_t>(task->max_sequence_length(n)));
          // Split `a + b = c <eos>` by name.
          const auto plus = std::find(tok.begin(), tok.end(), "+");
          const auto eq = std::find(tok.begin(), tok.end(), "=");
          REQUIRE(plus != tok.end());
          REQUIRE(eq != tok.end());
          REQUIRE(plus < eq);
          REQUIRE(tok.back() == "<eos>");
          REQUIRE(std::count(tok.begin(), tok.end(), "<eos>") == 1);
          auto number = [&](auto from, auto to) {  // written digits → most-significant first
            std::string s;
            for (auto it = from; it != to; ++it) {
              REQUIRE(it->size() == 1);
              REQUIRE((*it)[0] >= '0');
              REQUIRE((*it)[0] < '0' + base);
              s += *it;
            }
            if (little) std::reverse(s.begin(), s.end());
            return s;
          };
          const std::string a = number(tok.begin(), plus), b = number(plus + 1, eq), c = number(eq + 1, tok.end() - 1);
          for (const std::string* x : {&a, &b}) {
            if (mixed) {
              REQUIRE(x->size() >= 1);
              REQUIRE(static_cast<int>(x->size()) <= n);
            } else {
              REQUIRE(static_cast<int>(x->size()) == n);
            }
            if (x->size() > 1) CHECK(x->front() != '0');
            if (n <= 30) lengths[x->size()] += 1;
            for (size_t d = 1; d < x->size(); ++d) low_digits[(*x)[d] - '0'] += 1;
            if (x->size() > 1) top_digits[x->front() - '0'] += 1;
          }
          CHECK(c == schoolbook_sum(a, b, base));
          if (c.size() > 1) CHECK(c.front() != '0');
          if (n * std::log2(base) < 120) CHECK(value(c, base) == value(a, base) + value(b, base));
          // Targets: next token from `=` to c's last digit; nothing else scored.
          const size_t e = static_cast<size_t>(eq - tok.begin());
          for (size_t t = 0; t < tok.size(); ++t) CHECK(tgt[t] == (t >= e && t + 1 < tok.size() ? tok[t + 1] : ""));
        }
        INFO("base=" << base << " little=" << little << " mixed=" << mixed);
        long low_total = 0, top_total = 0;
        for (int d = 0; d < base; ++d) low_total += low_digits[d], top_total += top_digits[d];
        for (int d = 0; d < base; ++d) CHECK(static_cast<double>(low_digits[d]) / low_total == Approx(1.0 / base).margin(0.01));
        CHECK(top_digits[0] == 0);
        for (int d = 1; d < base; ++d)
          CHECK(static_cast<double>(top_digits[d]) / top_total == Approx(1.0 / (base - 1)).margin(0.03));
        if (mixed) {
          // n = 30 examples (i % 30 == 29, i % 5 != 0): each length 1..30 equally likely.
          long short_ops = 0, all_ops = 0;
          for (int len = 1; len <= 30; ++len) all_ops += lengths[len], short_ops += len <= 15 ? lengths[len] : 0;
          CHECK(lengths[1] > 0);
          CHECK(static_cast<double>(short_ops) / all_ops < 0.85);  // not all short (fixed n would give 1.0 below n)
        }
      }
}

TEST_CASE("add: mixed_lengths draws each operand's length uniformly in 1..n", "[tasks][add]") {
  const auto task = make_task("add", {{"mixed_lengths", "true"}});
  const int n = 8;
  std::vector<long> count(n + 1, 0);
  long same = 0;
  for (uint64_t i = 0; i < 4000; ++i) {
    const V tok = token_names(*task, task->sample(6, Stream::Eval, i, n));
    const auto plus = std::find(tok.begin(), tok.end(), "+"), eq = std::find(tok.begin(), tok.end(), "=");
    const long la = plus - tok.begin(), lb = eq - plus - 1;
    count[la] += 1, count[lb] += 1, same += la == lb;
  }
  for (int len = 1; len <= n; ++len) CHECK(static_cast<double>(count[len]) / 8000 == Approx(1.0 / n).margin(0.015));
  CHECK(static_cast<double>(same) / 4000 == Approx(1.0 / n).margin(0.02));  // independent lengths
}

TEST_CASE("add: bad parameters are errors naming them", "[tasks][add]") {
  check_error({{"base", "11"}}, "base");
  check_error({{"base", "1"}}, "base");
  check_error({{"base", "16"}}, "base");
  check_error({{"base", "ten"}}, "base");
  check_error({{"little_endian", "sometimes"}}, "little_endian");
  check_error({{"mixed_lengths", "2"}}, "mixed_lengths");
  check_error({{"carry", "true"}}, "carry");
  try {
    make_task("add", {})->sample(0, Stream::Train, 0, 0);
    FAIL("n = 0 accepted");
  } catch (const TaskError& e) {
    CHECK(e.param() == "n");
  }
}
