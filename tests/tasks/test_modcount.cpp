#include <catch2/catch.hpp>

#include "tasks/modcount.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::check_state_targets;
using srbench::test::state_inputs;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

Example example_of(const ModCountTask& task, const std::string& mode, const V& inputs) {
  return srbench::test::automaton_example(task, mode, inputs);
}

// The value v of an input named `a<v>`.
int value_of(const std::string& input) {
  REQUIRE(input.size() >= 2);
  REQUIRE(input[0] == 'a');
  return std::stoi(input.substr(1));
}

void check_error(const RawParams& params, const std::string& param) {
  srbench::test::check_task_error("modcount", params, param);
}

}  // namespace

TEST_CASE("modcount: vocabulary is a0..a{m-1} then q0..q{m-1}", "[tasks][modcount]") {
  CHECK(make_task("modcount", {{"m", "3"}})->vocab().names() == V{"a0", "a1", "a2", "q0", "q1", "q2"});
  // Restricting the actions keeps every input token: the vocabulary depends on m only.
  CHECK(make_task("modcount", {{"m", "3"}, {"actions", "[1]"}})->vocab().names() ==
        V{"a0", "a1", "a2", "q0", "q1", "q2"});
  CHECK(make_task("modcount", {})->vocab().size() == 10);  // default m = 5
  CHECK(make_task("modcount", {{"m", "1000"}})->vocab().size() == 2000);
}

TEST_CASE("modcount: hand-worked example in every output mode", "[tasks][modcount]") {
  // m = 5: a3 a4 a0 a3 → sums 3, 7, 7, 10 → q3 q2 q2 q0
  const V in = {"a3", "a4", "a0", "a3"};
  for (const std::string mode : {"states", "final", "scratchpad"}) {
    INFO(mode);
    const auto task = make_task("modcount", {{"output", mode}});
    const auto& mc = dynamic_cast<const ModCountTask&>(*task);
    const Example ex = example_of(mc, mode, in);
    if (mode == "states") {
      CHECK(token_names(mc, ex) == in);
      CHECK(target_names(mc, ex) == V{"q3", "q2", "q2", "q0"});
    } else if (mode == "final") {
      CHECK(token_names(mc, ex) == in);
      CHECK(target_names(mc, ex) == V{"", "", "", "q0"});
    } else {
      CHECK(token_names(mc, ex) == V{"a3", "q3", "a4", "q2", "a0", "q2", "a3", "q0"});
      CHECK(target_names(mc, ex) == V{"q3", "", "q2", "", "q2", "", "q0", ""});
    }
  }
  // m = 2 is parity: a1 a1 a0 a1 → q1 q0 q0 q1
  const auto two = make_task("modcount", {{"m", "2"}});
  const auto& mc2 = dynamic_cast<const ModCountTask&>(*two);
  CHECK(target_names(mc2, example_of(mc2, "states", {"a1", "a1", "a0", "a1"})) == V{"q1", "q0", "q0", "q1"});
  // m = 1000 wraps past 999: a999 a1 a999 a500 a501 → q999 q0 q999 q499 q0
  const auto big = make_task("modcount", {{"m", "1000"}});
  const auto& mcb = dynamic_cast<const ModCountTask&>(*big);
  CHECK(target_names(mcb, example_of(mcb, "states", {"a999", "a1", "a999", "a500", "a501"})) ==
        V{"q999", "q0", "q999", "q499", "q0"});
}

TEST_CASE("modcount: 1000 random examples agree with a running sum of the token names", "[tasks][modcount]") {
  struct Config {
    RawParams params;
    int m;
    std::vector<int> allowed;  // the actions that may appear
  };
  std::vector<Config> configs = {
      {{}, 5, {0, 1, 2, 3, 4}},
      {{{"m", "2"}}, 2, {0, 1}},
      {{{"m", "7"}, {"actions", "[1, 3, 6]"}, {"probs", "[0.2, 0.5, 0.3]"}}, 7, {1, 3, 6}},
      {{{"m", "12"}, {"actions", "5,11"}}, 12, {5, 11}},
      {{{"m", "97"}}, 97, {}},
  };
  for (int v = 0; v < 97; ++v) configs.back().allowed.push_back(v);

  int examples = 0;
  for (const auto& config : configs) {
    for (const std::string mode : {"states", "final", "scratchpad"}) {
      RawParams params = config.params;
      params["output"] = mode;
      const auto task = make_task("modcount", params);
      for (uint64_t i = 0; i < 70; ++i, ++examples) {
        const int n = 1 + static_cast<int>((i * 7) % 45);
        const Example ex = task->sample(11, Stream::Train, i, n);
        const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
        int sum = 0;
        V states;
        for (const std::string& x : state_inputs(tok, tgt, mode, n)) {
          const int v = value_of(x);
          REQUIRE(std::find(config.allowed.begin(), config.allowed.end(), v) != config.allowed.end());
          sum = (sum + v) % config.m;
          states.push_back("q" + std::to_string(sum));
        }
        check_state_targets(tok, tgt, mode, states);
      }
    }
  }
  CHECK(examples >= 1000);
}

TEST_CASE("modcount: actions are drawn with the given probabilities", "[tasks][modcount]") {
  SECTION("uniform by default") {
    const auto task = make_task("modcount", {{"m", "4"}});
    std::vector<int> count(4, 0);
    int total = 0;
    for (uint64_t i = 0; i < 500; ++i)
      for (const auto& x : token_names(*task, task->sample(3, Stream::Train, i, 40))) ++count[value_of(x)], ++total;
    for (int v = 0; v < 4; ++v) CHECK(static_cast<double>(count[v]) / total == Approx(0.25).margin(0.02));
  }
  SECTION("given probabilities; unlisted and zero-probability actions never appear") {
    const auto task = make_task("modcount", {{"m", "6"}, {"actions", "[4, 1, 2, 5]"}, {"probs", "[0.6, 0.3, 0.1, 0]"}});
    std::vector<int> count(6, 0);
    int total = 0;
    for (uint64_t i = 0; i < 500; ++i)
      for (const auto& x : token_names(*task, task->sample(5, Stream::Eval, i, 40))) ++count[value_of(x)], ++total;
    CHECK(static_cast<double>(count[4]) / total == Approx(0.6).margin(0.02));
    CHECK(static_cast<double>(count[1]) / total == Approx(0.3).margin(0.02));
    CHECK(static_cast<double>(count[2]) / total == Approx(0.1).margin(0.02));
    CHECK(count[0] == 0);
    CHECK(count[3] == 0);
    CHECK(count[5] == 0);
  }
  SECTION("a single action with probability 1") {
    const auto task = make_task("modcount", {{"m", "3"}, {"actions", "[2]"}, {"probs", "[1]"}});
    const Example ex = task->sample(0, Stream::Train, 0, 6);
    CHECK(token_names(*task, ex) == V{"a2", "a2", "a2", "a2", "a2", "a2"});
    CHECK(target_names(*task, ex) == V{"q2", "q1", "q0", "q2", "q1", "q0"});
  }
}

TEST_CASE("modcount: bad parameters are errors naming the parameter", "[tasks][modcount]") {
  check_error({{"m", "1"}}, "m");
  check_error({{"m", "1001"}}, "m");
  check_error({{"m", "five"}}, "m");
  check_error({{"actions", "[]"}}, "actions");
  check_error({{"actions", ""}}, "actions");
  check_error({{"actions", "[5]"}}, "actions");  // m = 5: values are 0..4
  check_error({{"actions", "[-1]"}}, "actions");
  check_error({{"actions", "[1, 2, 1]"}}, "actions");
  check_error({{"actions", "[1, x]"}}, "actions");
  check_error({{"actions", "[1, 2"}}, "actions");
  check_error({{"m", "3"}, {"actions", "[0, 3]"}}, "actions");
  check_error({{"probs", "[0.5, 0.5]"}}, "probs");  // 5 actions by default
  check_error({{"actions", "[0, 1]"}, {"probs", "[1]"}}, "probs");
  check_error({{"actions", "[0, 1]"}, {"probs", "[1.5, -0.5]"}}, "probs");
  check_error({{"actions", "[0, 1]"}, {"probs", "[0.5, 0.4]"}}, "probs");
  check_error({{"actions", "[0, 1]"}, {"probs", "[0.5, 0.50001]"}}, "probs");
  check_error({{"actions", "[0, 1]"}, {"probs", "[0.5, half]"}}, "probs");
  check_error({{"actions", "[0, 1]"}, {"probs", "uniformly"}}, "probs");
  check_error({{"output", "all"}}, "output");
  check_error({{"mod", "5"}}, "mod");
  // Sums within 1e-6 of 1 are accepted.
  CHECK_NOTHROW(make_task("modcount", {{"m", "3"}, {"probs", "[0.3333333, 0.3333333, 0.3333334]"}}));
  CHECK_NOTHROW(make_task("modcount", {{"actions", "all"}, {"probs", "uniform"}}));
}
