// mano: modular arithmetic without working (after Allen-Zhu's "Mano").
//
// Tokens `+ - *`, `0..{p-1}`, `=`. A random binary expression tree with n operators — the root's
// n-1 other operators split between its left and right subtrees with a left count uniform in
// 0..n-1, recursively; operators uniform among + - *; leaves uniform in 0..p-1 — written in prefix
// notation and followed by `=` (2n+2 tokens). Only `=` is scored, with the value mod p (in 0..p-1).
// Example (p = 23): * + 3 4 5 = → (3+4)·5 = 35 ≡ 12.
#pragma once

#include <vector>

#include "tasks/task.hpp"

namespace srbench::tasks {

class ManoTask : public Task {
 public:
  explicit ManoTask(int p);
  int max_sequence_length(int n) const override { return 2 * n + 2; }

  // Token ids: operators `+` `-` `*` are 0, 1, 2; the number v is number_token(v).
  int32_t number_token(int32_t v) const { return 3 + v; }
  // Value mod p of a well-formed prefix expression (token ids, without `=`). Iterative, so any
  // depth is fine.
  int32_t evaluate(const std::vector<int32_t>& prefix) const;
  // Appends the expression, then `=` labelled with its value.
  void format(const std::vector<int32_t>& prefix, Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int p_;
  int32_t equals_token_;
};

TaskInfo mano_info();

}  // namespace srbench::tasks
