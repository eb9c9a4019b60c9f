// The tape layout of the Chomsky-hierarchy tasks (chomsky.md §2, after Delétang et al. 2023).
//
// An example is the input tape x_0 … x_{L-1} (L = input_length(n); it never holds `_`), followed
// by L_out = output_length(L) blanks `_`. Targets are null on the input tape; on blank j they are
// the j-th output symbol, and null on the blanks after a terminated output's `<eos>`. Every
// example of one n has the same length T = L + L_out. Outputs are never fed back: the model
// writes all of them at once (a causal model sees the whole tape and j+1 blanks at blank j).
//
// Vocabulary, ids in this order: the input alphabet, `_`, then the output classes that are not
// input symbols. Example (parity_check): tokens 1 0 1 1 0 _, targets · · · · · c1.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "tasks/task.hpp"

namespace srbench::tasks {

class TapeTask : public Task {
 public:
  using Task::Task;

  // L_in(n): the input tape's length at problem length n (n for every task but
  // modular_arithmetic).
  virtual int input_length(int n) const { return n; }
  // L_out(L): the number of blanks after an input tape of length L.
  virtual int output_length(int input_length) const = 0;
  int max_sequence_length(int n) const final {
    const int L = input_length(n);
    return L + output_length(L);
  }

  // The output symbols written on the blanks for the input tape `input` (ids): the scored ones,
  // ending in `<eos>` for terminated outputs; at most output_length(input.size()).
  std::vector<int32_t> output(std::span<const int32_t> input) const;
  // Appends the example whose input tape is `input`: the tape, then output_length blanks.
  void format(std::span<const int32_t> input, Example& out) const;

  int32_t blank() const { return blank_; }
  // The output classes (NNCH's output_size), in class order.
  const std::vector<int32_t>& output_classes() const { return output_classes_; }

 protected:
  // Appends a random input tape of problem length n to `tape` (empty), drawing only from `rng`.
  virtual void draw_input(Rng& rng, int n, std::vector<int32_t>& tape) const = 0;
  // Appends output(input) to `out`.
  virtual void label(std::span<const int32_t> input, std::vector<int32_t>& out) const = 0;
  // Builds the vocabulary: `inputs`, `_`, then each of `outputs` not already there.
  void set_vocabulary(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);

 private:
  void generate(Rng& rng, Stream stream, int n, Example& out) const final;
  // Labels out.tokens (the input tape alone) and appends the blanks.
  void finish(Example& out) const;

  int32_t blank_ = 0;
  std::vector<int32_t> output_classes_;
};

// The registry entry of a tape task without parameters.
template <class T>
TaskInfo parameterless_task_info(std::string name, std::string summary) {
  return {std::move(name), std::move(summary), {},
          [](const ParamReader&, const TaskContext&) -> std::unique_ptr<Task> { return std::make_unique<T>(); }};
}

// Appends `count` symbols uniform in 0..alphabet-1.
void append_uniform(Rng& rng, int count, int alphabet, std::vector<int32_t>& out);

// The names "0" … "{count-1}".
std::vector<std::string> number_names(int count);

}  // namespace srbench::tasks
