// mqar: multi-query associative recall (after Zoology).
//
// Tokens `k0..k{keys-1}`, `v0..v{values-1}`. n ≤ keys distinct keys (uniform), each followed by a
// uniform value, then the same n keys again in a uniformly random order; the target at each
// repeated key is the value it was paired with, nothing else is scored. 3n tokens.
// Example: k3 v1 k0 v2 k0 k3 → targets at the last two tokens v2 v1.
#pragma once

#include <vector>

#include "tasks/task.hpp"

namespace srbench::tasks {

class MqarTask : public Task {
 public:
  MqarTask(int keys, int values);
  void check_length(int n) const override;  // 1 ≤ n ≤ keys
  int max_sequence_length(int n) const override { return 3 * n; }

  // Appends `k v` for each (keys[i], values[i]) (key and value indices, not token ids), then
  // keys[order[j]] for j = 0..n-1, each labelled with values[order[j]]; `order` is a
  // permutation of 0..n-1.
  void format(const std::vector<int32_t>& keys, const std::vector<int32_t>& values,
              const std::vector<int32_t>& order, Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int32_t value_token(int32_t v) const { return keys_ + v; }
  int keys_, values_;
};

TaskInfo mqar_info();

}  // namespace srbench::tasks
