// Properties every registered task must have: token ids inside the vocabulary, equal-length
// tokens and targets of the declared length, determinism (same bytes for the same arguments,
// whatever the order of generation or the thread count), distinct streams.
#include <catch2/catch.hpp>
#include <algorithm>
#include <thread>

#include "tasks/tape.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::buildable_params;

namespace {

int valid_length(const std::string& task, int k) {
  if (task == "mqar") return 1 + k % 20;
  if (task == "dyck" || task == "ffl") return 2 + 2 * (k % 10);
  return 1 + k % 24;
}

}  // namespace

TEST_CASE("every task: ids inside the vocabulary, at most the declared length, something scored", "[tasks][common]") {
  for (const auto& info : task_registry()) {
    INFO("task " << info.name);
    const auto task = make_task(info.name, buildable_params(info.name));
    for (uint64_t i = 0; i < 300; ++i) {
      const int n = valid_length(info.name, static_cast<int>(i));
      const Example ex = task->sample(1, Stream::Train, i, n);
      REQUIRE(ex.tokens.size() == ex.targets.size());
      REQUIRE(static_cast<int>(ex.tokens.size()) <= task->max_sequence_length(n));
      // input_length: the index of the first blank for the tape tasks, else the example's length.
      const bool tape = dynamic_cast<const TapeTask*>(task.get()) != nullptr;
      const auto first_blank = std::find(ex.tokens.begin(), ex.tokens.end(), tape ? task->vocab().id("_") : -2);
      REQUIRE(ex.input_length == static_cast<int32_t>(first_blank - ex.tokens.begin()));
      bool scored = false;
      for (size_t t = 0; t < ex.tokens.size(); ++t) {
        REQUIRE(ex.tokens[t] >= 0);
        REQUIRE(ex.tokens[t] < task->vocab().size());
        REQUIRE(ex.targets[t] >= kNotScored);
        REQUIRE(ex.targets[t] < task->vocab().size());
        scored |= ex.targets[t] != kNotScored;
      }
      REQUIRE(scored);
    }
  }
}

TEST_CASE("every task: example i is independent of order, batch and threads", "[tasks][common]") {
  for (const auto& info : task_registry()) {
    INFO("task " << info.name);
    const auto task = make_task(info.name, buildable_params(info.name));
    const int count = 200;
    std::vector<Example> forward(count), backward(count), threaded(count);
    for (int i = 0; i < count; ++i) forward[i] = task->sample(42, Stream::Eval, i, valid_length(info.name, i));
    for (int i = count - 1; i >= 0; --i)
      backward[i] = task->sample(42, Stream::Eval, i, valid_length(info.name, i));
    std::vector<std::thread> threads;
    for (int w = 0; w < 4; ++w)
      threads.emplace_back([&, w] {
        for (int i = w; i < count; i += 4) threaded[i] = task->sample(42, Stream::Eval, i, valid_length(info.name, i));
      });
    for (auto& th : threads) th.join();
    // A second task object built from the same parameters gives the same examples too.
    const auto again = make_task(info.name, buildable_params(info.name));
    for (int i = 0; i < count; ++i) {
      REQUIRE(forward[i].tokens == backward[i].tokens);
      REQUIRE(forward[i].targets == backward[i].targets);
      REQUIRE(forward[i].tokens == threaded[i].tokens);
      REQUIRE(forward[i].targets == threaded[i].targets);
      const Example e = again->sample(42, Stream::Eval, i, valid_length(info.name, i));
      REQUIRE(forward[i].tokens == e.tokens);
    }
  }
}

TEST_CASE("every task: seeds and streams give different examples", "[tasks][common]") {
  for (const auto& info : task_registry()) {
    INFO("task " << info.name);
    const auto task = make_task(info.name, buildable_params(info.name));
    const int n = valid_length(info.name, 11);
    int same_seed = 0, same_stream = 0;
    for (uint64_t i = 0; i < 50; ++i) {
      const Example a = task->sample(0, Stream::Train, i, n);
      same_seed += a.tokens == task->sample(1, Stream::Train, i, n).tokens;
      same_stream += a.tokens == task->sample(0, Stream::Eval, i, n).tokens;
    }
    CHECK(same_seed < 10);
    CHECK(same_stream < 10);
  }
}

TEST_CASE("every task: a length below the minimum is an error naming n", "[tasks][common]") {
  for (const auto& info : task_registry()) {
    INFO("task " << info.name);
    const auto task = make_task(info.name, buildable_params(info.name));
    if (!task->uses_length()) continue;
    try {
      task->sample(0, Stream::Train, 0, 0);
      FAIL("n = 0 was accepted");
    } catch (const TaskError& e) {
      CHECK(e.task() == info.name);
      CHECK(e.param() == "n");
    }
  }
}

TEST_CASE("unknown tasks and parameters are errors that name them", "[tasks][common]") {
  try {
    make_task("parityy", {});
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK_THAT(e.what(), Catch::Contains("parityy") && Catch::Contains("did you mean 'parity'") &&
                             Catch::Contains("valid tasks"));
  }
  try {
    make_task("parity", {{"p2", "0.5"}});
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.param() == "p2");
    CHECK_THAT(e.what(), Catch::Contains("did you mean 'p1'"));
  }
  for (const auto& bad : {"1.5", "-0.1", "abc", ""}) {
    INFO("p1 = " << bad);
    CHECK_THROWS_AS(make_task("parity", {{"p1", bad}}), TaskError);
  }
  CHECK_THROWS_WITH(make_task("parity", {{"output", "all"}}), Catch::Contains("'output'"));
}
