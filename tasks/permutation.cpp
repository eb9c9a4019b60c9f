#include "tasks/permutation.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace srbench::tasks {

namespace {

bool is_even(const std::vector<int>& p) {
  int inversions = 0;
  for (size_t a = 0; a < p.size(); ++a)
    for (size_t b = a + 1; b < p.size(); ++b) inversions += p[a] > p[b];
  return inversions % 2 == 0;
}

// The generators in one-line notation, in token order.
std::vector<std::vector<int>> generator_list(bool alternating, int degree) {
  std::vector<int> identity(static_cast<size_t>(degree));
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<std::vector<int>> gens = {identity};
  if (!alternating) {
    auto swap01 = identity;
    std::swap(swap01[0], swap01[1]);
    gens.push_back(swap01);
    std::vector<int> shift(static_cast<size_t>(degree));
    for (int i = 0; i < degree; ++i) shift[static_cast<size_t>(i)] = (i + 1) % degree;
    gens.push_back(shift);
  } else {
    for (int x = 2; x < degree; ++x) {
      auto cycle = identity;  // 0 ↦ 1 ↦ x ↦ 0
      cycle[0] = 1;
      cycle[1] = x;
      cycle[static_cast<size_t>(x)] = 0;
      gens.push_back(cycle);
    }
  }
  return gens;
}

}  // namespace

PermutationTask::PermutationTask(bool alternating, int degree, OutputMode mode)
    : Task("permutation"), mode_(mode) {
  const auto gens = generator_list(alternating, degree);
  generators_ = static_cast<int>(gens.size());

  std::vector<int> p(static_cast<size_t>(degree));
  std::iota(p.begin(), p.end(), 0);
  std::map<std::vector<int>, int32_t> rank;
  do {
    if (alternating && !is_even(p)) continue;
    rank.emplace(p, static_cast<int32_t>(elements_.size()));
    elements_.push_back(p);
  } while (std::next_permutation(p.begin(), p.end()));

  for (int g = 0; g < generators_; ++g) vocab_.add("g" + std::to_string(g));
  p0_ = vocab_.size();
  for (size_t r = 0; r < elements_.size(); ++r) vocab_.add("p" + std::to_string(r));

  next_.resize(elements_.size() * gens.size());
  std::vector<int> composed(static_cast<size_t>(degree));
  for (size_t r = 0; r < elements_.size(); ++r) {
    const auto& sigma = elements_[r];
    for (size_t g = 0; g < gens.size(); ++g) {
      for (size_t i = 0; i < sigma.size(); ++i) composed[i] = gens[g][static_cast<size_t>(sigma[i])];
      next_[r * gens.size() + g] = rank.at(composed);
    }
  }
}

std::vector<int32_t> PermutationTask::labels(const std::vector<int32_t>& inputs) const {
  std::vector<int32_t> out(inputs.size());
  int32_t state = 0;  // the identity is first in lexicographic order
  for (size_t t = 0; t < inputs.size(); ++t) {
    state = next_[static_cast<size_t>(state) * static_cast<size_t>(generators_) + static_cast<size_t>(inputs[t])];
    out[t] = p0_ + state;
  }
  return out;
}

void PermutationTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> inputs(static_cast<size_t>(n));
  for (auto& x : inputs) x = static_cast<int32_t>(rng.below(static_cast<uint64_t>(generators_)));
  format_automaton(mode_, inputs, labels(inputs), out);
}

TaskInfo permutation_info() {
  return {"permutation",
          "running composition of generators of S_n or A_n (S5, A5: not solvable)",
          {{"group", ParamType::Choice, "S", "symmetric (S) or alternating (A) group", {"S", "A"}},
           {"degree", ParamType::Int, "5", "n, the number of points permuted, 3..6"},
           output_param()},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<PermutationTask>(p.string("group") == "A",
                                                     static_cast<int>(p.integer_in("degree", 3, 6)),
                                                     read_output_mode(p));
          }};
}

}  // namespace srbench::tasks
