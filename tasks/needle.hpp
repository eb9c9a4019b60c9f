// needle: find the value of a key hidden in filler (needle in a haystack).
//
// Tokens `f0..f{filler-1}`, `k0..k{key_vocab-1}`, `v0..v{values-1}`, `<q>`. n uniform filler
// tokens; `keys` distinct keys (uniform from the key vocabulary), each followed by a uniform
// value. The queried pair — the first key drawn — is inserted so that exactly ⌊depth·n + ½⌋
// filler tokens precede it (depth uniform in [0, 1) per example unless fixed), every other pair
// before a uniform filler position 0..n (n: after the last filler); pairs sharing a position come
// in random order. Then `<q>` and the queried key, whose target is its value; nothing else is
// scored. n + 2·keys + 2 tokens.
// Example (n = 3, depth 0.5): f0 f1 k2 v3 f0 <q> k2 → v3 at the last token.
#pragma once

#include <optional>
#include <vector>

#include "tasks/task.hpp"

namespace srbench::tasks {

// A key-value pair (indices into the key and value vocabularies) and the number of filler tokens
// before it.
struct NeedlePair {
  int32_t key, value;
  int gap;
};

class NeedleTask : public Task {
 public:
  // depth: the fixed depth in [0, 1], or none for uniform.
  NeedleTask(int filler, int key_vocab, int values, int keys, std::optional<double> depth);
  int max_sequence_length(int n) const override { return n + 2 * keys_ + 2; }

  // Number of filler tokens before the queried pair: ⌊depth·n + ½⌋.
  static int query_gap(double depth, int n);
  // Appends the filler tokens (filler indices) with each pair placed after `gap` of them (pairs
  // with equal gaps in their order in `pairs`), then `<q>` and `query_key`, labelled with the
  // value paired with it.
  void format(const std::vector<int32_t>& fillers, std::vector<NeedlePair> pairs, int32_t query_key,
              Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int32_t key_token(int32_t k) const { return filler_ + k; }
  int32_t value_token(int32_t v) const { return filler_ + key_vocab_ + v; }
  int filler_, key_vocab_, values_, keys_;
  std::optional<double> depth_;
  int32_t query_token_;
};

TaskInfo needle_info();

}  // namespace srbench::tasks
