#include <catch2/catch.hpp>

#include <map>

#include "tasks/quaternion.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::check_state_targets;
using srbench::test::state_inputs;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

Example example_of(const QuaternionTask& task, const std::string& mode, const V& inputs) {
  return srbench::test::automaton_example(task, mode, inputs);
}

// q·x for every state q and input x, written out by hand from i² = j² = k² = ijk = -1:
// ij = k, jk = i, ki = j, ji = -k, kj = -i, ik = -j.
const std::map<std::string, std::map<std::string, std::string>> kTimes = {
    //       ·1            ·i            ·j            ·k
    {"+1", {{"1", "+1"}, {"i", "+i"}, {"j", "+j"}, {"k", "+k"}}},
    {"-1", {{"1", "-1"}, {"i", "-i"}, {"j", "-j"}, {"k", "-k"}}},
    {"+i", {{"1", "+i"}, {"i", "-1"}, {"j", "+k"}, {"k", "-j"}}},
    {"-i", {{"1", "-i"}, {"i", "+1"}, {"j", "-k"}, {"k", "+j"}}},
    {"+j", {{"1", "+j"}, {"i", "-k"}, {"j", "-1"}, {"k", "+i"}}},
    {"-j", {{"1", "-j"}, {"i", "+k"}, {"j", "+1"}, {"k", "-i"}}},
    {"+k", {{"1", "+k"}, {"i", "+j"}, {"j", "-i"}, {"k", "-1"}}},
    {"-k", {{"1", "-k"}, {"i", "-j"}, {"j", "+i"}, {"k", "+1"}}},
};

void check_error(const RawParams& params, const std::string& param) {
  srbench::test::check_task_error("quaternion", params, param);
}

}  // namespace

TEST_CASE("quaternion: vocabulary is 1 i j k then +1 -1 +i -i +j -j +k -k", "[tasks][quaternion]") {
  CHECK(make_task("quaternion", {})->vocab().names() == V{"1", "i", "j", "k", "+1", "-1", "+i", "-i", "+j", "-j", "+k", "-k"});
}

TEST_CASE("quaternion: hand-worked examples in every output mode", "[tasks][quaternion]") {
  const V in = {"i", "j"};  // +1·i = +i, +i·j = +k
  for (const std::string mode : {"states", "final", "scratchpad"}) {
    INFO(mode);
    const auto task = make_task("quaternion", {{"output", mode}});
    const auto& qt = dynamic_cast<const QuaternionTask&>(*task);
    const Example ex = example_of(qt, mode, in);
    if (mode == "states") {
      CHECK(token_names(qt, ex) == in);
      CHECK(target_names(qt, ex) == V{"+i", "+k"});
    } else if (mode == "final") {
      CHECK(token_names(qt, ex) == in);
      CHECK(target_names(qt, ex) == V{"", "+k"});
    } else {
      CHECK(token_names(qt, ex) == V{"i", "+i", "j", "+k"});
      CHECK(target_names(qt, ex) == V{"+i", "", "+k", ""});
    }
  }
  const auto task = make_task("quaternion", {});
  const auto& qt = dynamic_cast<const QuaternionTask&>(*task);
  // Right multiplication: +k·j = -i (left multiplication would give j·k = +i).
  CHECK(target_names(qt, example_of(qt, "states", {"k", "j"})) == V{"+k", "-i"});
  // i j j k: +i, i·j = +k, k·j = -i, -i·k = +j
  CHECK(target_names(qt, example_of(qt, "states", {"i", "j", "j", "k"})) == V{"+i", "+k", "-i", "+j"});
  // 1 keeps the state; i⁴ = 1: i i i i 1 → +i -1 -i +1 +1
  CHECK(target_names(qt, example_of(qt, "states", {"i", "i", "i", "i", "1"})) == V{"+i", "-1", "-i", "+1", "+1"});
  // i j k = -1
  CHECK(target_names(qt, example_of(qt, "final", {"i", "j", "k"})) == V{"", "", "-1"});
}

TEST_CASE("quaternion: labels agree with the hand-written multiplication table on every transition", "[tasks][quaternion]") {
  // Reach each state by a known word, then read each input.
  const std::map<std::string, V> reach = {
      {"+1", {"1"}}, {"-1", {"i", "i"}}, {"+i", {"i"}}, {"-i", {"i", "i", "i"}},
      {"+j", {"j"}}, {"-j", {"j", "j", "j"}}, {"+k", {"k"}}, {"-k", {"k", "k", "k"}},
  };
  const auto task = make_task("quaternion", {});
  const auto& qt = dynamic_cast<const QuaternionTask&>(*task);
  for (const auto& [state, word] : reach)
    for (const std::string x : {"1", "i", "j", "k"}) {
      INFO(state << " · " << x);
      V in = word;
      in.push_back(x);
      const V labels = target_names(qt, example_of(qt, "states", in));
      REQUIRE(labels[labels.size() - 2] == state);
      CHECK(labels.back() == kTimes.at(state).at(x));
    }
}

TEST_CASE("quaternion: 1000 random examples agree with the hand-written table", "[tasks][quaternion]") {
  int examples = 0;
  for (const std::string mode : {"states", "final", "scratchpad"}) {
    const auto task = make_task("quaternion", {{"output", mode}});
    for (uint64_t i = 0; i < 340; ++i, ++examples) {
      const int n = 1 + static_cast<int>((i * 17) % 80);
      const Example ex = task->sample(5, Stream::Train, i, n);
      const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
      std::string q = "+1";
      V states;
      for (const std::string& x : state_inputs(tok, tgt, mode, n)) {
        REQUIRE((x == "1" || x == "i" || x == "j" || x == "k"));
        q = kTimes.at(q).at(x);
        states.push_back(q);
      }
      check_state_targets(tok, tgt, mode, states);
    }
  }
  CHECK(examples >= 1000);
}

TEST_CASE("quaternion: inputs are uniform", "[tasks][quaternion]") {
  const auto task = make_task("quaternion", {});
  std::map<std::string, int> count;
  int total = 0;
  for (uint64_t i = 0; i < 500; ++i)
    for (const auto& x : token_names(*task, task->sample(8, Stream::Train, i, 40))) ++count[x], ++total;
  REQUIRE(count.size() == 4);
  for (const auto& [x, c] : count) {
    INFO(x);
    CHECK(static_cast<double>(c) / total == Approx(0.25).margin(0.015));
  }
}

TEST_CASE("quaternion: bad parameters are errors naming the parameter", "[tasks][quaternion]") {
  check_error({{"output", "sum"}}, "output");
  check_error({{"p", "0.5"}}, "p");
  check_error({{"group", "Q8"}}, "group");
}
