#include "tasks/start_token.hpp"

namespace srbench::tasks {

ParamSpec start_token_param() {
  return {"start_token", ParamType::Bool, "false", "a start token <s> before every example (not scored)"};
}

StartTokenTask::StartTokenTask(std::unique_ptr<Task> inner) : Task(inner->name()), inner_(std::move(inner)) {
  for (const auto& name : inner_->vocab().names()) vocab_.add(name);
  start_ = vocab_.add("<s>");
}

void StartTokenTask::generate(Rng& rng, Stream stream, int n, Example& out) const {
  out.push(start_, kNotScored);
  inner_->generate(rng, stream, n, out);
}

}  // namespace srbench::tasks
