#include <catch2/catch.hpp>
#include <set>

#include "tasks/modadd.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

const ModAddTask& as_modadd(const std::unique_ptr<Task>& t) { return dynamic_cast<const ModAddTask&>(*t); }

std::vector<ModPair> to_vector(std::span<const ModPair> pairs) { return {pairs.begin(), pairs.end()}; }

// (a op b) mod p in 0..p-1, from the names.
int64_t expected_value(int64_t a, const std::string& op, int64_t b, int64_t p) {
  const int64_t raw = op == "+" ? a + b : op == "-" ? a - b : a * b;
  return ((raw % p) + p) % p;
}

void require_error(const RawParams& params, const std::string& param, const std::string& mentions = "") {
  INFO("params naming " << param);
  try {
    make_task("modadd", params);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "modadd");
    CHECK(e.param() == param);
    if (!mentions.empty()) CHECK_THAT(e.what(), Catch::Contains(mentions));
  }
}

}  // namespace

TEST_CASE("modadd: hand-worked examples for each op", "[tasks][modadd]") {
  struct Case {
    const char* op;
    int32_t a, b;
    const char* value;
  };
  // p = 97: 50 + 60 = 110 ≡ 13; 3 - 5 = -2 ≡ 95; 10 · 20 = 200 ≡ 6; 96 · 96 = 9216 = 95·97 + 1 ≡ 1
  for (const Case& c : {Case{"+", 50, 60, "13"}, Case{"-", 3, 5, "95"}, Case{"*", 10, 20, "6"}, Case{"*", 96, 96, "1"}}) {
    const auto task = make_task("modadd", {{"op", c.op}});
    const auto& m = as_modadd(task);
    REQUIRE(m.vocab().size() == 99);
    CHECK(m.vocab().name(97) == c.op);
    CHECK(m.vocab().name(98) == "=");
    Example ex;
    m.format({c.a, c.b}, ex);
    CHECK(token_names(m, ex) == V{std::to_string(c.a), c.op, std::to_string(c.b), "="});
    CHECK(target_names(m, ex) == V{"", "", "", c.value});
  }
}

TEST_CASE("modadd: 1000 random examples per op agree with (a op b) mod p from the names", "[tasks][modadd]") {
  for (const char* op : {"+", "-", "*"}) {
    for (int p : {2, 7, 97}) {
      INFO("op " << op << ", p " << p);
      const auto task = make_task("modadd", {{"op", op}, {"p", std::to_string(p)}, {"train_fraction", "0.5"}});
      for (uint64_t i = 0; i < 1000; ++i) {
        const Stream stream = i % 2 ? Stream::Eval : Stream::Train;
        const Example ex = task->sample(3, stream, i, 8);
        const auto tok = token_names(*task, ex), tgt = target_names(*task, ex);
        REQUIRE(tok.size() == 4);
        REQUIRE(tok[1] == op);
        REQUIRE(tok[3] == "=");
        const int64_t a = std::stoll(tok[0]), b = std::stoll(tok[2]);
        REQUIRE((a >= 0 && a < p && b >= 0 && b < p));
        REQUIRE(tgt == V{"", "", "", std::to_string(expected_value(a, op, b, p))});
      }
    }
  }
}

TEST_CASE("modadd: the split is a partition of all p² pairs, ⌊f·p²⌋ of them for training", "[tasks][modadd]") {
  struct Case {
    int p;
    const char* f;
    size_t train_size;  // ⌊f·p²⌋ worked by hand
  };
  for (const Case& c : {Case{97, "0.4", 3763}, Case{23, "0.5", 264}, Case{2, "0.3", 1}, Case{2, "0.9", 3},
                        Case{1999, "0.01", 39960}}) {
    INFO("p " << c.p << ", f " << c.f);
    const auto task = make_task("modadd", {{"p", std::to_string(c.p)}, {"train_fraction", c.f}}, {5});
    const auto& m = as_modadd(task);
    CHECK(m.train_pairs().size() == c.train_size);
    const size_t total = static_cast<size_t>(c.p) * c.p;
    CHECK(m.heldout_pairs().size() == total - c.train_size);
    std::vector<int> seen(total, 0);
    for (const auto& pr : m.train_pairs()) seen.at(static_cast<size_t>(pr.a * c.p + pr.b)) += 1;
    for (const auto& pr : m.heldout_pairs()) seen.at(static_cast<size_t>(pr.a * c.p + pr.b)) += 1;
    CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(total));  // each pair exactly once
  }
}

TEST_CASE("modadd: the split is the Fisher–Yates shuffle of pairs a·p+b seeded by the data seed", "[tasks][modadd]") {
  const int p = 11;
  std::vector<ModPair> pairs;
  for (int32_t a = 0; a < p; ++a)
    for (int32_t b = 0; b < p; ++b) pairs.push_back({a, b});
  Rng rng(hash_words({17, ModAddTask::kSplitTag}));
  rng.shuffle(pairs);
  const auto task = make_task("modadd", {{"p", "11"}, {"train_fraction", "0.25"}}, {17});
  const auto& m = as_modadd(task);
  REQUIRE(m.train_pairs().size() == 30);  // ⌊0.25·121⌋
  CHECK(to_vector(m.train_pairs()) == std::vector<ModPair>(pairs.begin(), pairs.begin() + 30));
  CHECK(to_vector(m.heldout_pairs()) == std::vector<ModPair>(pairs.begin() + 30, pairs.end()));
}

TEST_CASE("modadd: streams draw only from their set; the split depends on the data seed only", "[tasks][modadd]") {
  const auto task = make_task("modadd", {{"p", "23"}}, {3});
  const auto& m = as_modadd(task);
  std::set<std::pair<int, int>> train, heldout;
  for (const auto& pr : m.train_pairs()) train.insert({pr.a, pr.b});
  for (const auto& pr : m.heldout_pairs()) heldout.insert({pr.a, pr.b});

  std::set<std::pair<int, int>> drawn_train;
  for (uint64_t seed : {0, 1, 99}) {
    for (uint64_t i = 0; i < 1000; ++i) {
      for (Stream s : {Stream::Train, Stream::TrainArch, Stream::Eval}) {
        const Example ex = task->sample(seed, s, i, 1);
        const std::pair<int, int> pr{ex.tokens[0], ex.tokens[2]};  // ids of numbers are the numbers
        if (s == Stream::Eval) {
          REQUIRE(heldout.count(pr));
        } else {
          REQUIRE(train.count(pr));
          drawn_train.insert(pr);
        }
      }
    }
  }
  // Uniform with replacement over the 211 training pairs: 6000 draws see them all.
  CHECK(drawn_train.size() == train.size());

  // The same data seed gives the same split; another data seed another split.
  const auto same = make_task("modadd", {{"p", "23"}}, {3});
  const auto other = make_task("modadd", {{"p", "23"}}, {4});
  CHECK(to_vector(as_modadd(same).train_pairs()) == to_vector(m.train_pairs()));
  CHECK(to_vector(as_modadd(other).train_pairs()) != to_vector(m.train_pairs()));
}

TEST_CASE("modadd: n is ignored", "[tasks][modadd]") {
  const auto task = make_task("modadd", {});
  CHECK_FALSE(task->uses_length());
  for (int n : {-3, 0, 1, 1000000}) {
    CHECK(task->max_sequence_length(n) == 4);
    CHECK(task->sample(0, Stream::Train, 0, n).tokens.size() == 4);
  }
}

TEST_CASE("modadd: bad parameters are errors naming them", "[tasks][modadd]") {
  require_error({{"p", "91"}}, "p", "91");  // 7 · 13
  require_error({{"p", "1"}}, "p");
  require_error({{"p", "2003"}}, "p");  // prime, but above 2000
  require_error({{"p", "1000"}}, "p", "1000");
  require_error({{"p", "seven"}}, "p");
  require_error({{"op", "/"}}, "op");
  for (const char* f : {"0", "1", "1.0", "1.5", "-0.1", "half"}) require_error({{"train_fraction", f}}, "train_fraction");
  require_error({{"p", "2"}, {"train_fraction", "0.2"}}, "train_fraction");  // ⌊0.8⌋ = 0 training pairs
  CHECK_NOTHROW(make_task("modadd", {{"p", "2"}, {"train_fraction", "0.25"}}));
  CHECK_NOTHROW(make_task("modadd", {{"p", "1999"}}));
}
