// copy: hand-worked examples, 1000s of random examples checked against the plain or reversed
// input by name, letter frequencies, and every bad parameter.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tasks/copy.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

void check_error(const RawParams& params, const std::string& param) {
  INFO("expect an error naming " << param);
  try {
    make_task("copy", params)->sample(0, Stream::Train, 0, 3);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "copy");
    CHECK(e.param() == param);
  }
}

}  // namespace

TEST_CASE("copy: vocabulary and hand-worked examples", "[tasks][copy]") {
  CHECK(make_task("copy", {{"alphabet", "3"}})->vocab().names() == V{"a", "b", "c", "<sep>", "<eos>"});
  CHECK(make_task("copy", {{"alphabet", "26"}})->vocab().name(25) == "z");
  CHECK(make_task("copy", {})->vocab().size() == 12);
  {
    const auto task = make_task("copy", {{"alphabet", "3"}});
    Example ex;
    dynamic_cast<const CopyTask&>(*task).format({1, 2, 0}, ex);  // b c a
    CHECK(token_names(*task, ex) == V{"b", "c", "a", "<sep>", "b", "c", "a", "<eos>"});
    CHECK(target_names(*task, ex) == V{"", "", "", "b", "c", "a", "<eos>", ""});
  }
  {
    const auto task = make_task("copy", {{"alphabet", "3"}, {"reverse", "true"}});
    Example ex;
    dynamic_cast<const CopyTask&>(*task).format({1, 2, 0}, ex);
    CHECK(token_names(*task, ex) == V{"b", "c", "a", "<sep>", "a", "c", "b", "<eos>"});
    CHECK(target_names(*task, ex) == V{"", "", "", "a", "c", "b", "<eos>", ""});
  }
  {
    const auto task = make_task("copy", {{"alphabet", "1"}});
    const Example ex = task->sample(0, Stream::Train, 0, 1);
    CHECK(token_names(*task, ex) == V{"a", "<sep>", "a", "<eos>"});
    CHECK(target_names(*task, ex) == V{"", "a", "<eos>", ""});
  }
}

TEST_CASE("copy: 1000s of random examples agree with the plain or reversed input", "[tasks][copy]") {
  for (int alphabet : {1, 2, 10, 26})
    for (bool reverse : {false, true}) {
      const auto task = make_task("copy", {{"alphabet", std::to_string(alphabet)}, {"reverse", reverse ? "true" : "false"}});
      std::vector<long> letters(26, 0);
      long drawn = 0;
      for (uint64_t i = 0; i < 1000; ++i) {
        INFO("alphabet=" << alphabet << " reverse=" << reverse << " #" << i);
        const int n = 1 + static_cast<int>(i % 50);
        const Example ex = task->sample(4, Stream::Train, i, n);
        const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
        REQUIRE(static_cast<int>(tok.size()) == 2 * n + 2);
        REQUIRE(task->max_sequence_length(n) == 2 * n + 2);
        const V x(tok.begin(), tok.begin() + n);
        V y = x;
        if (reverse) std::reverse(y.begin(), y.end());
        for (const auto& c : x) {
          REQUIRE(c.size() == 1);
          REQUIRE(c[0] >= 'a');
          REQUIRE(c[0] < 'a' + alphabet);
          letters[c[0] - 'a'] += 1, drawn += 1;
        }
        CHECK(tok[n] == "<sep>");
        CHECK(V(tok.begin() + n + 1, tok.begin() + 2 * n + 1) == y);
        CHECK(tok[2 * n + 1] == "<eos>");
        // Targets: unscored over x; from <sep> the next token; <eos> unscored.
        V expected(static_cast<size_t>(n), "");
        expected.insert(expected.end(), y.begin(), y.end());
        expected.push_back("<eos>");
        expected.push_back("");
        CHECK(tgt == expected);
      }
      for (int c = 0; c < alphabet; ++c)
        CHECK(static_cast<double>(letters[c]) / drawn == Approx(1.0 / alphabet).margin(0.01));
    }
}

TEST_CASE("copy: bad parameters are errors naming them", "[tasks][copy]") {
  check_error({{"alphabet", "27"}}, "alphabet");
  check_error({{"alphabet", "0"}}, "alphabet");
  check_error({{"alphabet", "ten"}}, "alphabet");
  check_error({{"reverse", "maybe"}}, "reverse");
  check_error({{"reversed", "true"}}, "reversed");
  try {
    make_task("copy", {})->sample(0, Stream::Train, 0, 0);
    FAIL("n = 0 accepted");
  } catch (const TaskError& e) {
    CHECK(e.param() == "n");
  }
}
