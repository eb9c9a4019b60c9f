// `start_token: true`, a parameter of every task without the tape layout: each example gets a
// start token `<s>` in front (not scored); everything else is the task's own example, drawn from
// the same random numbers, so the examples with and without it pair one to one.
//
// Why: a causal model whose positions are only relative (alibi, rope, none) computes the same
// vector at every position of a leading run of identical tokens, and so cannot label `1 1` (parity
// q1 q0) or `( (` (dyck depth d1 d2) correctly (docs/results.md, "Plateaus explained"). A start
// token gives every position a different share of attention on it and breaks that tie.
// `<s>` is the last id of the vocabulary: the task's own ids are unchanged.
#pragma once

#include <memory>

#include "tasks/task.hpp"

namespace srbench::tasks {

ParamSpec start_token_param();

class StartTokenTask : public Task {
 public:
  explicit StartTokenTask(std::unique_ptr<Task> inner);
  void check_length(int n) const override { inner_->check_length(n); }
  int max_sequence_length(int n) const override { return inner_->max_sequence_length(n) + 1; }
  bool uses_length() const override { return inner_->uses_length(); }
  bool reports_bits_per_byte() const override { return inner_->reports_bits_per_byte(); }
  double input_space_size(int n) const override { return inner_->input_space_size(n); }
  const Task& inner() const { return *inner_; }

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  std::unique_ptr<Task> inner_;
  int32_t start_;
};

}  // namespace srbench::tasks
