#include <catch2/catch.hpp>

#include "tasks/gridworld.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::check_state_targets;
using srbench::test::state_inputs;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

Example example_of(const GridWorldTask& task, const std::string& mode, const V& moves) {
  return srbench::test::automaton_example(task, mode, moves);
}

void check_error(const RawParams& params, const std::string& param) {
  srbench::test::check_task_error("gridworld", params, param);
}

}  // namespace

TEST_CASE("gridworld: vocabulary is L R then c0..c{cells-1}", "[tasks][gridworld]") {
  CHECK(make_task("gridworld", {{"cells", "3"}})->vocab().names() == V{"L", "R", "c0", "c1", "c2"});
  CHECK(make_task("gridworld", {})->vocab().size() == 2 + 9);
  CHECK(make_task("gridworld", {{"cells", "1024"}})->vocab().name(2 + 1023) == "c1023");
}

TEST_CASE("gridworld: hand-worked example in every output mode", "[tasks][gridworld]") {
  // cells = 3: L (clamped at 0) R R R (clamped at 2) L → c0 c1 c2 c2 c1
  const V in = {"L", "R", "R", "R", "L"};
  for (const std::string mode : {"states", "final", "scratchpad"}) {
    INFO(mode);
    const auto task = make_task("gridworld", {{"cells", "3"}, {"output", mode}});
    const auto& gw = dynamic_cast<const GridWorldTask&>(*task);
    const Example ex = example_of(gw, mode, in);
    if (mode == "states") {
      CHECK(token_names(gw, ex) == in);
      CHECK(target_names(gw, ex) == V{"c0", "c1", "c2", "c2", "c1"});
    } else if (mode == "final") {
      CHECK(token_names(gw, ex) == in);
      CHECK(target_names(gw, ex) == V{"", "", "", "", "c1"});
    } else {
      CHECK(token_names(gw, ex) == V{"L", "c0", "R", "c1", "R", "c2", "R", "c2", "L", "c1"});
      CHECK(target_names(gw, ex) == V{"c0", "", "c1", "", "c2", "", "c2", "", "c1", ""});
    }
  }
  // cells = 2, the smallest: R R L L R → c1 c1 c0 c0 c1
  const auto two = make_task("gridworld", {{"cells", "2"}});
  const auto& gw2 = dynamic_cast<const GridWorldTask&>(*two);
  CHECK(target_names(gw2, example_of(gw2, "states", {"R", "R", "L", "L", "R"})) == V{"c1", "c1", "c0", "c0", "c1"});
}

TEST_CASE("gridworld: 1000 random examples agree with a clamped walk over the move names", "[tasks][gridworld]") {
  const std::vector<RawParams> configs = {
      {},
      {{"cells", "2"}},
      {{"cells", "5"}, {"p_right", "0.8"}},
      {{"cells", "4"}, {"p_right", "0.1"}},
      {{"cells", "1024"}, {"p_right", "0.95"}},
  };
  int examples = 0;
  for (const auto& config : configs) {
    const int cells = config.count("cells") ? std::stoi(config.at("cells")) : 9;
    for (const std::string mode : {"states", "final", "scratchpad"}) {
      RawParams params = config;
      params["output"] = mode;
      const auto task = make_task("gridworld", params);
      for (uint64_t i = 0; i < 70; ++i, ++examples) {
        const int n = 1 + static_cast<int>((i * 13) % 64);
        const Example ex = task->sample(31, Stream::Eval, i, n);
        const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
        int cell = 0;
        V states;
        for (const std::string& x : state_inputs(tok, tgt, mode, n)) {
          REQUIRE((x == "L" || x == "R"));
          cell = x == "R" ? std::min(cell + 1, cells - 1) : std::max(cell - 1, 0);
          states.push_back("c" + std::to_string(cell));
        }
        check_state_targets(tok, tgt, mode, states);
      }
    }
  }
  CHECK(examples >= 1000);
}

TEST_CASE("gridworld: moves right with probability p_right", "[tasks][gridworld]") {
  for (const double p : {0.2, 0.5, 0.8}) {
    INFO("p_right = " << p);
    const auto task = make_task("gridworld", {{"p_right", std::to_string(p)}});
    int rights = 0, total = 0;
    for (uint64_t i = 0; i < 400; ++i)
      for (const auto& x : token_names(*task, task->sample(2, Stream::Train, i, 50))) rights += x == "R", ++total;
    CHECK(static_cast<double>(rights) / total == Approx(p).margin(0.015));
  }
  // p_right = 1 walks to the last cell and stays; p_right = 0 never leaves cell 0.
  const auto right = make_task("gridworld", {{"cells", "4"}, {"p_right", "1"}});
  CHECK(target_names(*right, right->sample(0, Stream::Train, 0, 6)) == V{"c1", "c2", "c3", "c3", "c3", "c3"});
  const auto left = make_task("gridworld", {{"cells", "4"}, {"p_right", "0"}});
  CHECK(target_names(*left, left->sample(0, Stream::Train, 0, 3)) == V{"c0", "c0", "c0"});
}

TEST_CASE("gridworld: bad parameters are errors naming the parameter", "[tasks][gridworld]") {
  check_error({{"cells", "1"}}, "cells");
  check_error({{"cells", "0"}}, "cells");
  check_error({{"cells", "1025"}}, "cells");
  check_error({{"cells", "many"}}, "cells");
  check_error({{"p_right", "1.5"}}, "p_right");
  check_error({{"p_right", "-1"}}, "p_right");
  check_error({{"p_right", "nan"}}, "p_right");
  check_error({{"output", "state"}}, "output");
  check_error({{"size", "9"}}, "size");
}
