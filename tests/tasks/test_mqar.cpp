#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "tasks/mqar.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

void require_error(const RawParams& params, const std::string& param) {
  INFO("error naming " << param);
  try {
    make_task("mqar", params);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "mqar");
    CHECK(e.param() == param);
  }
}

}  // namespace

TEST_CASE("mqar: hand-worked example", "[tasks][mqar]") {
  const auto task = make_task("mqar", {{"keys", "4"}, {"values", "3"}});
  const auto& m = dynamic_cast<const MqarTask&>(*task);
  CHECK(m.vocab().names() == V{"k0", "k1", "k2", "k3", "v0", "v1", "v2"});
  // (k3 v1) (k0 v2), asked in the order k0 k3.
  Example ex;
  m.format({3, 0}, {1, 2}, {1, 0}, ex);
  CHECK(token_names(m, ex) == V{"k3", "v1", "k0", "v2", "k0", "k3"});
  CHECK(target_names(m, ex) == V{"", "", "", "", "v2", "v1"});
}

TEST_CASE("mqar: 1000 random examples agree with a map of the first half's pairs", "[tasks][mqar]") {
  for (int keys : {1, 8, 64}) {
    const auto task = make_task("mqar", {{"keys", std::to_string(keys)}, {"values", "5"}});
    for (uint64_t i = 0; i < 1000; ++i) {
      const int n = 1 + static_cast<int>(i % static_cast<uint64_t>(keys));
      INFO("keys " << keys << ", n " << n);
      const Example ex = task->sample(8, Stream::Train, i, n);
      const auto tok = token_names(*task, ex), tgt = target_names(*task, ex);
      REQUIRE(tok.size() == static_cast<size_t>(3 * n));
      std::map<std::string, std::string> value_of;
      for (int j = 0; j < n; ++j) {
        const std::string &k = tok[2 * j], &v = tok[2 * j + 1];
        REQUIRE(k[0] == 'k');
        REQUIRE(v[0] == 'v');
        REQUIRE(value_of.count(k) == 0);  // keys distinct
        value_of[k] = v;
        REQUIRE(tgt[2 * j].empty());
        REQUIRE(tgt[2 * j + 1].empty());
      }
      std::set<std::string> asked;
      for (int j = 2 * n; j < 3 * n; ++j) {
        REQUIRE(value_of.count(tok[j]) == 1);
        REQUIRE(tgt[j] == value_of[tok[j]]);
        asked.insert(tok[j]);
      }
      REQUIRE(asked.size() == static_cast<size_t>(n));  // every key asked once
    }
  }
}

TEST_CASE("mqar: keys, values and the order of the queries are uniform", "[tasks][mqar]") {
  const auto task = make_task("mqar", {{"keys", "8"}, {"values", "4"}});
  const int draws = 4000;
  int first_asked_first = 0;
  std::map<std::string, int> keys, values;
  for (uint64_t i = 0; i < draws; ++i) {
    const auto tok = token_names(*task, task->sample(1, Stream::Eval, i, 2));
    first_asked_first += tok[4] == tok[0];
    keys[tok[0]] += 1, keys[tok[2]] += 1;
    values[tok[1]] += 1, values[tok[3]] += 1;
  }
  CHECK(first_asked_first / double(draws) == Approx(0.5).margin(0.03));
  REQUIRE(keys.size() == 8);
  for (const auto& [k, c] : keys) CHECK(c / (2.0 * draws) == Approx(1.0 / 8).margin(0.015));
  REQUIRE(values.size() == 4);
  for (const auto& [v, c] : values) CHECK(c / (2.0 * draws) == Approx(0.25).margin(0.02));
}

TEST_CASE("mqar: draw_distinct gives distinct values in range", "[tasks][mqar]") {
  Rng rng(3);
  for (int range : {1, 5, 100}) {
    for (int count = 0; count <= range; count += 1 + range / 7) {
      const auto v = draw_distinct(rng, count, range);
      REQUIRE(v.size() == static_cast<size_t>(count));
      REQUIRE(std::set<int32_t>(v.begin(), v.end()).size() == v.size());
      for (int32_t x : v) REQUIRE((x >= 0 && x < range));
    }
  }
}

TEST_CASE("mqar: n above keys and bad parameters are errors naming them", "[tasks][mqar]") {
  const auto task = make_task("mqar", {{"keys", "10"}});
  CHECK_NOTHROW(task->sample(0, Stream::Train, 0, 10));
  for (int n : {11, 0, -1}) {
    try {
      task->sample(0, Stream::Train, 0, n);
      FAIL("n = " << n << " accepted");
    } catch (const TaskError& e) {
      CHECK(e.task() == "mqar");
      CHECK(e.param() == "n");
      CHECK_THAT(e.what(), Catch::Contains("1..10"));
    }
  }
  for (const char* p : {"keys", "values"}) {
    require_error({{p, "0"}}, p);
    require_error({{p, "4097"}}, p);
    require_error({{p, "many"}}, p);
  }
}
