#include "tasks/mano.hpp"

#include <stdexcept>

namespace srbench::tasks {

namespace {

constexpr int32_t kPlus = 0, kMinus = 1, kTimes = 2;  // operator token ids

int64_t apply(int32_t op, int64_t left, int64_t right) {
  switch (op) {
    case kPlus: return left + right;
    case kMinus: return left - right;
    case kTimes: return left * right;
  }
  throw std::invalid_argument("mano: not an operator token");
}

}  // namespace

ManoTask::ManoTask(int p) : Task("mano"), p_(p) {
  vocab_.add("+");
  vocab_.add("-");
  vocab_.add("*");
  for (int v = 0; v < p; ++v) vocab_.add(std::to_string(v));
  equals_token_ = vocab_.add("=");
}

int32_t ManoTask::evaluate(const std::vector<int32_t>& prefix) const {
  // Read right to left: a number is pushed; an operator pops its left operand (on top, since it
  // was read last) and its right operand, and pushes the result.
  std::vector<int64_t> stack;
  for (auto it = prefix.rbegin(); it != prefix.rend(); ++it) {
    if (*it >= number_token(0)) {
      stack.push_back(*it - number_token(0));
      continue;
    }
    if (stack.size() < 2) throw std::invalid_argument("mano: malformed prefix expression");
    const int64_t left = stack.back();
    stack.pop_back();
    const int64_t right = stack.back();
    stack.back() = (apply(*it, left, right) % p_ + p_) % p_;
  }
  if (stack.size() != 1) throw std::invalid_argument("mano: malformed prefix expression");
  return static_cast<int32_t>(stack.back());
}

void ManoTask::format(const std::vector<int32_t>& prefix, Example& out) const {
  for (int32_t token : prefix) out.push(token, kNotScored);
  out.push(equals_token_, number_token(evaluate(prefix)));
}

void ManoTask::generate(Rng& rng, Stream, int n, Example& out) const {
  // Emits the tree in prefix order from a stack of pending subtrees, each given by its number of
  // operators (no recursion, so any n is safe): a subtree of k > 0 operators writes a uniform
  // operator, splits its k-1 others as l uniform in 0..k-1 left and k-1-l right, and then the
  // left subtree is written before the right one.
  std::vector<int32_t> prefix;
  prefix.reserve(2 * static_cast<size_t>(n) + 1);
  std::vector<int64_t> pending = {n};
  while (!pending.empty()) {
    const int64_t k = pending.back();
    pending.pop_back();
    if (k == 0) {
      prefix.push_back(number_token(static_cast<int32_t>(rng.below(static_cast<uint64_t>(p_)))));
      continue;
    }
    prefix.push_back(static_cast<int32_t>(rng.below(3)));
    const int64_t left = rng.between(0, k - 1);
    pending.push_back(k - 1 - left);  // right, written after
    pending.push_back(left);          // left, written next
  }
  format(prefix, out);
}

TaskInfo mano_info() {
  return {"mano",
          "value mod p of a random prefix expression with n operators (+ - *)",
          {{"p", ParamType::Int, "23", "modulus, 2..1000"}},
          [](const ParamReader& params, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<ManoTask>(static_cast<int>(params.integer_in("p", 2, 1000)));
          }};
}

}  // namespace srbench::tasks
