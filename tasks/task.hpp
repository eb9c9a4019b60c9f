// The common interface of every task generator.
//
// A task yields examples: two equal-length arrays over its vocabulary, `tokens` (the model's
// input) and `targets` (what the model must output there, or -1 where nothing is scored).
// Example `index` of `stream` under `seed` at length n depends on (parameters, seed, stream,
// index, n) only: each example draws from its own RNG seeded by a hash of those numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/rows.hpp"
#include "tasks/params.hpp"
#include "tasks/rng.hpp"

namespace srbench::tasks {

using srbench::kNotScored;  // common/rows.hpp

// No input-tape length given by the task: Task::sample_into then sets the example's length.
inline constexpr int32_t kWholeExample = -1;

struct Example {
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;  // kNotScored where not scored
  // Length L of the input tape (chomsky.md §2: the index of the first blank `_`); for tasks
  // without a tape layout the example's length, tokens.size().
  int32_t input_length = kWholeExample;
  void clear() { tokens.clear(); targets.clear(); input_length = kWholeExample; }
  void push(int32_t token, int32_t target) { tokens.push_back(token); targets.push_back(target); }
};

// Streams of examples: `train`, `train-arch` (held-out split for the spline search), `eval`.
enum class Stream : uint64_t { Train = 0, TrainArch = 1, Eval = 2 };
const char* stream_name(Stream s);
std::optional<Stream> parse_stream(std::string_view name);

// Token names <-> ids, in the order the task defines them.
class Vocab {
 public:
  int32_t add(const std::string& name);  // appends; a name may not repeat
  int32_t id(std::string_view name) const;  // throws std::out_of_range for an unknown name
  bool contains(std::string_view name) const { return ids_.count(std::string(name)) != 0; }
  const std::string& name(int32_t id) const { return names_.at(static_cast<size_t>(id)); }
  int32_t size() const { return static_cast<int32_t>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }
  bool operator==(const Vocab& o) const { return names_ == o.names_; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> ids_;
};

class Task {
 public:
  explicit Task(std::string name) : name_(std::move(name)) {}
  virtual ~Task() = default;

  const std::string& name() const { return name_; }
  const Vocab& vocab() const { return vocab_; }

  // Throws TaskError (parameter "n") unless n is a valid problem length. Default: n >= 1.
  virtual void check_length(int n) const;
  // Largest number of tokens of an example of problem length n (n valid); most tasks' examples
  // all have this length, a few (add) vary below it.
  virtual int max_sequence_length(int n) const = 0;
  // False for tasks whose examples ignore n (modadd).
  virtual bool uses_length() const { return true; }
  // True when loss is reported as bits per byte (text).
  virtual bool reports_bits_per_byte() const { return false; }
  // The number of distinct inputs at problem length n where it is finite and the task knows it
  // (e.g. 2^n bit strings), as a double (inf when it overflows); NaN where unknown.
  virtual double input_space_size(int n) const;

  // Example `index` of `stream` under `seed` at length n. Throws TaskError for a bad n.
  Example sample(uint64_t seed, Stream stream, uint64_t index, int n) const;
  // The same, reusing `out`'s storage.
  void sample_into(uint64_t seed, Stream stream, uint64_t index, int n, Example& out) const;

 protected:
  // Appends the example to `out` (cleared by the caller), drawing only from `rng`.
  virtual void generate(Rng& rng, Stream stream, int n, Example& out) const = 0;
  friend class StartTokenTask;  // draws the task's own example after its start token
  [[noreturn]] void fail(const std::string& param, const std::string& message) const {
    throw TaskError(name_, param, message);
  }
  Vocab vocab_;

 private:
  std::string name_;
};

// Where a task is built: what must be the same across run seeds (modadd's split).
struct TaskContext {
  uint64_t data_seed = 0;
};

struct TaskInfo {
  std::string name;
  std::string summary;  // one line for `srbench tasks`
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<Task>(const ParamReader&, const TaskContext&)> build;
  std::string level = "";  // the Chomsky hierarchy's level (R, DCF, CS) for its fifteen tasks
  // The tape layout (chomsky.md §2: the answer written on blanks after the whole input) is the
  // fifteen Chomsky tasks' and theirs alone; every other task is next-token.
  bool tape_layout() const { return !level.empty(); }
};

// Every task, in catalogue order.
const std::vector<TaskInfo>& task_registry();
// nullptr when unknown.
const TaskInfo* find_task(const std::string& name);
// Builds a task; throws TaskError for an unknown task (listing the valid names) or parameter.
std::unique_ptr<Task> make_task(const std::string& name, const RawParams& params,
                                const TaskContext& context = {});

}  // namespace srbench::tasks
