#include "tasks/mqar.hpp"

namespace srbench::tasks {

MqarTask::MqarTask(int keys, int values) : Task("mqar"), keys_(keys), values_(values) {
  for (int k = 0; k < keys; ++k) vocab_.add("k" + std::to_string(k));
  for (int v = 0; v < values; ++v) vocab_.add("v" + std::to_string(v));
}

void MqarTask::check_length(int n) const {
  if (n < 1 || n > keys_)
    fail("n", "length " + std::to_string(n) + " is outside 1.." + std::to_string(keys_) +
                  " (n distinct keys are drawn from keys = " + std::to_string(keys_) + ")");
}

void MqarTask::format(const std::vector<int32_t>& keys, const std::vector<int32_t>& values,
                      const std::vector<int32_t>& order, Example& out) const {
  for (size_t i = 0; i < keys.size(); ++i) {
    out.push(keys[i], kNotScored);
    out.push(value_token(values[i]), kNotScored);
  }
  for (int32_t i : order) out.push(keys[static_cast<size_t>(i)], value_token(values[static_cast<size_t>(i)]));
}

void MqarTask::generate(Rng& rng, Stream, int n, Example& out) const {
  const std::vector<int32_t> keys = draw_distinct(rng, n, keys_);
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (auto& v : values) v = static_cast<int32_t>(rng.below(static_cast<uint64_t>(values_)));
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  rng.shuffle(order);
  format(keys, values, order, out);
}

TaskInfo mqar_info() {
  return {"mqar",
          "multi-query associative recall: n key-value pairs, then every key again, asking its value",
          {{"keys", ParamType::Int, "64", "key vocabulary size, 1..4096 (n may not exceed it)"},
           {"values", ParamType::Int, "64", "value vocabulary size, 1..4096"}},
          [](const ParamReader& params, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<MqarTask>(static_cast<int>(params.integer_in("keys", 1, 4096)),
                                              static_cast<int>(params.integer_in("values", 1, 4096)));
          }};
}

}  // namespace srbench::tasks
