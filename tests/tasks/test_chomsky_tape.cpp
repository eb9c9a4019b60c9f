// The tape layout shared by the fifteen Chomsky tasks (chomsky.md §2), for each at n = 1..40, 100
// and 500: the lengths L_in(n) and L_out(L) of the spec's table, the input tape free of blanks and
// then only blanks, input_length, targets null on the tape and, on the blanks, output classes with
// nulls only after a terminated output's `<eos>`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>

#include "tests/tasks/tape_helpers.hpp"

using namespace srbench::tasks;
using namespace srbench::test;

namespace {

struct Layout {
  std::function<int(int)> input_length;   // L_in(n)
  std::function<int(int)> output_length;  // L_out(L)
  bool terminated;                        // output ends in <eos>, nulls after it
};

const std::map<std::string, Layout>& spec_layouts() {
  const auto n = [](int x) { return x; };
  const auto one = [](int) { return 1; };
  static const std::map<std::string, Layout> layouts = {
      {"parity_check", {n, one, false}},
      {"even_pairs", {n, one, false}},
      {"cycle_navigation", {n, one, false}},
      {"modular_arithmetic_brackets", {n, one, false}},
      {"solve_equation", {n, one, false}},
      {"missing_duplicate_string", {n, one, false}},
      {"modular_arithmetic", {[](int x) { return x % 2 ? x : x - 1; }, one, false}},
      {"reverse_string", {n, n, false}},
      {"odds_first", {n, n, false}},
      {"bucket_sort", {n, n, false}},
      {"binary_multiplication", {n, n, true}},
      {"stack_manipulation", {n, [](int L) { return L + 1; }, true}},
      {"binary_addition", {n, [](int L) { return L + 1; }, true}},
      {"duplicate_string", {n, [](int L) { return 2 * L; }, false}},
      {"compute_sqrt", {n, [](int L) { return (L + 1) / 2; }, false}},
  };
  return layouts;
}

}  // namespace

TEST_CASE("chomsky tape: the fifteen tasks, and only they, have the tape layout", "[tasks][chomsky]") {
  std::vector<std::string> tape_tasks;
  for (const auto& info : task_registry())
    if (dynamic_cast<const TapeTask*>(make_task(info.name, buildable_params(info.name)).get()))
      tape_tasks.push_back(info.name);
  std::vector<std::string> expected;
  for (const auto& [name, layout] : spec_layouts()) expected.push_back(name);
  std::sort(tape_tasks.begin(), tape_tasks.end());
  CHECK(tape_tasks == expected);
}

TEST_CASE("chomsky tape: lengths, blanks, input_length and scored positions of every task", "[tasks][chomsky]") {
  std::vector<int> lengths;
  for (int n = 1; n <= 40; ++n) lengths.push_back(n);
  lengths.insert(lengths.end(), {100, 500});
  for (const auto& [name, layout] : spec_layouts()) {
    const auto task = make_tape_task(name);
    const int32_t blank = task->vocab().id("_");
    const auto& classes = task->output_classes();
    const int32_t eos = task->vocab().contains("<eos>") ? task->vocab().id("<eos>") : -2;
    CHECK(layout.terminated == (eos >= 0));
    for (const int n : lengths) {
      const int L = layout.input_length(n), L_out = layout.output_length(L);
      INFO(name << " n = " << n);
      REQUIRE(task->input_length(n) == L);
      REQUIRE(task->output_length(L) == L_out);
      REQUIRE(task->max_sequence_length(n) == L + L_out);
      for (uint64_t i = 0; i < (n <= 40 ? 6 : 2); ++i) {
        const Example ex = task->sample(9, Stream::Train, i, n);
        REQUIRE(ex.input_length == L);
        REQUIRE(static_cast<int>(ex.tokens.size()) == L + L_out);  // every example of one n: the same T
        REQUIRE(ex.targets.size() == ex.tokens.size());
        for (int t = 0; t < L; ++t) {
          REQUIRE(ex.tokens[t] != blank);
          REQUIRE(ex.targets[t] == kNotScored);
        }
        bool after_eos = false;
        for (int t = L; t < L + L_out; ++t) {
          REQUIRE(ex.tokens[t] == blank);
          if (after_eos) {
            REQUIRE(ex.targets[t] == kNotScored);
            continue;
          }
          REQUIRE(std::find(classes.begin(), classes.end(), ex.targets[t]) != classes.end());
          after_eos = ex.targets[t] == eos;
        }
        if (layout.terminated) REQUIRE(after_eos);  // the output ended in <eos>
        // The targets are the task's output for the input tape.
        const std::vector<int32_t> out = task->output(std::span<const int32_t>(ex.tokens).first(static_cast<size_t>(L)));
        REQUIRE(std::equal(out.begin(), out.end(), ex.targets.begin() + L));
      }
    }
  }
}
