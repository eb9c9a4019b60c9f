// text: character-level language modelling on a local file.
//
// The vocabulary is the distinct bytes of the file, ascending, each named by its character when
// printable ASCII (0x20..0x7e, so space is " ") and `\xNN` (lowercase hex) otherwise. The file is
// split at ⌊split·size⌋: training windows lie in bytes [0, split point), evaluation windows in
// the rest. An example of length n starts at a uniform s with bytes[s..s+n] inside its part:
// tokens bytes[s..s+n-1], targets bytes[s+1..s+n], every position scored. Loss is reported in
// bits per byte. Example: "abca", window at 0, n = 3 → tokens a b c, targets b c a.
#pragma once

#include <array>
#include <string>

#include "tasks/task.hpp"

namespace srbench::tasks {

class TextTask : public Task {
 public:
  // Reads the whole file; TaskError (path) when it is missing, unreadable or empty, (split) when
  // a part would be empty. 0 < split < 1 is checked by the builder.
  TextTask(const std::string& path, double split);

  void check_length(int n) const override;  // 1 ≤ n < the length of each part
  int max_sequence_length(int n) const override { return n; }
  bool reports_bits_per_byte() const override { return true; }

  // The token name of a byte: "a", " ", `\x0a`.
  static std::string byte_name(unsigned char byte);
  const std::string& bytes() const { return bytes_; }
  // Training part [0, split_point()), evaluation part [split_point(), bytes().size()).
  size_t split_point() const { return split_point_; }
  // Appends the window of n tokens at `start` (bytes[start..start+n] must exist).
  void window(size_t start, int n, Example& out) const;

 protected:
  void generate(Rng& rng, Stream stream, int n, Example& out) const override;

 private:
  std::string bytes_;
  size_t split_point_;
  std::array<int32_t, 256> token_of_byte_{};
};

TaskInfo text_info();

}  // namespace srbench::tasks
