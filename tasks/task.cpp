#include "tasks/task.hpp"

#include <limits>

#include <stdexcept>

#include "common/suggest.hpp"

namespace srbench::tasks {

const char* stream_name(Stream s) {
  switch (s) {
    case Stream::Train: return "train";
    case Stream::TrainArch: return "train-arch";
    case Stream::Eval: return "eval";
  }
  return "?";
}

std::optional<Stream> parse_stream(std::string_view name) {
  if (name == "train") return Stream::Train;
  if (name == "train-arch") return Stream::TrainArch;
  if (name == "eval") return Stream::Eval;
  return std::nullopt;
}

int32_t Vocab::add(const std::string& name) {
  if (ids_.count(name)) throw std::logic_error("vocabulary repeats token '" + name + "'");
  const auto id = static_cast<int32_t>(names_.size());
  names_.push_back(name);
  ids_.emplace(name, id);
  return id;
}

int32_t Vocab::id(std::string_view name) const {
  const auto it = ids_.find(std::string(name));
  if (it == ids_.end()) throw std::out_of_range("no token '" + std::string(name) + "' in the vocabulary");
  return it->second;
}

double Task::input_space_size(int) const { return std::numeric_limits<double>::quiet_NaN(); }

void Task::check_length(int n) const {
  if (n < 1) fail("n", "length " + std::to_string(n) + " is below 1");
}

void Task::sample_into(uint64_t seed, Stream stream, uint64_t index, int n, Example& out) const {
  check_length(n);
  Rng rng(hash_words({seed, static_cast<uint64_t>(stream), index, static_cast<uint64_t>(n)}));
  out.clear();
  generate(rng, stream, n, out);
  if (out.input_length == kWholeExample) out.input_length = static_cast<int32_t>(out.tokens.size());
}

Example Task::sample(uint64_t seed, Stream stream, uint64_t index, int n) const {
  Example ex;
  sample_into(seed, stream, index, n, ex);
  return ex;
}

const TaskInfo* find_task(const std::string& name) {
  for (const auto& info : task_registry())
    if (info.name == name) return &info;
  return nullptr;
}

std::unique_ptr<Task> make_task(const std::string& name, const RawParams& params,
                                const TaskContext& context) {
  const TaskInfo* info = find_task(name);
  if (!info) {
    std::vector<std::string> names;
    std::string list;
    for (const auto& t : task_registry()) {
      names.push_back(t.name);
      list += (list.empty() ? "" : ", ") + t.name;
    }
    std::string msg = "unknown task";
    const std::string near = closest_name(name, names);
    if (!near.empty()) msg += " (did you mean '" + near + "'?)";
    throw TaskError(name, "", msg + "; valid tasks: " + list);
  }
  ParamReader reader(info->name, info->params, params);
  return info->build(reader, context);
}

}  // namespace srbench::tasks
