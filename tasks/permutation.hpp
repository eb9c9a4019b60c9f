// permutation: the running composition of generators of S_n or A_n (n = degree, 3..6).
//
// Generators, uniform, tokens `g0..`: S_n — g0 identity, g1 the swap (0 1), g2 the cycle
// i ↦ i+1 mod n; A_n — g0 identity, then the 3-cycles (0 1 x) (0↦1↦x↦0) for x = 2..n-1.
// Initial σ = identity; reading g gives σ ← g∘σ (σ(i) becomes g(σ(i))). Label `p_r`: r is the
// rank of σ's one-line notation [σ(0)…σ(n-1)] among the group's elements in lexicographic order.
// Example (S3, states): g1 g2 g0 → [1 0 2] [2 1 0] [2 1 0] → p2 p5 p5.
#pragma once

#include <cmath>

#include "tasks/automaton.hpp"

namespace srbench::tasks {

class PermutationTask : public Task {
 public:
  // alternating: A_n instead of S_n.
  PermutationTask(bool alternating, int degree, OutputMode mode);
  int max_sequence_length(int n) const override { return automaton_max_sequence_length(mode_, n); }
  // State label ids (`p0..`) after each input (input ids: `g_k` = k).
  std::vector<int32_t> labels(const std::vector<int32_t>& inputs) const;
  int group_order() const { return static_cast<int>(elements_.size()); }
  int generator_count() const { return generators_; }
  // One-line notation of the element of rank r.
  const std::vector<int>& element(int rank) const { return elements_.at(static_cast<size_t>(rank)); }
  double input_space_size(int n) const override { return std::pow(static_cast<double>(generators_), n); }

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  OutputMode mode_;
  int generators_;
  int32_t p0_;
  std::vector<std::vector<int>> elements_;  // the group, in lexicographic order
  std::vector<int32_t> next_;               // next_[rank * generators_ + g]: rank of g∘σ
};

TaskInfo permutation_info();

}  // namespace srbench::tasks
