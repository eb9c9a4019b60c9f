#include "tasks/tape.hpp"

#include <stdexcept>

namespace srbench::tasks {

void TapeTask::set_vocabulary(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  for (const auto& name : inputs) vocab_.add(name);
  blank_ = vocab_.add("_");
  for (const auto& name : outputs)
    output_classes_.push_back(vocab_.contains(name) ? vocab_.id(name) : vocab_.add(name));
}

std::vector<int32_t> TapeTask::output(std::span<const int32_t> input) const {
  std::vector<int32_t> out;
  label(input, out);
  return out;
}

void TapeTask::finish(Example& out) const {
  const size_t L = out.tokens.size();
  const size_t L_out = static_cast<size_t>(output_length(static_cast<int>(L)));
  out.targets.assign(L, kNotScored);
  label(out.tokens, out.targets);
  if (out.targets.size() > L + L_out)
    throw std::logic_error("task '" + name() + "' wrote more outputs than blanks");
  out.targets.resize(L + L_out, kNotScored);
  out.tokens.resize(L + L_out, blank_);
  out.input_length = static_cast<int32_t>(L);
}

void TapeTask::format(std::span<const int32_t> input, Example& out) const {
  out.clear();
  out.tokens.assign(input.begin(), input.end());
  finish(out);
}

void TapeTask::generate(Rng& rng, Stream, int n, Example& out) const {
  draw_input(rng, n, out.tokens);
  if (static_cast<int>(out.tokens.size()) != input_length(n))
    throw std::logic_error("task '" + name() + "' drew an input tape of the wrong length");
  finish(out);
}

void append_uniform(Rng& rng, int count, int alphabet, std::vector<int32_t>& out) {
  for (int i = 0; i < count; ++i) out.push_back(static_cast<int32_t>(rng.below(static_cast<uint64_t>(alphabet))));
}

std::vector<std::string> number_names(int count) {
  std::vector<std::string> names;
  for (int v = 0; v < count; ++v) names.push_back(std::to_string(v));
  return names;
}

}  // namespace srbench::tasks
