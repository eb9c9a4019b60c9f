#include "tasks/ffl.hpp"

#include <stdexcept>

namespace srbench::tasks {

FflTask::FflTask(double p_i) : Task("ffl"), p_i_(p_i) {
  for (const char* name : {"w", "r", "i", "0", "1"}) vocab_.add(name);
}

void FflTask::check_length(int n) const {
  if (n < 2) fail("n", "length " + std::to_string(n) + " is below 2 (the first instruction is w, the last r)");
}

void FflTask::format(const std::vector<int32_t>& instructions, const std::vector<int>& bits, Example& out) const {
  int memory = -1;  // the last written bit; none yet
  for (size_t t = 0; t < instructions.size(); ++t) {
    const int32_t op = instructions[t];
    int bit = bits[t];
    if (op == kW) memory = bit;
    if (op == kR) {
      if (memory < 0) throw std::invalid_argument("ffl: read before any write");
      bit = memory;
    }
    const int32_t bit_token = kZero + bit;
    out.push(op, op == kR ? bit_token : kNotScored);
    out.push(bit_token, kNotScored);
  }
}

void FflTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> instructions(static_cast<size_t>(n));
  std::vector<int> bits(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) {
    if (t == 0)
      instructions[t] = kW;
    else if (t == n - 1)
      instructions[t] = kR;
    else if (rng.bernoulli(p_i_))
      instructions[t] = kI;
    else
      instructions[t] = rng.bernoulli(0.5) ? kW : kR;
    // Reads copy memory: only writes and ignores draw a bit.
    bits[t] = instructions[t] == kR ? 0 : static_cast<int>(rng.below(2));
  }
  format(instructions, bits, out);
}

TaskInfo ffl_info() {
  return {"ffl",
          "flip-flop language: (instruction, bit) pairs; at each r predict the last written bit",
          {{"p_i", ParamType::Real, "0.8", "probability of an ignore instruction i between the first w and last r"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<FflTask>(p.probability("p_i"));
          }};
}

}  // namespace srbench::tasks
