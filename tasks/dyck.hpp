// dyck: bracket matching over k bracket types with bounded depth (Dyck-(k, max_depth)).
//
// Inputs are the first k pairs of `( ) [ ] { } < >` (types 1..k in that order). A random walk
// makes the word: at depth 0 open, at max_depth close, else open with prob p_open; an open takes
// a uniform type, a close matches the top of the stack. The initial state is the empty stack.
//   label top:      `t0` (empty) or `t1..tk`, the type on top after each prefix;
//   label depth:    `d0..d{max_depth}`, the stack depth after each prefix;
//   label balanced: n even; the walk is also forced to close when the depth equals the remaining
//                   length, so the word is closed; with prob 1/2 it is corrupted once (a random
//                   bracket's type changed, or a random bracket flipped open<->close; redrawn until
//                   invalid); only the last position is scored, `yes` (valid) or `no`.
// Example: ( [ ] ) → top t1 t2 t1 t0, depth d1 d2 d1 d0, balanced yes; ( [ ) ] → balanced no.
// Top and depth take the output modes of automaton.hpp; balanced takes none.
#pragma once

#include "tasks/automaton.hpp"

namespace srbench::tasks {

enum class DyckLabel { Top, Depth, Balanced };

class DyckTask : public Task {
 public:
  DyckTask(int k, int max_depth, double p_open, DyckLabel label, OutputMode mode);
  void check_length(int n) const override;  // balanced: n even and >= 2
  int max_sequence_length(int n) const override;

  // Bracket token ids: type 1..k; open and close of a type are adjacent ids.
  int32_t open_token(int type) const { return 2 * (type - 1); }
  int32_t close_token(int type) const { return 2 * (type - 1) + 1; }

  // Top or depth label ids after each prefix of `word` (bracket ids). Throws
  // std::invalid_argument unless every prefix is valid and within max_depth.
  std::vector<int32_t> labels(const std::vector<int32_t>& word) const;
  // True when `word` (bracket ids) is well matched and closed.
  bool is_balanced(const std::vector<int32_t>& word) const;
  // Appends the example for `word` (bracket ids) under the task's label and output mode.
  void format(const std::vector<int32_t>& word, Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  // The random walk of n brackets; `closed`: also close when depth == remaining length.
  std::vector<int32_t> walk(Rng& rng, int n, bool closed) const;
  // One random corruption of a balanced word, redrawn until the result is not balanced.
  std::vector<int32_t> corrupt(Rng& rng, const std::vector<int32_t>& word) const;

  int k_;
  int max_depth_;
  double p_open_;
  DyckLabel label_;
  OutputMode mode_;
  int32_t first_label_;  // t0, d0 or yes
};

TaskInfo dyck_info();

}  // namespace srbench::tasks
