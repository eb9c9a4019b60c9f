#include "tasks/needle.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>


namespace srbench::tasks {

NeedleTask::NeedleTask(int filler, int key_vocab, int values, int keys, std::optional<double> depth)
    : Task("needle"), filler_(filler), key_vocab_(key_vocab), values_(values), keys_(keys), depth_(depth) {
  for (int f = 0; f < filler; ++f) vocab_.add("f" + std::to_string(f));
  for (int k = 0; k < key_vocab; ++k) vocab_.add("k" + std::to_string(k));
  for (int v = 0; v < values; ++v) vocab_.add("v" + std::to_string(v));
  query_token_ = vocab_.add("<q>");
}

int NeedleTask::query_gap(double depth, int n) {
  return static_cast<int>(std::floor(depth * n + 0.5));
}

void NeedleTask::format(const std::vector<int32_t>& fillers, std::vector<NeedlePair> pairs,
                        int32_t query_key, Example& out) const {
  std::stable_sort(pairs.begin(), pairs.end(), [](const NeedlePair& a, const NeedlePair& b) { return a.gap < b.gap; });
  const auto query = std::find_if(pairs.begin(), pairs.end(), [&](const NeedlePair& p) { return p.key == query_key; });
  if (query == pairs.end()) throw std::invalid_argument("needle: the queried key is not among the pairs");
  const int32_t answer = value_token(query->value);
  auto next = pairs.begin();
  for (size_t pos = 0; pos <= fillers.size(); ++pos) {
    for (; next != pairs.end() && static_cast<size_t>(next->gap) == pos; ++next) {
      out.push(key_token(next->key), kNotScored);
      out.push(value_token(next->value), kNotScored);
    }
    if (pos < fillers.size()) out.push(fillers[pos], kNotScored);
  }
  if (next != pairs.end()) throw std::invalid_argument("needle: a pair's gap is beyond the filler");
  out.push(query_token_, kNotScored);
  out.push(key_token(query_key), answer);
}

void NeedleTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> fillers(static_cast<size_t>(n));
  for (auto& f : fillers) f = static_cast<int32_t>(rng.below(static_cast<uint64_t>(filler_)));
  const std::vector<int32_t> keys = draw_distinct(rng, keys_, key_vocab_);
  std::vector<NeedlePair> pairs;
  for (int32_t k : keys) pairs.push_back({k, static_cast<int32_t>(rng.below(static_cast<uint64_t>(values_))), 0});
  pairs[0].gap = query_gap(depth_ ? *depth_ : rng.uniform(), n);
  for (size_t i = 1; i < pairs.size(); ++i) pairs[i].gap = static_cast<int>(rng.between(0, n));
  rng.shuffle(pairs);  // random order among pairs sharing a gap (format keeps it)
  format(fillers, pairs, keys[0], out);
}

namespace {

std::optional<double> read_depth(const ParamReader& params) {
  const std::string text = params.string("depth");
  if (text == "uniform") return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  const bool number = !text.empty() && errno == 0 && *end == '\0';
  if (!number || !(d >= 0.0 && d <= 1.0))
    params.fail("depth", "expected 'uniform' or a number in [0, 1], got '" + text + "'");
  return d;
}

}  // namespace

TaskInfo needle_info() {
  return {"needle",
          "recall the value of a key hidden at a given depth in n filler tokens",
          {{"filler", ParamType::Int, "16", "filler vocabulary size, 1..4096"},
           {"key_vocab", ParamType::Int, "16", "key vocabulary size, 1..4096"},
           {"values", ParamType::Int, "16", "value vocabulary size, 1..4096"},
           {"keys", ParamType::Int, "1", "key-value pairs in the filler (distinct keys), 1..key_vocab"},
           {"depth", ParamType::String, "uniform",
            "fraction of the filler before the queried pair: a number in [0, 1], or uniform"}},
          [](const ParamReader& params, const TaskContext&) -> std::unique_ptr<Task> {
            const auto filler = params.integer_in("filler", 1, 4096);
            const auto key_vocab = params.integer_in("key_vocab", 1, 4096);
            const auto values = params.integer_in("values", 1, 4096);
            const auto keys = params.integer("keys");
            if (keys < 1 || keys > key_vocab)
              params.fail("keys", std::to_string(keys) + " is outside 1..key_vocab (key_vocab = " +
                                      std::to_string(key_vocab) + "): the keys must be distinct");
            return std::make_unique<NeedleTask>(static_cast<int>(filler), static_cast<int>(key_vocab),
                                                static_cast<int>(values), static_cast<int>(keys),
                                                read_depth(params));
          }};
}

}  // namespace srbench::tasks
