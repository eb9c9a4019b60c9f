// The base of the Chomsky tasks over uniform strings of V symbols `0 … {V-1}` whose output is
// a rearrangement of the input (reverse_string, duplicate_string, odds_first, bucket_sort):
// vocabulary `0 … {V-1} _`, output classes `0 … {V-1}`, symbol v has id v.
#pragma once

#include <cmath>

#include "tasks/tape.hpp"

namespace srbench::tasks {

class SymbolStringTask : public TapeTask {
 public:
  SymbolStringTask(std::string name, int vocab_size) : TapeTask(std::move(name)), vocab_size_(vocab_size) {
    set_vocabulary(number_names(vocab_size), number_names(vocab_size));
  }
  int vocab_size() const { return vocab_size_; }
  double input_space_size(int n) const override { return std::pow(static_cast<double>(vocab_size_), n); }

 protected:
  void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const override {
    append_uniform(rng, n, vocab_size_, tape);
  }

 private:
  int vocab_size_;
};

// The registry entry of such a task T(vocab_size): one parameter, `vocab_size` (V, 2..256).
template <class T>
TaskInfo symbol_string_task_info(std::string name, std::string summary, const std::string& default_vocab_size) {
  return {std::move(name), std::move(summary),
          {{"vocab_size", ParamType::Int, default_vocab_size, "number of symbols V, 2..256 (symbols 0..V-1)"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<T>(static_cast<int>(p.integer_in("vocab_size", 2, 256)));
          }};
}

}  // namespace srbench::tasks
