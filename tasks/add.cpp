#include "tasks/add.hpp"

#include <algorithm>

namespace srbench::tasks {

std::vector<int> add_digits(const std::vector<int>& a, const std::vector<int>& b, int base) {
  std::vector<int> sum;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const int s = (i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0) + carry;
    sum.push_back(s % base);
    carry = s / base;
  }
  if (carry) sum.push_back(carry);
  while (sum.size() > 1 && sum.back() == 0) sum.pop_back();
  if (sum.empty()) sum.push_back(0);
  return sum;
}

AddTask::AddTask(int base, bool little_endian, bool mixed_lengths)
    : Task("add"), base_(base), little_endian_(little_endian), mixed_lengths_(mixed_lengths) {
  for (int d = 0; d < base_; ++d) vocab_.add(std::to_string(d));
  plus_ = vocab_.add("+");
  equals_ = vocab_.add("=");
  eos_ = vocab_.add("<eos>");
}

std::vector<int32_t> AddTask::written(const std::vector<int>& number) const {
  std::vector<int32_t> out(number.begin(), number.end());
  if (!little_endian_) std::reverse(out.begin(), out.end());
  return out;
}

void AddTask::format(const std::vector<int>& a, const std::vector<int>& b, Example& out) const {
  for (const int32_t d : written(a)) out.push(d, kNotScored);
  out.push(plus_, kNotScored);
  for (const int32_t d : written(b)) out.push(d, kNotScored);
  // From `=` on, each target is the next token: c's digits, then <eos>.
  const std::vector<int32_t> c = written(add_digits(a, b, base_));
  out.push(equals_, c.front());
  for (size_t i = 0; i < c.size(); ++i) out.push(c[i], i + 1 < c.size() ? c[i + 1] : eos_);
  out.push(eos_, kNotScored);
}

std::vector<int> AddTask::draw_operand(Rng& rng, int length) const {
  std::vector<int> digits(static_cast<size_t>(length));
  for (int i = 0; i < length; ++i) {
    const bool top = i == length - 1 && length > 1;
    digits[i] = top ? static_cast<int>(rng.between(1, base_ - 1)) : static_cast<int>(rng.below(static_cast<uint64_t>(base_)));
  }
  return digits;
}

void AddTask::generate(Rng& rng, Stream, int n, Example& out) const {
  const int length_a = mixed_lengths_ ? static_cast<int>(rng.between(1, n)) : n;
  const int length_b = mixed_lengths_ ? static_cast<int>(rng.between(1, n)) : n;
  const std::vector<int> a = draw_operand(rng, length_a);
  const std::vector<int> b = draw_operand(rng, length_b);
  format(a, b, out);
}

TaskInfo add_info() {
  return {"add",
          "multi-digit addition a + b = c, digits least-significant first by default",
          {{"base", ParamType::Int, "10", "number base, 2..10 (digits 0..base-1)"},
           {"little_endian", ParamType::Bool, "true", "write every number least-significant digit first"},
           {"mixed_lengths", ParamType::Bool, "false", "each operand has a uniform length in 1..n instead of n"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<AddTask>(static_cast<int>(p.integer_in("base", 2, 10)), p.boolean("little_endian"),
                                             p.boolean("mixed_lengths"));
          }};
}

}  // namespace srbench::tasks
