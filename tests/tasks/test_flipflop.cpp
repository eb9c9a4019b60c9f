#include <catch2/catch.hpp>

#include "tasks/flipflop.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::check_state_targets;
using srbench::test::state_inputs;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

Example example_of(const FlipFlopTask& task, const std::string& mode, const V& inputs) {
  return srbench::test::automaton_example(task, mode, inputs);
}

void check_error(const RawParams& params, const std::string& param) {
  srbench::test::check_task_error("flipflop", params, param);
}

}  // namespace

TEST_CASE("flipflop: vocabulary is r, w1..w{values}, then q0..q{values}", "[tasks][flipflop]") {
  CHECK(make_task("flipflop", {})->vocab().names() == V{"r", "w1", "w2", "q0", "q1", "q2"});
  CHECK(make_task("flipflop", {{"values", "1"}})->vocab().names() == V{"r", "w1", "q0", "q1"});
  const auto big = make_task("flipflop", {{"values", "64"}});
  CHECK(big->vocab().size() == 1 + 64 + 65);
  CHECK(big->vocab().name(64) == "w64");
  CHECK(big->vocab().name(65) == "q0");
}

TEST_CASE("flipflop: hand-worked example in every output mode", "[tasks][flipflop]") {
  const V in = {"w1", "r", "w2", "r"};  // → q1 q1 q2 q2
  for (const std::string mode : {"states", "final", "scratchpad"}) {
    INFO(mode);
    const auto task = make_task("flipflop", {{"output", mode}});
    const auto& ff = dynamic_cast<const FlipFlopTask&>(*task);
    const Example ex = example_of(ff, mode, in);
    if (mode == "states") {
      CHECK(token_names(ff, ex) == in);
      CHECK(target_names(ff, ex) == V{"q1", "q1", "q2", "q2"});
    } else if (mode == "final") {
      CHECK(token_names(ff, ex) == in);
      CHECK(target_names(ff, ex) == V{"", "", "", "q2"});
    } else {
      CHECK(token_names(ff, ex) == V{"w1", "q1", "r", "q1", "w2", "q2", "r", "q2"});
      CHECK(target_names(ff, ex) == V{"q1", "", "q1", "", "q2", "", "q2", ""});
    }
  }
  // Reads before any write give q0 (nothing written yet); a repeated write keeps the value.
  const auto task = make_task("flipflop", {{"values", "3"}});
  const auto& ff = dynamic_cast<const FlipFlopTask&>(*task);
  CHECK(target_names(ff, example_of(ff, "states", {"r", "r", "w3", "w3", "r", "w1", "r", "w2"})) ==
        V{"q0", "q0", "q3", "q3", "q3", "q1", "q1", "q2"});
  CHECK(target_names(ff, example_of(ff, "final", {"r", "r", "r"})) == V{"", "", "q0"});
}

TEST_CASE("flipflop: 1000 random examples agree with a scan for the last write", "[tasks][flipflop]") {
  const std::vector<RawParams> configs = {
      {},
      {{"values", "1"}, {"p_write", "0.2"}},
      {{"values", "5"}, {"p_write", "0.9"}},
      {{"values", "64"}, {"p_write", "0.05"}},
      {{"values", "3"}, {"p_write", "1"}},
  };
  int examples = 0;
  for (const auto& config : configs) {
    const int values = config.count("values") ? std::stoi(config.at("values")) : 2;
    for (const std::string mode : {"states", "final", "scratchpad"}) {
      RawParams params = config;
      params["output"] = mode;
      const auto task = make_task("flipflop", params);
      for (uint64_t i = 0; i < 70; ++i, ++examples) {
        const int n = 1 + static_cast<int>((i * 11) % 60);
        const Example ex = task->sample(23, Stream::TrainArch, i, n);
        const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
        const V inputs = state_inputs(tok, tgt, mode, n);
        V states;
        for (int t = 0; t < n; ++t) {
          const std::string& x = inputs[t];
          REQUIRE((x == "r" || (x[0] == 'w' && std::stoi(x.substr(1)) >= 1 && std::stoi(x.substr(1)) <= values)));
          std::string q = "q0";  // scan back for the last write at or before t
          for (int u = t; u >= 0; --u)
            if (inputs[u][0] == 'w') {
              q = "q" + inputs[u].substr(1);
              break;
            }
          states.push_back(q);
        }
        check_state_targets(tok, tgt, mode, states);
      }
    }
  }
  CHECK(examples >= 1000);
}

TEST_CASE("flipflop: writes occur with probability p_write, values uniform", "[tasks][flipflop]") {
  for (const double p : {0.1, 0.5, 0.8}) {
    INFO("p_write = " << p);
    const auto task = make_task("flipflop", {{"values", "4"}, {"p_write", std::to_string(p)}});
    int writes = 0, total = 0;
    std::vector<int> value_count(5, 0);
    for (uint64_t i = 0; i < 400; ++i)
      for (const auto& x : token_names(*task, task->sample(9, Stream::Train, i, 50))) {
        ++total;
        if (x != "r") ++writes, ++value_count[std::stoi(x.substr(1))];
      }
    CHECK(static_cast<double>(writes) / total == Approx(p).margin(0.015));
    for (int v = 1; v <= 4; ++v) CHECK(static_cast<double>(value_count[v]) / writes == Approx(0.25).margin(0.03));
  }
  // p_write = 0: only reads, the state never leaves q0.
  const auto never = make_task("flipflop", {{"p_write", "0"}});
  const Example ex = never->sample(1, Stream::Train, 0, 5);
  CHECK(token_names(*never, ex) == V{"r", "r", "r", "r", "r"});
  CHECK(target_names(*never, ex) == V{"q0", "q0", "q0", "q0", "q0"});
  // p_write = 1: no reads at all.
  const auto always = make_task("flipflop", {{"p_write", "1"}});
  for (const auto& x : token_names(*always, always->sample(1, Stream::Train, 0, 200))) CHECK(x != "r");
}

TEST_CASE("flipflop: bad parameters are errors naming the parameter", "[tasks][flipflop]") {
  check_error({{"values", "0"}}, "values");
  check_error({{"values", "65"}}, "values");
  check_error({{"values", "2.5"}}, "values");
  check_error({{"p_write", "1.1"}}, "p_write");
  check_error({{"p_write", "-0.1"}}, "p_write");
  check_error({{"p_write", "often"}}, "p_write");
  check_error({{"output", "last"}}, "output");
  check_error({{"p_writ", "0.5"}}, "p_writ");
  try {
    make_task("flipflop", {{"value", "3"}});
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK_THAT(e.what(), Catch::Contains("did you mean 'values'"));
  }
}
