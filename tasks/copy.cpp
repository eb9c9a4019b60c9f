#include "tasks/copy.hpp"

namespace srbench::tasks {

CopyTask::CopyTask(int alphabet, bool reverse) : Task("copy"), alphabet_(alphabet), reverse_(reverse) {
  for (int c = 0; c < alphabet_; ++c) vocab_.add(std::string(1, static_cast<char>('a' + c)));
  sep_ = vocab_.add("<sep>");
  eos_ = vocab_.add("<eos>");
}

void CopyTask::format(const std::vector<int32_t>& x, Example& out) const {
  std::vector<int32_t> y(x);
  if (reverse_) y.assign(x.rbegin(), x.rend());
  for (const int32_t c : x) out.push(c, kNotScored);
  out.push(sep_, y.empty() ? eos_ : y.front());
  for (size_t i = 0; i < y.size(); ++i) out.push(y[i], i + 1 < y.size() ? y[i + 1] : eos_);
  out.push(eos_, kNotScored);
}

void CopyTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> x(static_cast<size_t>(n));
  for (auto& c : x) c = static_cast<int32_t>(rng.below(static_cast<uint64_t>(alphabet_)));
  format(x, out);
}

TaskInfo copy_info() {
  return {"copy",
          "repeat a string after <sep> (or reverse it), then <eos>",
          {{"alphabet", ParamType::Int, "10", "number of letters, 1..26 (a, b, ...)"},
           {"reverse", ParamType::Bool, "false", "write the copy reversed"}},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<CopyTask>(static_cast<int>(p.integer_in("alphabet", 1, 26)), p.boolean("reverse"));
          }};
}

}  // namespace srbench::tasks
