// copy: repeat a string after a separator, optionally reversed.
//
// Tokens `a..z` (the first `alphabet` letters), `<sep>`, `<eos>`: x_1..x_n <sep> y_1..y_n <eos>
// (2n+2 tokens), x uniform, y = x (or x reversed). Next-token targets from <sep> to y_n:
// the target at <sep> is y_1, at y_i is y_{i+1}, at y_n is <eos>; the rest is not scored.
// Example (reverse): b c a <sep> a c b <eos> → targets · · · a c b <eos> ·.
#pragma once

#include "tasks/task.hpp"

namespace srbench::tasks {

class CopyTask : public Task {
 public:
  CopyTask(int alphabet, bool reverse);
  int max_sequence_length(int n) const override { return 2 * n + 2; }

  int32_t sep() const { return sep_; }
  int32_t eos() const { return eos_; }
  // Appends the example for the input string `x` (letter ids 0..alphabet-1).
  void format(const std::vector<int32_t>& x, Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  int alphabet_;
  bool reverse_;
  int32_t sep_, eos_;
};

TaskInfo copy_info();

}  // namespace srbench::tasks
