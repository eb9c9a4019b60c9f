#include "harness/run/data.hpp"

#include <algorithm>
#include <numeric>

#include "tasks/rng.hpp"

namespace srbench::harness {

namespace {

// Hash tags keep the streams of lengths and orders apart from each other.
constexpr uint64_t kTrainLengthTag = 0x6c656e677468ULL;  // length of training example k
constexpr uint64_t kFiniteLengthTag = 0x66696e697465ULL;  // length of finite-set example j
constexpr uint64_t kEpochOrderTag = 0x65706f6368ULL;      // order of the finite set in epoch e
constexpr uint64_t kArchLengthTag = 0x61726368ULL;        // length of train-arch example k (searches)
constexpr uint64_t kArchOrderTag = 0x617263686fULL;       // order of D_arch in epoch e (searches)
constexpr uint64_t kValLengthTag = 0x76616c6964ULL;       // length of validation example i
constexpr uint64_t kBatchLengthTag = 0x626c656eULL;       // length of training batch s (length_per: batch)
constexpr uint64_t kArchBatchLengthTag = 0x61626c656eULL; // length of train-arch batch s (searches)
constexpr uint64_t kValIndexBase = 1ULL << 40;            // validation examples: eval stream, far indices

int draw_length(uint64_t seed, uint64_t index, uint64_t tag, int lo, int hi) {
  tasks::Rng rng(tasks::hash_words({seed, index, tag}));
  return static_cast<int>(rng.between(lo, hi));
}

}  // namespace

TrainingData::TrainingData(const tasks::Task& task, const RunSpec& spec, DataPart part, double arch_fraction)
    : task_(task), spec_(spec), part_(part) {
  const TrainConfig& t = spec.train;
  if (t.examples > 0) {
    finite_.resize(static_cast<size_t>(t.examples));
    for (size_t j = 0; j < finite_.size(); ++j)
      task.sample_into(t.data_seed, tasks::Stream::Train, j,
                       draw_length(t.data_seed, j, kFiniteLengthTag, t.length_min, t.length_max), finite_[j]);
    const uint64_t n = finite_.size();
    const uint64_t n_arch = part == DataPart::All ? 0 : arch_examples(n, arch_fraction);
    const uint64_t lo = part == DataPart::Arch ? n - n_arch : 0;
    const uint64_t hi = part == DataPart::Weights ? n - n_arch : n;
    for (uint64_t j = lo; j < hi; ++j) pool_.push_back(j);
  }
}

void TrainingData::example(uint64_t k, tasks::Example& out, uint64_t* source) {
  const TrainConfig& t = spec_.train;
  if (finite_.empty()) {
    const bool arch = part_ == DataPart::Arch;
    // length_per: batch — every example of step s = k / batch has the length drawn for s
    const uint64_t draw = t.length_per_batch ? k / static_cast<uint64_t>(t.batch) : k;
    const uint64_t tag = t.length_per_batch ? (arch ? kArchBatchLengthTag : kBatchLengthTag)
                                            : (arch ? kArchLengthTag : kTrainLengthTag);
    task_.sample_into(spec_.seed, arch ? tasks::Stream::TrainArch : tasks::Stream::Train, k,
                      draw_length(spec_.seed, draw, tag, t.length_min, t.length_max), out);
    if (source) *source = k;
    return;
  }
  const uint64_t n = pool_.size(), epoch = k / n;
  if (epoch != epoch_ || order_.empty()) {
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), uint64_t{0});
    tasks::Rng rng(tasks::hash_words({spec_.seed, epoch, part_ == DataPart::Arch ? kArchOrderTag : kEpochOrderTag}));
    rng.shuffle(order_);
    epoch_ = epoch;
  }
  const uint64_t j = pool_[order_[k % n]];
  out = finite_[j];
  if (source) *source = j;
}

std::vector<tasks::Example> validation_set(const tasks::Task& task, const TrainConfig& tc, size_t n) {
  std::vector<tasks::Example> val(n);
  for (size_t i = 0; i < n; ++i)
    task.sample_into(tc.data_seed, tasks::Stream::Eval, kValIndexBase + i,
                     draw_length(tc.data_seed, i, kValLengthTag, tc.length_min, tc.length_max), val[i]);
  return val;
}

void Batch::assemble(const std::vector<tasks::Example>& examples) {
  B = static_cast<int>(examples.size());
  T = 0;
  real_tokens = 0;
  for (const auto& e : examples) T = std::max(T, static_cast<int>(e.tokens.size()));
  tokens.assign(static_cast<size_t>(B) * T, 0);
  targets.assign(static_cast<size_t>(B) * T, tasks::kNotScored);
  lengths.resize(static_cast<size_t>(B));
  input_lengths.resize(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    const auto& e = examples[b];
    lengths[b] = static_cast<int32_t>(e.tokens.size());
    input_lengths[b] = e.input_length == tasks::kWholeExample ? lengths[b] : e.input_length;  // hand-made examples
    std::copy(e.tokens.begin(), e.tokens.end(), tokens.begin() + static_cast<ptrdiff_t>(b) * T);
    std::copy(e.targets.begin(), e.targets.end(), targets.begin() + static_cast<ptrdiff_t>(b) * T);
    real_tokens += static_cast<int64_t>(e.tokens.size());
  }
}

std::vector<tasks::Example> evaluation_set(const tasks::Task& task, uint64_t data_seed, tasks::Stream stream,
                                           int length, int64_t n) {
  std::vector<tasks::Example> ex(static_cast<size_t>(n));
  for (size_t i = 0; i < ex.size(); ++i) task.sample_into(data_seed, stream, i, length, ex[i]);
  return ex;
}

}  // namespace srbench::harness
