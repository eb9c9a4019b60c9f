// dyck: hand-worked words, 1000s of random words relabelled with an explicit stack over token
// names, the walk's invariants and distribution, and every bad parameter.
#include <catch2/catch.hpp>

#include <map>

#include "tasks/dyck.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

const std::string kOpens = "([{<", kCloses = ")]}>";

// Bracket names -> ids in `task`'s vocabulary.
std::vector<int32_t> word_ids(const Task& task, const V& names) {
  std::vector<int32_t> ids;
  for (const auto& s : names) ids.push_back(task.vocab().id(s));
  return ids;
}

Example formatted(const Task& task, const V& names) {
  Example ex;
  dynamic_cast<const DyckTask&>(task).format(word_ids(task, names), ex);
  return ex;
}

// The reference: walks a word of bracket names with an explicit stack of names.
struct StackRun {
  bool prefixes_valid = true;  // no close on an empty stack or on the wrong type
  int max_depth = 0;
  V tops, depths;              // labels after each bracket while prefixes are valid
  bool closed = false;         // valid and the stack ends empty
};

StackRun run_stack(const V& word) {
  StackRun r;
  std::vector<char> stack;
  for (const auto& b : word) {
    REQUIRE(b.size() == 1);
    const char c = b[0];
    if (kOpens.find(c) != std::string::npos) {
      stack.push_back(c);
    } else {
      const size_t type = kCloses.find(c);
      REQUIRE(type != std::string::npos);
      if (stack.empty() || stack.back() != kOpens[type]) {
        r.prefixes_valid = false;
        return r;
      }
      stack.pop_back();
    }
    r.max_depth = std::max(r.max_depth, static_cast<int>(stack.size()));
    r.tops.push_back(stack.empty() ? "t0" : "t" + std::to_string(kOpens.find(stack.back()) + 1));
    r.depths.push_back("d" + std::to_string(stack.size()));
  }
  r.closed = stack.empty();
  return r;
}

bool is_open_name(const std::string& b) { return kOpens.find(b[0]) != std::string::npos; }

void check_error(const RawParams& params, const std::string& param, int n = 4) {
  INFO("params → expect an error naming " << param);
  try {
    const auto task = make_task("dyck", params);
    task->sample(0, Stream::Train, 0, n);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "dyck");
    CHECK(e.param() == param);
  }
}

}  // namespace

TEST_CASE("dyck: vocabulary is the first k pairs, then the labels", "[tasks][dyck]") {
  CHECK(make_task("dyck", {{"k", "4"}})->vocab().names() == V{"(", ")", "[", "]", "{", "}", "<", ">", "t0", "t1", "t2", "t3", "t4"});
  CHECK(make_task("dyck", {})->vocab().names() == V{"(", ")", "[", "]", "t0", "t1", "t2"});
  CHECK(make_task("dyck", {{"k", "1"}, {"label", "depth"}, {"max_depth", "3"}})->vocab().names() ==
        V{"(", ")", "d0", "d1", "d2", "d3"});
  CHECK(make_task("dyck", {{"k", "3"}, {"label", "balanced"}})->vocab().names() == V{"(", ")", "[", "]", "{", "}", "yes", "no"});
}

TEST_CASE("dyck: hand-worked example ( [ ] ) in every label and output mode", "[tasks][dyck]") {
  const V word = {"(", "[", "]", ")"};
  {
    const auto task = make_task("dyck", {});
    const Example ex = formatted(*task, word);
    CHECK(token_names(*task, ex) == word);
    CHECK(target_names(*task, ex) == V{"t1", "t2", "t1", "t0"});
  }
  {
    const auto task = make_task("dyck", {{"label", "depth"}});
    CHECK(target_names(*task, formatted(*task, word)) == V{"d1", "d2", "d1", "d0"});
  }
  {
    const auto task = make_task("dyck", {{"output", "final"}});
    CHECK(target_names(*task, formatted(*task, word)) == V{"", "", "", "t0"});
  }
  {
    const auto task = make_task("dyck", {{"output", "scratchpad"}, {"label", "depth"}});
    const Example ex = formatted(*task, word);
    CHECK(token_names(*task, ex) == V{"(", "d1", "[", "d2", "]", "d1", ")", "d0"});
    CHECK(target_names(*task, ex) == V{"d1", "", "d2", "", "d1", "", "d0", ""});
  }
  {
    const auto task = make_task("dyck", {{"k", "4"}});
    CHECK(target_names(*task, formatted(*task, {"<", "{", "}", "(", ")", "[", "]", ">", "{"})) ==
          V{"t4", "t3", "t4", "t1", "t4", "t2", "t4", "t0", "t3"});
  }
  {
    const auto task = make_task("dyck", {{"label", "balanced"}});
    const Example yes = formatted(*task, word);
    CHECK(token_names(*task, yes) == word);
    CHECK(target_names(*task, yes) == V{"", "", "", "yes"});
    CHECK(target_names(*task, formatted(*task, {"(", "[", ")", "]"})) == V{"", "", "", "no"});  // crossed
    CHECK(target_names(*task, formatted(*task, {"(", "[", "]", "("})) == V{"", "", "", "no"});  // not closed
    CHECK(target_names(*task, formatted(*task, {")", "(", "[", "]"})) == V{"", "", "", "no"});  // empty-stack close
    CHECK(target_names(*task, formatted(*task, {"(", ")", "[", "]"})) == V{"", "", "", "yes"});
  }
}

TEST_CASE("dyck: labels reject an invalid or too-deep prefix", "[tasks][dyck]") {
  const auto task = make_task("dyck", {{"max_depth", "2"}});
  const auto& dyck = dynamic_cast<const DyckTask&>(*task);
  CHECK_THROWS_AS(dyck.labels(word_ids(dyck, {"(", "]"})), std::invalid_argument);
  CHECK_THROWS_AS(dyck.labels(word_ids(dyck, {")"})), std::invalid_argument);
  CHECK_THROWS_AS(dyck.labels(word_ids(dyck, {"(", "(", "("})), std::invalid_argument);
  CHECK(dyck.labels(word_ids(dyck, {"(", "("})).size() == 2);
}

TEST_CASE("dyck top/depth: 1000s of random words agree with an explicit stack", "[tasks][dyck]") {
  struct Config {
    int k, max_depth;
    double p_open;
  };
  const std::vector<Config> configs = {{1, 1, 0.5}, {2, 8, 0.5}, {3, 3, 0.9}, {4, 50, 0.7}, {4, 2, 0.2}, {2, 256, 1.0}, {3, 5, 0.0}};
  int examples = 0;
  for (const auto& c : configs)
    for (const char* label : {"top", "depth"})
      for (const char* mode : {"states", "final", "scratchpad"}) {
        const RawParams params = {{"k", std::to_string(c.k)}, {"max_depth", std::to_string(c.max_depth)},
                                  {"p_open", std::to_string(c.p_open)}, {"label", label}, {"output", mode}};
        const auto task = make_task("dyck", params);
        const bool scratch = std::string(mode) == "scratchpad", final = std::string(mode) == "final";
        for (uint64_t i = 0; i < 60; ++i, ++examples) {
          INFO("k=" << c.k << " max_depth=" << c.max_depth << " p_open=" << c.p_open << " " << label << " " << mode << " #" << i);
          const int n = 1 + static_cast<int>((i * 7) % 40);
          const Example ex = task->sample(11, Stream::Train, i, n);
          const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
          REQUIRE(static_cast<int>(tok.size()) == task->max_sequence_length(n));
          V word;
          for (int t = 0; t < n; ++t) word.push_back(tok[scratch ? 2 * t : t]);
          for (const auto& b : word) {  // only the first k bracket types
            const size_t pos = (kOpens + kCloses).find(b);
            REQUIRE(pos != std::string::npos);
            REQUIRE(static_cast<int>(pos % 4) < c.k);
          }
          const StackRun ref = run_stack(word);
          REQUIRE(ref.prefixes_valid);
          REQUIRE(ref.max_depth <= c.max_depth);
          const V& labels = std::string(label) == "top" ? ref.tops : ref.depths;
          for (int t = 0; t < n; ++t) {
            if (scratch) {
              CHECK(tgt[2 * t] == labels[t]);
              CHECK(tok[2 * t + 1] == labels[t]);
              CHECK(tgt[2 * t + 1].empty());
            } else {
              CHECK(tgt[t] == (final && t != n - 1 ? "" : labels[t]));
            }
          }
        }
      }
  CHECK(examples >= 1000);
}

TEST_CASE("dyck: the walk opens with prob p_open where free, with uniform types", "[tasks][dyck]") {
  for (double p_open : {0.3, 0.5, 0.8}) {
    const auto task = make_task("dyck", {{"k", "4"}, {"max_depth", "256"}, {"p_open", std::to_string(p_open)}});
    int free = 0, opened = 0;
    std::map<char, int> types;
    for (uint64_t i = 0; i < 500; ++i) {
      const V word = token_names(*task, task->sample(5, Stream::Eval, i, 40));
      int depth = 0;
      for (const auto& b : word) {
        const bool open = is_open_name(b);
        if (depth > 0) free += 1, opened += open;  // depth 256 is never reached in 40 steps
        if (open) types[b[0]] += 1;
        depth += open ? 1 : -1;
      }
    }
    INFO("p_open = " << p_open);
    CHECK(static_cast<double>(opened) / free == Approx(p_open).margin(0.02));
    int total = 0;
    for (const auto& [type, count] : types) total += count;
    REQUIRE(types.size() == 4);
    for (const auto& [type, count] : types) CHECK(static_cast<double>(count) / total == Approx(0.25).margin(0.02));
  }
  // At max_depth the walk closes: with max_depth 1 every word is ( ) ( ) ...
  const auto shallow = make_task("dyck", {{"k", "1"}, {"max_depth", "1"}, {"p_open", "1"}});
  CHECK(token_names(*shallow, shallow->sample(0, Stream::Train, 0, 6)) == V{"(", ")", "(", ")", "(", ")"});
}

TEST_CASE("dyck balanced: 1000s of words; positives closed, negatives one corruption away", "[tasks][dyck]") {
  struct Config {
    int k, max_depth;
    double p_open;
  };
  const std::vector<Config> configs = {{1, 8, 0.5}, {2, 8, 0.5}, {3, 2, 0.8}, {4, 20, 0.6}, {2, 1, 0.5}, {4, 256, 1.0}};
  for (const auto& c : configs) {
    const auto task = make_task("dyck", {{"k", std::to_string(c.k)}, {"max_depth", std::to_string(c.max_depth)},
                                         {"p_open", std::to_string(c.p_open)}, {"label", "balanced"}});
    int yes = 0, no = 0, flips = 0, type_changes = 0;
    const int count = 1000;
    for (uint64_t i = 0; i < count; ++i) {
      INFO("k=" << c.k << " max_depth=" << c.max_depth << " p_open=" << c.p_open << " #" << i);
      const int n = 2 + 2 * static_cast<int>(i % 15);
      const Example ex = task->sample(3, Stream::Train, i, n);
      const V word = token_names(*task, ex), tgt = target_names(*task, ex);
      REQUIRE(static_cast<int>(word.size()) == n);
      for (int t = 0; t + 1 < n; ++t) REQUIRE(tgt[t].empty());
      const StackRun ref = run_stack(word);
      CHECK(tgt[n - 1] == (ref.closed ? "yes" : "no"));
      if (ref.closed) {
        yes += 1;
        CHECK(ref.max_depth <= c.max_depth);
        continue;
      }
      no += 1;
      // A negative is one bracket away from a closed word of the walk (within max_depth).
      int opens = 0;
      for (const auto& b : word) opens += is_open_name(b);
      (2 * opens == n ? type_changes : flips) += 1;
      bool repaired = false;
      for (int t = 0; t < n && !repaired; ++t)
        for (int r = 0; r < 2 * c.k && !repaired; ++r) {
          V fixed = word;
          fixed[t] = std::string(1, (r % 2 == 0 ? kOpens : kCloses)[r / 2]);
          const StackRun run = run_stack(fixed);
          repaired = run.closed && run.max_depth <= c.max_depth;
        }
      CHECK(repaired);
    }
    INFO("k=" << c.k << " yes=" << yes << " no=" << no << " flips=" << flips << " type changes=" << type_changes);
    CHECK(static_cast<double>(yes) / count == Approx(0.5).margin(0.05));
    CHECK(flips > 0);
    if (c.k == 1)
      CHECK(type_changes == 0);
    else
      CHECK(static_cast<double>(type_changes) / no == Approx(0.5).margin(0.08));
  }
}

TEST_CASE("dyck: bad parameters and lengths are errors naming them", "[tasks][dyck]") {
  check_error({{"k", "5"}}, "k");
  check_error({{"k", "0"}}, "k");
  check_error({{"k", "two"}}, "k");
  check_error({{"max_depth", "0"}}, "max_depth");
  check_error({{"max_depth", "257"}}, "max_depth");
  check_error({{"max_depth", "1.5"}}, "max_depth");
  check_error({{"p_open", "1.2"}}, "p_open");
  check_error({{"p_open", "-0.1"}}, "p_open");
  check_error({{"p_open", "x"}}, "p_open");
  check_error({{"label", "stack"}}, "label");
  check_error({{"output", "all"}}, "output");
  check_error({{"label", "balanced"}, {"output", "states"}}, "output");
  check_error({{"label", "balanced"}, {"output", "final"}}, "output");
  check_error({{"depth", "3"}}, "depth");
  check_error({{"label", "balanced"}}, "n", 5);
  check_error({{"label", "balanced"}}, "n", 1);
  check_error({{"label", "balanced"}}, "n", 0);
  check_error({}, "n", 0);
  check_error({{"label", "depth"}}, "n", -3);
  // Accepted at the edges.
  CHECK_NOTHROW(make_task("dyck", {{"k", "1"}, {"max_depth", "256"}, {"p_open", "0"}})->sample(0, Stream::Train, 0, 1));
  CHECK_NOTHROW(make_task("dyck", {{"k", "4"}, {"max_depth", "1"}, {"p_open", "1"}, {"label", "balanced"}})
                    ->sample(0, Stream::Train, 0, 2));
}
