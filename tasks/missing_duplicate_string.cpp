// missing_duplicate_string (CS; NNCH tasks/cs/missing_duplicate_string.py): the symbol hidden in a
// string written twice.
//
// Input tape (n ≥ 2): h = ⌊n/2⌋ uniform bits s, d = s s, j uniform in 0..2h-1; d with d_j replaced
// by `?` (NNCH 2), then `#` (NNCH 3, padding) if n is odd. One blank, scored with d_j — the symbol
// h places away, in the other copy. n = 1: the tape `1`, label `1` (NNCH's placeholder).
// Vocabulary `0 1 ? # _`. Examples: 0 1 1 0 0 ? 1 0 _ → 1;  1 0 1 1 ? 1 # _ → 0.
#include <algorithm>
#include <stdexcept>

#include "tasks/chomsky.hpp"
#include "tasks/tape.hpp"

namespace srbench::tasks {

namespace {

class MissingDuplicateStringTask : public TapeTask {
 public:
  MissingDuplicateStringTask() : TapeTask("missing_duplicate_string") {
    set_vocabulary({"0", "1", "?", "#"}, {"0", "1"});
    missing_ = vocab_.id("?");
    padding_ = vocab_.id("#");
  }
  int output_length(int) const override { return 1; }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    if (n == 1) {
      tape.push_back(1);
      return;
    }
    const size_t h = static_cast<size_t>(n / 2);
    append_uniform(rng, static_cast<int>(h), 2, tape);
    tape.resize(2 * h);
    std::copy_n(tape.begin(), h, tape.begin() + static_cast<ptrdiff_t>(h));
    tape[rng.below(2 * h)] = missing_;
    if (n % 2 == 1) tape.push_back(padding_);
  }
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    if (input.size() == 1) {
      out.push_back(1);
      return;
    }
    const size_t h = input.size() / 2;
    const size_t j = static_cast<size_t>(std::find(input.begin(), input.end(), missing_) - input.begin());
    if (j >= 2 * h) throw std::invalid_argument("missing_duplicate_string: no ? in the doubled string");
    out.push_back(input[(j + h) % (2 * h)]);
  }

 private:
  int32_t missing_, padding_;
};

}  // namespace

TaskInfo missing_duplicate_string_info() {
  return parameterless_task_info<MissingDuplicateStringTask>(
      "missing_duplicate_string", "CS: the bit hidden by ? in a bit string written twice (Delétang et al.)");
}

}  // namespace srbench::tasks
