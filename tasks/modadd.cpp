#include "tasks/modadd.hpp"

#include <cmath>

namespace srbench::tasks {

namespace {

bool is_prime(int64_t v) {
  if (v < 2) return false;
  for (int64_t d = 2; d * d <= v; ++d)
    if (v % d == 0) return false;
  return true;
}

const char* op_name(ModOp op) {
  switch (op) {
    case ModOp::Add: return "+";
    case ModOp::Subtract: return "-";
    case ModOp::Multiply: return "*";
  }
  return "?";
}

}  // namespace

ModAddTask::ModAddTask(int p, ModOp op, double train_fraction, uint64_t data_seed)
    : Task("modadd"), p_(p), op_(op) {
  for (int v = 0; v < p; ++v) vocab_.add(std::to_string(v));
  op_token_ = vocab_.add(op_name(op));
  equals_token_ = vocab_.add("=");

  pairs_.reserve(static_cast<size_t>(p) * p);
  for (int32_t a = 0; a < p; ++a)
    for (int32_t b = 0; b < p; ++b) pairs_.push_back({a, b});  // index a·p + b
  Rng split_rng(hash_words({data_seed, kSplitTag}));
  split_rng.shuffle(pairs_);
  train_size_ = static_cast<size_t>(std::floor(train_fraction * static_cast<double>(pairs_.size())));
}

int32_t ModAddTask::apply(int32_t a, int32_t b) const {
  switch (op_) {
    case ModOp::Add: return (a + b) % p_;
    case ModOp::Subtract: return ((a - b) % p_ + p_) % p_;
    case ModOp::Multiply: return static_cast<int32_t>(static_cast<int64_t>(a) * b % p_);
  }
  return 0;
}

void ModAddTask::format(ModPair pair, Example& out) const {
  out.push(pair.a, kNotScored);
  out.push(op_token_, kNotScored);
  out.push(pair.b, kNotScored);
  out.push(equals_token_, apply(pair.a, pair.b));
}

void ModAddTask::generate(Rng& rng, Stream stream, int, Example& out) const {
  const auto pairs = stream == Stream::Eval ? heldout_pairs() : train_pairs();
  format(pairs[rng.below(pairs.size())], out);
}

TaskInfo modadd_info() {
  return {"modadd",
          "a op b = (a op b) mod p on a fixed train/held-out split of all pairs (grokking)",
          {{"p", ParamType::Int, "97", "modulus, a prime in 2..2000"},
           {"op", ParamType::Choice, "+", "the operation", {"+", "-", "*"}},
           {"train_fraction", ParamType::Real, "0.4",
            "fraction of the p² pairs in the training set, in (0, 1); the rest are held out"}},
          [](const ParamReader& params, const TaskContext& context) -> std::unique_ptr<Task> {
            const auto p = params.integer_in("p", 2, 2000);
            if (!is_prime(p)) params.fail("p", std::to_string(p) + " is not prime");
            const std::string op_text = params.string("op");
            const ModOp op = op_text == "-" ? ModOp::Subtract : op_text == "*" ? ModOp::Multiply : ModOp::Add;
            const double f = params.real("train_fraction");
            if (!(f > 0.0 && f < 1.0)) params.fail("train_fraction", params.text("train_fraction") + " is outside (0, 1)");
            const double total = static_cast<double>(p * p);
            const double train_size = std::floor(f * total);
            if (train_size < 1.0 || train_size >= total)
              params.fail("train_fraction", params.text("train_fraction") + " of " + std::to_string(p * p) +
                                                " pairs leaves the training or the held-out set empty");
            return std::make_unique<ModAddTask>(static_cast<int>(p), op, f, context.data_seed);
          }};
}

}  // namespace srbench::tasks
