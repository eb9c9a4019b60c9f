#include <catch2/catch.hpp>

#include "tasks/parity.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::check_state_targets;
using srbench::test::state_inputs;
using srbench::test::token_names;
using V = std::vector<std::string>;

TEST_CASE("parity: hand-worked example in every output mode", "[tasks][parity]") {
  // 1 0 1 1 → running parity 1 1 0 1
  for (const char* mode : {"states", "final", "scratchpad"}) {
    const auto task = make_task("parity", {{"output", mode}});
    const auto& pt = dynamic_cast<const ParityTask&>(*task);
    Example ex;
    format_automaton(read_output_mode(ParamReader("parity", parity_info().params, {{"output", mode}})),
                     {0 + 1, 0, 1, 1}, pt.labels({1, 0, 1, 1}), ex);
    if (std::string(mode) == "states") {
      CHECK(token_names(pt, ex) == V{"1", "0", "1", "1"});
      CHECK(target_names(pt, ex) == V{"q1", "q1", "q0", "q1"});
    } else if (std::string(mode) == "final") {
      CHECK(token_names(pt, ex) == V{"1", "0", "1", "1"});
      CHECK(target_names(pt, ex) == V{"", "", "", "q1"});
    } else {
      CHECK(token_names(pt, ex) == V{"1", "q1", "0", "q1", "1", "q0", "1", "q1"});
      CHECK(target_names(pt, ex) == V{"q1", "", "q1", "", "q0", "", "q1", ""});
    }
  }
}

TEST_CASE("parity: 1000 random examples agree with a recount of the ones", "[tasks][parity]") {
  for (const char* mode : {"states", "final", "scratchpad"}) {
    const auto task = make_task("parity", {{"output", mode}, {"p1", "0.3"}});
    size_t ones = 0, inputs = 0;
    for (uint64_t i = 0; i < 1000; ++i) {
      const int n = 1 + static_cast<int>(i % 40);
      const Example ex = task->sample(7, Stream::Train, i, n);
      const auto tok = token_names(*task, ex), tgt = target_names(*task, ex);
      REQUIRE(tok.size() == static_cast<size_t>(task->max_sequence_length(n)));
      const V xs = state_inputs(tok, tgt, mode, n);
      V states;
      for (int t = 0; t < n; ++t) {
        const std::string& x = xs[t];
        REQUIRE((x == "0" || x == "1"));
        int count = 0;  // recount the ones in the prefix x_0..x_t
        for (int u = 0; u <= t; ++u) count += xs[u] == "1";
        states.push_back("q" + std::to_string(count % 2));
        ones += x == "1", inputs += 1;
      }
      check_state_targets(tok, tgt, mode, states);
    }
    // p1 = 0.3: the fraction of ones is near 0.3 (over ~20k draws, sd ≈ 0.003)
    CHECK(static_cast<double>(ones) / inputs == Approx(0.3).margin(0.02));
  }
}
