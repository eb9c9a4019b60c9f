#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "tasks/needle.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

// What an example says, read from its names: everything before `<q>`.
struct Haystack {
  std::vector<std::string> keys;  // in order of appearance
  size_t fillers = 0;
  size_t fillers_before_query = 0;  // before the queried key's first appearance
  int query_occurrences = 0;
  std::string answer;  // the token after the queried key's first appearance
};

Haystack read(const std::vector<std::string>& tok) {
  REQUIRE(tok.size() >= 2);
  REQUIRE(tok[tok.size() - 2] == "<q>");
  const std::string query = tok.back();
  Haystack h;
  for (size_t t = 0; t + 2 < tok.size(); ++t) {
    const char kind = tok[t][0];
    if (kind == 'f') ++h.fillers;
    if (kind == 'k') {
      REQUIRE(t + 3 < tok.size());
      REQUIRE(tok[t + 1][0] == 'v');  // every key is followed by a value
      h.keys.push_back(tok[t]);
      if (tok[t] == query && h.query_occurrences++ == 0) {
        h.fillers_before_query = h.fillers;
        h.answer = tok[t + 1];
      }
    }
    if (kind == 'v') REQUIRE(tok.at(t - 1)[0] == 'k');
  }
  return h;
}

void require_error(const RawParams& params, const std::string& param, const std::string& mentions = "") {
  INFO("error naming " << param);
  try {
    make_task("needle", params);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "needle");
    CHECK(e.param() == param);
    if (!mentions.empty()) CHECK_THAT(e.what(), Catch::Contains(mentions));
  }
}

}  // namespace

TEST_CASE("needle: hand-worked example and depth positions", "[tasks][needle]") {
  const auto task = make_task("needle", {{"filler", "4"}, {"key_vocab", "4"}, {"values", "4"}, {"keys", "3"}});
  const auto& nt = dynamic_cast<const NeedleTask&>(*task);
  CHECK(nt.vocab().names() == V{"f0", "f1", "f2", "f3", "k0", "k1", "k2", "k3", "v0", "v1", "v2", "v3", "<q>"});
  // Fillers f0 f1 f2; (k2 v3) and (k0 v1) after one filler, in that order; (k1 v0) after all three.
  Example ex;
  nt.format({0, 1, 2}, {{2, 3, 1}, {1, 0, 3}, {0, 1, 1}}, 2, ex);
  CHECK(token_names(nt, ex) == V{"f0", "k2", "v3", "k0", "v1", "f1", "f2", "k1", "v0", "<q>", "k2"});
  CHECK(target_names(nt, ex) == V{"", "", "", "", "", "", "", "", "", "", "v3"});
  CHECK(task->max_sequence_length(3) == 11);

  // ⌊depth·n + ½⌋
  CHECK(NeedleTask::query_gap(0.5, 3) == 2);
  CHECK(NeedleTask::query_gap(0.5, 4) == 2);
  CHECK(NeedleTask::query_gap(0.1, 4) == 0);
  CHECK(NeedleTask::query_gap(0.25, 2) == 1);
  CHECK(NeedleTask::query_gap(0.0, 7) == 0);
  CHECK(NeedleTask::query_gap(1.0, 7) == 7);
}

TEST_CASE("needle: 1000 random examples agree with a scan for the queried key", "[tasks][needle]") {
  for (int keys : {1, 3, 16}) {
    INFO("keys " << keys);
    const auto task = make_task("needle", {{"keys", std::to_string(keys)}});
    for (uint64_t i = 0; i < 1000; ++i) {
      const int n = 1 + static_cast<int>(i % 50);
      const Example ex = task->sample(2, i % 2 ? Stream::Eval : Stream::Train, i, n);
      const auto tok = token_names(*task, ex), tgt = target_names(*task, ex);
      REQUIRE(tok.size() == static_cast<size_t>(n + 2 * keys + 2));
      const Haystack h = read(tok);
      REQUIRE(h.fillers == static_cast<size_t>(n));
      REQUIRE(h.keys.size() == static_cast<size_t>(keys));
      REQUIRE(std::set<std::string>(h.keys.begin(), h.keys.end()).size() == h.keys.size());  // distinct
      REQUIRE(h.query_occurrences == 1);
      for (size_t t = 0; t + 1 < tgt.size(); ++t) REQUIRE(tgt[t].empty());
      REQUIRE(tgt.back() == h.answer);
    }
  }
}

TEST_CASE("needle: a fixed depth puts exactly ⌊depth·n + ½⌋ fillers before the queried pair", "[tasks][needle]") {
  for (const char* depth : {"0", "0.0", "0.25", "0.5", "0.7", "1", "1.0"}) {
    const auto task = make_task("needle", {{"keys", "4"}, {"depth", depth}});
    for (uint64_t i = 0; i < 300; ++i) {
      const int n = 1 + static_cast<int>(i % 60);
      const Haystack h = read(token_names(*task, task->sample(4, Stream::Eval, i, n)));
      INFO("depth " << depth << ", n " << n);
      REQUIRE(h.fillers_before_query == static_cast<size_t>(std::floor(std::stod(depth) * n + 0.5)));
    }
  }
}

TEST_CASE("needle: uniform depth spans the haystack; pairs sharing a gap come in random order", "[tasks][needle]") {
  const auto task = make_task("needle", {});
  const int n = 10, draws = 4000;
  std::vector<int> at(n + 1, 0);
  double depth_sum = 0;
  std::set<std::string> fillers;
  for (uint64_t i = 0; i < draws; ++i) {
    const auto tok = token_names(*task, task->sample(6, Stream::Train, i, n));
    const Haystack h = read(tok);
    at.at(h.fillers_before_query) += 1;
    depth_sum += static_cast<double>(h.fillers_before_query) / n;
    for (const auto& name : tok)
      if (name[0] == 'f') fillers.insert(name);
  }
  // ⌊u·10 + ½⌋ for u uniform in [0, 1): positions 1..9 have probability 1/10, 0 and 10 1/20.
  CHECK(at[0] / double(draws) == Approx(0.05).margin(0.015));
  CHECK(at[n] / double(draws) == Approx(0.05).margin(0.015));
  for (int g = 1; g < n; ++g) CHECK(at[g] / double(draws) == Approx(0.1).margin(0.02));
  CHECK(depth_sum / draws == Approx(0.5).margin(0.02));
  CHECK(fillers.size() == 16);

  // n = 1, depth 0: the other pair is in the queried pair's gap half the time, and then either
  // comes first with probability 1/2.
  const auto two = make_task("needle", {{"keys", "2"}, {"depth", "0"}});
  int shared = 0, query_first = 0;
  for (uint64_t i = 0; i < draws; ++i) {
    const auto tok = token_names(*two, two->sample(6, Stream::Train, i, 1));
    if (tok[2][0] == 'f') continue;  // the other pair is after the filler
    ++shared;
    query_first += tok[0] == tok.back();
  }
  CHECK(shared / double(draws) == Approx(0.5).margin(0.03));
  CHECK(query_first / double(shared) == Approx(0.5).margin(0.04));

  // The other pairs' gaps are uniform in 0..n: n = 4, each of the 5 gaps with probability 1/5.
  const auto fixed = make_task("needle", {{"keys", "2"}, {"depth", "0.5"}});
  std::vector<int> other_gap(5, 0);
  for (uint64_t i = 0; i < draws; ++i) {
    const auto tok = token_names(*fixed, fixed->sample(6, Stream::Train, i, 4));
    int fillers_before = 0;
    for (size_t t = 0; t + 2 < tok.size(); ++t) {
      if (tok[t][0] == 'f') ++fillers_before;
      if (tok[t][0] == 'k' && tok[t] != tok.back()) other_gap.at(static_cast<size_t>(fillers_before)) += 1;
    }
  }
  for (int c : other_gap) CHECK(c / double(draws) == Approx(0.2).margin(0.025));
}

TEST_CASE("needle: bad parameters are errors naming them", "[tasks][needle]") {
  require_error({{"keys", "17"}}, "keys", "17");  // key_vocab 16 by default
  require_error({{"keys", "5"}, {"key_vocab", "4"}}, "keys", "key_vocab");
  require_error({{"keys", "0"}}, "keys");
  for (const char* p : {"filler", "key_vocab", "values"}) {
    require_error({{p, "0"}}, p);
    require_error({{p, "4097"}}, p);
    require_error({{p, "x"}}, p);
  }
  for (const char* d : {"1.5", "-0.1", "deep", "", "nan", "0.5x", "Uniform"}) require_error({{"depth", d}}, "depth", d);
  CHECK_NOTHROW(make_task("needle", {{"keys", "16"}, {"depth", "1"}}));
  CHECK_NOTHROW(make_task("needle", {{"filler", "4096"}, {"key_vocab", "1"}, {"values", "1"}}));
}
