// The context-sensitive Chomsky tasks (duplicate_string, missing_duplicate_string, odds_first,
// binary_addition, binary_multiplication, compute_sqrt, bucket_sort): vocabularies, chomsky.md's
// worked examples, small n, 1000s of random examples relabelled from the token names (the binary
// ones with __int128 arithmetic and a square root by bisection), long inputs, bad parameters.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "tests/tasks/tape_helpers.hpp"

using namespace srbench::tasks;
using namespace srbench::test;
using u128 = unsigned __int128;

namespace {

// The value of binary digit names; `little_endian` reads the first as the least significant.
u128 binary_value(const Names& digits, bool little_endian) {
  u128 v = 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    const std::string& d = little_endian ? digits[digits.size() - 1 - i] : digits[i];
    REQUIRE((d == "0" || d == "1"));
    v = 2 * v + (d == "1");
  }
  return v;
}

// v in binary, least significant digit first, without leading zeros ("0" for 0).
Names little_endian_names(u128 v) {
  Names out;
  do {
    out.push_back(v % 2 ? "1" : "0");
    v /= 2;
  } while (v);
  return out;
}

// ⌊√v⌋ by bisection on r² ≤ v (v < 2^120).
u128 sqrt_floor(u128 v) {
  u128 lo = 0, hi = u128(1) << 61;
  while (hi - lo > 1) {
    const u128 mid = (lo + hi) / 2;
    (mid * mid <= v ? lo : hi) = mid;
  }
  return lo;
}

// Targets the scored outputs, then nulls to `width`.
Names padded(Names out, size_t width) {
  out.resize(width, "");
  return out;
}

// The two operands around the operator `op`, with their shape checked (n ≥ 3).
std::pair<Names, Names> operands(const Names& x, const std::string& op) {
  REQUIRE(std::count(x.begin(), x.end(), op) == 1);
  const auto at = std::find(x.begin(), x.end(), op);
  const Names a(x.begin(), at), b(at + 1, x.end());
  REQUIRE(!a.empty());
  REQUIRE(!b.empty());
  REQUIRE(binary_value(a, true) != 0);  // never all zeros
  REQUIRE(binary_value(b, true) != 0);
  return {a, b};
}

}  // namespace

TEST_CASE("chomsky cs: vocabularies in NNCH's order", "[tasks][chomsky]") {
  for (const char* name : {"duplicate_string", "odds_first"})
    CHECK(make_task(name, {})->vocab().names() == Names{"0", "1", "_"});
  CHECK(make_task("bucket_sort", {})->vocab().names() == Names{"0", "1", "2", "3", "4", "_"});
  CHECK(make_task("bucket_sort", {{"vocab_size", "256"}})->vocab().name(255) == "255");
  CHECK(make_task("missing_duplicate_string", {})->vocab().names() == Names{"0", "1", "?", "#", "_"});
  CHECK(make_task("binary_addition", {})->vocab().names() == Names{"0", "1", "+", "_", "<eos>"});
  CHECK(make_task("binary_multiplication", {})->vocab().names() == Names{"0", "1", "*", "_", "<eos>"});
  CHECK(make_task("compute_sqrt", {})->vocab().names() == Names{"0", "1", "_"});
  CHECK(make_tape_task("binary_addition")->output_classes() == std::vector<int32_t>{0, 1, 4});
  CHECK(make_tape_task("missing_duplicate_string")->output_classes() == std::vector<int32_t>{0, 1});
}

TEST_CASE("chomsky cs: the worked examples of chomsky.md", "[tasks][chomsky]") {
  CHECK(worked_example(*make_tape_task("duplicate_string"), {"1", "0", "1"}) == Names{"1", "0", "1", "1", "0", "1"});
  const auto missing = make_tape_task("missing_duplicate_string");
  CHECK(worked_example(*missing, {"0", "1", "1", "0", "0", "?", "1", "0"}) == Names{"1"});
  CHECK(worked_example(*missing, {"1", "0", "1", "1", "?", "1", "#"}) == Names{"0"});
  CHECK(worked_example(*missing, {"1"}) == Names{"1"});  // n = 1: NNCH's placeholder
  CHECK(worked_example(*make_tape_task("odds_first"), {"0", "0", "1", "1", "0", "1", "0", "1"}) ==
        Names{"0", "1", "1", "1", "0", "1", "0", "0"});
  CHECK(worked_example(*make_tape_task("odds_first", {{"vocab_size", "5"}}), {"0", "1", "2", "3", "4"}) ==
        Names{"1", "3", "0", "2", "4"});
  const auto add = make_tape_task("binary_addition");
  CHECK(worked_example(*add, {"0", "0", "1", "+", "0", "1", "1", "0", "1"}) ==
        Names{"0", "1", "0", "1", "1", "<eos>", "", "", "", ""});
  CHECK(worked_example(*add, {"0", "1"}) == Names{"0", "1", "<eos>"});  // n = 2, v = 2
  CHECK(worked_example(*add, {"0", "0"}) == Names{"0", "<eos>", ""});
  CHECK(worked_example(*add, {"0"}) == Names{"0", "<eos>"});  // n = 1
  const auto mul = make_tape_task("binary_multiplication");
  CHECK(worked_example(*mul, {"0", "0", "1", "*", "0", "1", "1", "0", "1"}) ==
        Names{"0", "0", "0", "1", "1", "0", "1", "<eos>", ""});
  CHECK(worked_example(*mul, {"1", "0"}) == Names{"0", "<eos>"});  // n = 2: fixed output
  CHECK(worked_example(*mul, {"0", "1"}) == Names{"0", "<eos>"});
  CHECK(worked_example(*mul, {"0"}) == Names{"<eos>"});  // n = 1
  const auto sqrt = make_tape_task("compute_sqrt");
  CHECK(worked_example(*sqrt, {"1", "0", "0", "1", "0", "1"}) == Names{"1", "1", "0"});
  CHECK(worked_example(*sqrt, {"0", "0", "0", "0", "1", "1", "1"}) == Names{"0", "0", "1", "0"});
  CHECK(worked_example(*sqrt, {"1"}) == Names{"1"});
  CHECK(worked_example(*make_tape_task("bucket_sort"), {"1", "0", "2", "0", "4", "1", "1", "2"}) ==
        Names{"0", "0", "1", "1", "1", "2", "2", "4"});
}

TEST_CASE("chomsky cs: small n", "[tasks][chomsky]") {
  const auto add = make_task("binary_addition", {}), mul = make_task("binary_multiplication", {});
  const auto missing = make_task("missing_duplicate_string", {}), sqrt = make_task("compute_sqrt", {});
  std::map<u128, int> v_count;
  const int draws = 3000;
  for (uint64_t i = 0; i < draws; ++i) {
    CHECK(token_names(*add, add->sample(2, Stream::Train, i, 1)) == Names{"0", "_", "_"});
    CHECK(target_names(*mul, mul->sample(2, Stream::Train, i, 1)) == Names{"", "<eos>"});
    CHECK(token_names(*missing, missing->sample(2, Stream::Train, i, 1)) == Names{"1", "_"});
    CHECK(token_names(*sqrt, sqrt->sample(2, Stream::Train, i, 1)) == Names{"1", "_"});
    const Example a = add->sample(2, Stream::Train, i, 2), m = mul->sample(2, Stream::Train, i, 2);
    const Names x = input_tape(*add, a);
    REQUIRE(x.size() == 2);
    const u128 v = binary_value(x, true);
    REQUIRE(v <= 2);
    ++v_count[v];
    Names sum = little_endian_names(v);
    sum.push_back("<eos>");
    CHECK(blank_targets(*add, a) == padded(sum, 3));
    CHECK(blank_targets(*mul, m) == Names{"0", "<eos>"});
  }
  // v uniform in {0, 1, 2}: 1000 expected each, sd ≈ 26; 130 is 5 sd.
  for (u128 v = 0; v <= 2; ++v) CHECK(std::abs(v_count[v] - draws / 3) < 130);
}

TEST_CASE("chomsky cs: 1000s of random examples relabelled from the token names", "[tasks][chomsky]") {
  const auto dup = make_task("duplicate_string", {{"vocab_size", "3"}});
  const auto missing = make_task("missing_duplicate_string", {});
  const auto odds = make_task("odds_first", {{"vocab_size", "4"}});
  const auto add = make_task("binary_addition", {}), mul = make_task("binary_multiplication", {});
  const auto sqrt = make_task("compute_sqrt", {});
  const auto sort = make_task("bucket_sort", {{"vocab_size", "12"}});
  for (uint64_t i = 0; i < 1200; ++i) {
    const int n = 1 + static_cast<int>(i % 40) + (i % 7 == 0 ? 60 : 0);  // up to 100: __int128 holds it
    INFO("#" << i << " n = " << n);
    {
      const Example ex = dup->sample(6, Stream::Train, i, n);
      Names x = input_tape(*dup, ex);
      REQUIRE(static_cast<int>(x.size()) == n);
      Names xx = x;
      xx.insert(xx.end(), x.begin(), x.end());
      CHECK(blank_targets(*dup, ex) == xx);
    }
    if (n >= 2) {
      const Example ex = missing->sample(6, Stream::Train, i, n);
      Names x = input_tape(*missing, ex);
      REQUIRE(static_cast<int>(x.size()) == n);
      const size_t h = static_cast<size_t>(n / 2);
      CHECK((n % 2 == 0 || x.back() == "#"));
      x.resize(2 * h);
      REQUIRE(std::count(x.begin(), x.end(), "?") == 1);
      Names fits;  // the symbols that make the two halves equal where `?` is
      for (const std::string s : {"0", "1"}) {
        Names y = x;
        std::replace(y.begin(), y.end(), std::string("?"), s);
        if (std::equal(y.begin(), y.begin() + static_cast<ptrdiff_t>(h), y.begin() + static_cast<ptrdiff_t>(h)))
          fits.push_back(s);
      }
      REQUIRE(fits.size() == 1);
      CHECK(blank_targets(*missing, ex) == fits);
    }
    {
      const Example ex = odds->sample(6, Stream::Train, i, n);
      const Names x = input_tape(*odds, ex);
      Names odd_then_even;
      for (size_t t = 0; t < x.size(); ++t)
        if (t % 2 == 1) odd_then_even.push_back(x[t]);
      for (size_t t = 0; t < x.size(); ++t)
        if (t % 2 == 0) odd_then_even.push_back(x[t]);
      CHECK(blank_targets(*odds, ex) == odd_then_even);
    }
    if (n >= 3) {
      const Example ex = add->sample(6, Stream::Train, i, n);
      const auto [a, b] = operands(input_tape(*add, ex), "+");
      Names sum = little_endian_names(binary_value(a, true) + binary_value(b, true));
      sum.push_back("<eos>");
      CHECK(blank_targets(*add, ex) == padded(sum, static_cast<size_t>(n) + 1));
    }
    if (n >= 3) {
      const Example ex = mul->sample(6, Stream::Train, i, n);
      const auto [a, b] = operands(input_tape(*mul, ex), "*");
      Names product = little_endian_names(binary_value(a, true) * binary_value(b, true));
      product.push_back("<eos>");
      CHECK(blank_targets(*mul, ex) == padded(product, static_cast<size_t>(n)));
    }
    {
      const Example ex = sqrt->sample(6, Stream::Train, i, n);
      const Names x = input_tape(*sqrt, ex);
      REQUIRE(static_cast<int>(x.size()) == n);
      const u128 v = binary_value(x, false);
      REQUIRE(v != 0);
      Names root = little_endian_names(sqrt_floor(v));
      root.resize(static_cast<size_t>((n + 1) / 2), "0");  // leading zeros kept
      std::reverse(root.begin(), root.end());
      CHECK(blank_targets(*sqrt, ex) == root);
    }
    {
      const Example ex = sort->sample(6, Stream::Train, i, n);
      Names x = input_tape(*sort, ex);
      std::sort(x.begin(), x.end(), [](const std::string& p, const std::string& q) { return std::stoi(p) < std::stoi(q); });
      CHECK(blank_targets(*sort, ex) == x);
    }
  }
}

TEST_CASE("chomsky cs: sequence lengths T = L + L_out, up to 1500 at n = 500", "[tasks][chomsky]") {
  const std::map<std::string, int> at_500 = {
      {"duplicate_string", 1500}, {"missing_duplicate_string", 501}, {"odds_first", 1000},
      {"binary_addition", 1001},  {"binary_multiplication", 1000},  {"compute_sqrt", 750},
      {"bucket_sort", 1000}};
  for (const auto& [name, T] : at_500) {
    INFO(name);
    const auto task = make_task(name, {});
    CHECK(task->max_sequence_length(500) == T);
    const Example ex = task->sample(0, Stream::Eval, 3, 500);
    CHECK(static_cast<int>(ex.tokens.size()) == T);
    CHECK(ex.input_length == 500);
  }
  CHECK(make_task("compute_sqrt", {})->max_sequence_length(7) == 11);
}

TEST_CASE("chomsky cs: bad parameters are errors naming the task and the parameter", "[tasks][chomsky]") {
  for (const char* task : {"duplicate_string", "odds_first", "bucket_sort"}) {
    check_bad_param(task, {{"vocab_size", "1"}}, "vocab_size", "outside 2..256");
    check_bad_param(task, {{"vocab_size", "257"}}, "vocab_size", "outside 2..256");
    check_bad_param(task, {{"vocab_size", "2.5"}}, "vocab_size", "expected an integer");
    check_bad_param(task, {{"vocabsize", "3"}}, "vocabsize", "did you mean 'vocab_size'");
  }
  for (const char* task : {"missing_duplicate_string", "binary_addition", "binary_multiplication", "compute_sqrt"})
    check_bad_param(task, {{"vocab_size", "2"}}, "vocab_size", "takes no parameters");
}
