#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "tasks/permutation.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::check_state_targets;
using srbench::test::state_inputs;
using srbench::test::token_names;
using V = std::vector<std::string>;
using Perm = std::vector<int>;  // one-line notation [σ(0) … σ(n-1)]

namespace {

Example example_of(const PermutationTask& task, const std::string& mode, const V& inputs) {
  return srbench::test::automaton_example(task, mode, inputs);
}

const PermutationTask& as_permutation(const std::unique_ptr<Task>& task) {
  return dynamic_cast<const PermutationTask&>(*task);
}

// Even iff n minus the number of cycles is even.
bool is_even(const Perm& p) {
  std::vector<bool> seen(p.size(), false);
  int cycles = 0;
  for (size_t start = 0; start < p.size(); ++start) {
    if (seen[start]) continue;
    ++cycles;
    for (size_t i = start; !seen[i]; i = static_cast<size_t>(p[i])) seen[i] = true;
  }
  return (static_cast<int>(p.size()) - cycles) % 2 == 0;
}

// The group's elements in lexicographic order: every permutation, or the even ones for A_n.
std::vector<Perm> group_elements(bool alternating, int degree) {
  Perm p(static_cast<size_t>(degree));
  for (int i = 0; i < degree; ++i) p[static_cast<size_t>(i)] = i;
  std::vector<Perm> out;
  do
    if (!alternating || is_even(p)) out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

// The generators g0, g1, … as tasks.md lists them, in one-line notation.
std::vector<Perm> generators(bool alternating, int degree) {
  Perm id(static_cast<size_t>(degree));
  for (int i = 0; i < degree; ++i) id[static_cast<size_t>(i)] = i;
  std::vector<Perm> gens = {id};
  if (!alternating) {
    Perm swap = id;  // (0 1)
    swap[0] = 1, swap[1] = 0;
    Perm shift(static_cast<size_t>(degree));  // i ↦ i+1 mod n
    for (int i = 0; i < degree; ++i) shift[static_cast<size_t>(i)] = (i + 1) % degree;
    gens.push_back(swap);
    gens.push_back(shift);
  } else {
    for (int x = 2; x < degree; ++x) {
      Perm c = id;  // (0 1 x): 0 ↦ 1, 1 ↦ x, x ↦ 0
      c[0] = 1, c[1] = x, c[static_cast<size_t>(x)] = 0;
      gens.push_back(c);
    }
  }
  return gens;
}

void check_error(const RawParams& params, const std::string& param) {
  srbench::test::check_task_error("permutation", params, param);
}

}  // namespace

TEST_CASE("permutation: vocabulary is the generators then p0..p{|G|-1}", "[tasks][permutation]") {
  CHECK(make_task("permutation", {{"degree", "3"}})->vocab().names() ==
        V{"g0", "g1", "g2", "p0", "p1", "p2", "p3", "p4", "p5"});
  CHECK(make_task("permutation", {{"group", "A"}, {"degree", "3"}})->vocab().names() == V{"g0", "g1", "p0", "p1", "p2"});
  struct Size {
    std::string group;
    int degree, generators, order;
  };
  for (const Size& s : {Size{"S", 4, 3, 24}, Size{"S", 5, 3, 120}, Size{"S", 6, 3, 720}, Size{"A", 4, 3, 12},
                       Size{"A", 5, 4, 60}, Size{"A", 6, 5, 360}}) {
    INFO(s.group << s.degree);
    const auto task = make_task("permutation", {{"group", s.group}, {"degree", std::to_string(s.degree)}});
    CHECK(as_permutation(task).generator_count() == s.generators);
    CHECK(as_permutation(task).group_order() == s.order);
    CHECK(task->vocab().size() == s.generators + s.order);
    CHECK(task->vocab().name(s.generators) == "p0");
    CHECK(task->vocab().name(task->vocab().size() - 1) == "p" + std::to_string(s.order - 1));
  }
  CHECK(as_permutation(make_task("permutation", {})).group_order() == 120);  // default S5
}

TEST_CASE("permutation: hand-worked S3 example in every output mode", "[tasks][permutation]") {
  // S3 in lexicographic order: p0 [0 1 2], p1 [0 2 1], p2 [1 0 2], p3 [1 2 0], p4 [2 0 1], p5 [2 1 0].
  // g1 = (0 1), g2 = i ↦ i+1 = [1 2 0]. Reading g1: σ = [1 0 2] = p2; then g2∘σ = [g2(1) g2(0) g2(2)]
  // = [2 1 0] = p5 (σ∘g2 would be [0 2 1] = p1); g0 keeps p5.
  const V in = {"g1", "g2", "g0"};
  for (const std::string mode : {"states", "final", "scratchpad"}) {
    INFO(mode);
    const auto task = make_task("permutation", {{"degree", "3"}, {"output", mode}});
    const auto& pt = as_permutation(task);
    const Example ex = example_of(pt, mode, in);
    if (mode == "states") {
      CHECK(token_names(pt, ex) == in);
      CHECK(target_names(pt, ex) == V{"p2", "p5", "p5"});
    } else if (mode == "final") {
      CHECK(token_names(pt, ex) == in);
      CHECK(target_names(pt, ex) == V{"", "", "p5"});
    } else {
      CHECK(token_names(pt, ex) == V{"g1", "p2", "g2", "p5", "g0", "p5"});
      CHECK(target_names(pt, ex) == V{"p2", "", "p5", "", "p5", ""});
    }
  }
  const auto s3 = make_task("permutation", {{"degree", "3"}});
  CHECK(as_permutation(s3).element(2) == Perm{1, 0, 2});
  CHECK(as_permutation(s3).element(3) == Perm{1, 2, 0});
  // g2 three times is the identity: p3 p4 p0
  CHECK(target_names(*s3, example_of(as_permutation(s3), "states", {"g2", "g2", "g2"})) == V{"p3", "p4", "p0"});
}

TEST_CASE("permutation: hand-worked A4 and A3 examples", "[tasks][permutation]") {
  // A4 in lexicographic order: p0 [0123] p1 [0231] p2 [0312] p3 [1032] p4 [1203] p5 [1320]
  // p6 [2013] p7 [2130] p8 [2301] p9 [3021] p10 [3102] p11 [3210].
  // g1 = (0 1 2) = [1 2 0 3] = p4; g2 = (0 1 3) = [1 3 2 0] = p5.
  // g1: p4; g2∘[1 2 0 3] = [3 2 1 0] = p11; g0: p11; g1∘[3 2 1 0] = [3 0 2 1] = p9.
  const auto a4 = make_task("permutation", {{"group", "A"}, {"degree", "4"}});
  const auto& pt = as_permutation(a4);
  CHECK(pt.element(4) == Perm{1, 2, 0, 3});
  CHECK(pt.element(11) == Perm{3, 2, 1, 0});
  CHECK(target_names(pt, example_of(pt, "states", {"g1", "g2", "g0", "g1"})) == V{"p4", "p11", "p11", "p9"});
  const auto scratch = make_task("permutation", {{"group", "A"}, {"degree", "4"}, {"output", "scratchpad"}});
  const auto& ps = as_permutation(scratch);
  CHECK(token_names(ps, example_of(ps, "scratchpad", {"g1", "g2"})) == V{"g1", "p4", "g2", "p11"});
  CHECK(target_names(ps, example_of(ps, "scratchpad", {"g1", "g2"})) == V{"p4", "", "p11", ""});
  // A3 = {[012], [120], [201]}; g1 = (0 1 2) = [1 2 0]: g1 g1 g1 → p1 p2 p0
  const auto a3 = make_task("permutation", {{"group", "A"}, {"degree", "3"}, {"output", "final"}});
  CHECK(target_names(*a3, example_of(as_permutation(a3), "final", {"g1", "g1", "g1"})) == V{"", "", "p0"});
  CHECK(target_names(*a3, example_of(as_permutation(a3), "final", {"g1", "g1"})) == V{"", "p2"});
}

TEST_CASE("permutation: 1000 random examples agree with explicit composition and a lexicographic rank",
          "[tasks][permutation]") {
  int examples = 0;
  for (const std::string group : {"S", "A"})
    for (int degree = 3; degree <= 6; ++degree) {
      const bool alternating = group == "A";
      const std::vector<Perm> elements = group_elements(alternating, degree);
      const std::vector<Perm> gens = generators(alternating, degree);
      for (const std::string mode : {"states", "final", "scratchpad"}) {
        INFO(group << degree << " " << mode);
        const auto task = make_task("permutation", {{"group", group}, {"degree", std::to_string(degree)}, {"output", mode}});
        for (uint64_t i = 0; i < 42; ++i, ++examples) {
          const int n = 1 + static_cast<int>((i * 19) % 50);
          const Example ex = task->sample(13, Stream::Train, i, n);
          const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
          Perm sigma = gens[0];  // identity
          V states;
          for (const std::string& x : state_inputs(tok, tgt, mode, n)) {
            REQUIRE(x[0] == 'g');
            const int g = std::stoi(x.substr(1));
            REQUIRE(g >= 0);
            REQUIRE(g < static_cast<int>(gens.size()));
            Perm next(sigma.size());
            for (size_t k = 0; k < sigma.size(); ++k) next[k] = gens[static_cast<size_t>(g)][static_cast<size_t>(sigma[k])];
            sigma = next;
            const auto at = std::find(elements.begin(), elements.end(), sigma);
            REQUIRE(at != elements.end());
            states.push_back("p" + std::to_string(at - elements.begin()));
          }
          check_state_targets(tok, tgt, mode, states);
        }
      }
    }
  CHECK(examples >= 1000);
}

TEST_CASE("permutation: generators are uniform and reach every element of the group", "[tasks][permutation]") {
  for (const std::string group : {"S", "A"})
    for (int degree = 3; degree <= 6; ++degree) {
      INFO(group << degree);
      const auto task = make_task("permutation", {{"group", group}, {"degree", std::to_string(degree)}});
      const int gens = as_permutation(task).generator_count(), order = as_permutation(task).group_order();
      std::vector<int> count(static_cast<size_t>(gens), 0);
      std::set<std::string> reached;
      int total = 0;
      for (uint64_t i = 0; i < 600; ++i) {
        const Example ex = task->sample(4, Stream::Train, i, 60);
        for (const auto& x : token_names(*task, ex)) ++count[static_cast<size_t>(std::stoi(x.substr(1)))], ++total;
        for (const auto& q : target_names(*task, ex)) reached.insert(q);
      }
      for (int g = 0; g < gens; ++g) CHECK(static_cast<double>(count[static_cast<size_t>(g)]) / total == Approx(1.0 / gens).margin(0.015));
      CHECK(static_cast<int>(reached.size()) == order);
    }
}

TEST_CASE("permutation: bad parameters are errors naming the parameter", "[tasks][permutation]") {
  check_error({{"group", "B"}}, "group");
  check_error({{"group", "s"}}, "group");
  check_error({{"degree", "2"}}, "degree");
  check_error({{"degree", "7"}}, "degree");
  check_error({{"degree", "five"}}, "degree");
  check_error({{"group", "A"}, {"degree", "7"}}, "degree");
  check_error({{"output", "rank"}}, "output");
  check_error({{"order", "5"}}, "order");
}
