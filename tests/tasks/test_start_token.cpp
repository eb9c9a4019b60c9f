// `start_token: true` (tasks/start_token.hpp): for every task without the tape layout, the same
// example as without it, one `<s>` (unscored, the vocabulary's last id) in front; refused by the
// tape-layout tasks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "tasks/task.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::buildable_params;

TEST_CASE("start_token: the task's own example after an unscored <s>, ids unchanged", "[tasks][start_token]") {
  int tasks_with = 0;
  for (const auto& info : task_registry()) {
    if (!info.level.empty()) continue;  // the tape layout: below
    INFO("task " << info.name);
    RawParams params = buildable_params(info.name);
    const auto plain = make_task(info.name, params);
    params["start_token"] = "true";
    const auto with = make_task(info.name, params);
    ++tasks_with;
    // the vocabulary: the task's names in their order, then <s>
    const auto& names = with->vocab().names();
    REQUIRE(names.size() == plain->vocab().names().size() + 1);
    CHECK(std::equal(plain->vocab().names().begin(), plain->vocab().names().end(), names.begin()));
    CHECK(names.back() == "<s>");
    const int32_t s = with->vocab().id("<s>");
    for (uint64_t i = 0; i < 40; ++i) {
      const int n = info.name == "mqar" ? 1 + static_cast<int>(i % 8)
                    : (info.name == "dyck" || info.name == "ffl") ? 2 + 2 * static_cast<int>(i % 6)
                                                                   : 1 + static_cast<int>(i % 12);
      for (const Stream stream : {Stream::Train, Stream::Eval}) {
        const Example a = plain->sample(3, stream, i, n), b = with->sample(3, stream, i, n);
        REQUIRE(b.tokens.size() == a.tokens.size() + 1);
        CHECK(b.tokens[0] == s);
        CHECK(b.targets[0] == kNotScored);
        CHECK(std::equal(a.tokens.begin(), a.tokens.end(), b.tokens.begin() + 1));
        CHECK(std::equal(a.targets.begin(), a.targets.end(), b.targets.begin() + 1));
        CHECK(b.input_length == static_cast<int32_t>(b.tokens.size()));
        CHECK(with->max_sequence_length(n) == plain->max_sequence_length(n) + 1);
      }
    }
    const double space_with = with->input_space_size(6), space_plain = plain->input_space_size(6);
    CHECK((space_with == space_plain || (std::isnan(space_with) && std::isnan(space_plain))));
  }
  CHECK(tasks_with == 15);
  // off by default: the parameter at its default builds the task's own examples
  const auto off = make_task("parity", {{"start_token", "false"}});
  CHECK(off->vocab().size() == 4);
  CHECK(off->sample(0, Stream::Train, 0, 5).tokens.size() == 5);
}

TEST_CASE("start_token: the tape-layout tasks do not take it", "[tasks][start_token]") {
  try {
    make_task("parity_check", {{"start_token", "true"}});
    FAIL("no error");
  } catch (const TaskError& e) {
    CHECK(std::string(e.what()).find("start_token") != std::string::npos);
  }
  CHECK_THROWS_AS(make_task("parity", {{"start_token", "maybe"}}), TaskError);
}
