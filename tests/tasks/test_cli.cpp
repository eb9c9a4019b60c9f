// The `srbench tasks` and `srbench sample` commands, run as a user would.
#include <catch2/catch.hpp>

#include "tasks/task.hpp"
#include "tests/support.hpp"
#include "tests/tasks/helpers.hpp"

using srbench::test::run_srbench;

TEST_CASE("srbench tasks lists every task with its parameters and defaults", "[cli]") {
  const auto r = run_srbench({"tasks"});
  REQUIRE(r.exit_code == 0);
  for (const auto& info : srbench::tasks::task_registry()) {
    CHECK_THAT(r.out, Catch::Contains(info.name + " — "));
    for (const auto& p : info.params) CHECK_THAT(r.out, Catch::Contains("    " + p.name + " ("));
  }
  CHECK_THAT(r.out, Catch::Contains("p1 (number, default 0.5)"));
}

TEST_CASE("srbench sample prints jsonl exactly as harness.md and text aligned", "[cli]") {
  const auto r = run_srbench({"sample", "parity", "-n", "6", "--count", "3", "--format", "jsonl", "--seed", "3"});
  REQUIRE(r.exit_code == 0);
  const auto task = srbench::tasks::make_task("parity", {});
  std::string expected;
  for (uint64_t i = 0; i < 3; ++i) {
    const auto ex = task->sample(3, srbench::tasks::Stream::Train, i, 6);
    expected += "{\"task\": \"parity\", \"n\": 6, \"tokens\": [";
    for (size_t t = 0; t < 6; ++t) expected += (t ? ",\"" : "\"") + task->vocab().name(ex.tokens[t]) + "\"";
    expected += "], \"targets\": [";
    for (size_t t = 0; t < 6; ++t) expected += (t ? ",\"" : "\"") + task->vocab().name(ex.targets[t]) + "\"";
    expected += "], \"input_length\": 6}\n";  // no tape layout: the example's length
  }
  CHECK(r.out == expected);

  // --index picks out any example: example 2 alone equals the third line above.
  const auto one = run_srbench({"sample", "parity", "-n", "6", "--index", "2", "--format", "jsonl", "--seed", "3"});
  CHECK(one.out == expected.substr(expected.rfind("{\"task\"")));

  const auto text = run_srbench({"sample", "parity", "-n", "4", "--set", "output=final"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("  tokens   ") && Catch::Contains("  targets  ") && Catch::Contains("\u00b7"));
}

TEST_CASE("srbench sample: identical calls print identical bytes, for every task", "[cli]") {
  for (const auto& info : srbench::tasks::task_registry()) {
    std::vector<std::string> args = {"sample", info.name, "-n", "6", "--count", "5", "--format", "jsonl"};
    for (const auto& [k, v] : srbench::test::buildable_params(info.name)) args.insert(args.end(), {"--set", k + "=" + v});
    const auto a = run_srbench(args), b = run_srbench(args);
    INFO(info.name << ": " << a.err);
    REQUIRE(a.exit_code == 0);
    CHECK(a.out == b.out);
    CHECK(std::count(a.out.begin(), a.out.end(), '\n') == 5);
  }
}

TEST_CASE("srbench sample: bad input exits 2 with a line naming what was wrong", "[cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string must_name;
  };
  const std::vector<Case> cases = {
      {{"sample", "parit"}, "parity"},                               // unknown task: lists valid names
      {{"sample", "parity", "--set", "p1=2"}, "p1"},                 // out of range
      {{"sample", "parity", "--set", "q=1"}, "'q'"},                 // unknown parameter
      {{"sample", "parity", "--set", "p1=abc"}, "p1"},               // ill-typed
      {{"sample", "parity", "--set", "p1"}, "KEY=VALUE"},            // not an assignment
      {{"sample", "parity", "-n", "0"}, "'n'"},                      // length below 1
      {{"sample", "parity", "--format", "xml"}, "--format"},
      {{"sample", "parity", "--stream", "test"}, "--stream"},
      {{"sample", "parity", "--count", "0"}, "--count"},
      {{"sample", "parity", "--bogus"}, "bogus"},
      {{"sample"}, "TASK"},
      {{"nonsense"}, "nonsense"},
  };
  for (const auto& c : cases) {
    const auto r = run_srbench(c.args);
    INFO(c.args.back() << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(c.must_name));
  }
}
