#include "tasks/quaternion.hpp"

namespace srbench::tasks {

namespace {

// A quaternion w + x·i + y·j + z·k with integer components.
using Quat = std::array<int, 4>;

// The Hamilton product a·b.
Quat hamilton(const Quat& a, const Quat& b) {
  return {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
          a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
          a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
          a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
}

// Label order +1 -1 +i -i +j -j +k -k: state s is the unit s/2 with sign - when s is odd.
Quat element(int s) {
  Quat q = {0, 0, 0, 0};
  q[static_cast<size_t>(s / 2)] = s % 2 ? -1 : 1;
  return q;
}

int state_of(const Quat& q) {
  for (int s = 0; s < 8; ++s)
    if (element(s) == q) return s;
  return -1;  // unreachable: Q8 is closed under multiplication
}

}  // namespace

QuaternionTask::QuaternionTask(OutputMode mode) : Task("quaternion"), mode_(mode) {
  for (const char* x : {"1", "i", "j", "k"}) vocab_.add(x);
  first_label_ = vocab_.size();
  for (const char* q : {"+1", "-1", "+i", "-i", "+j", "-j", "+k", "-k"}) vocab_.add(q);
  for (int s = 0; s < 8; ++s)
    for (int x = 0; x < 4; ++x) next_[s][x] = state_of(hamilton(element(s), element(2 * x)));
}

std::vector<int32_t> QuaternionTask::labels(const std::vector<int32_t>& inputs) const {
  std::vector<int32_t> out(inputs.size());
  int32_t state = 0;  // +1
  for (size_t t = 0; t < inputs.size(); ++t) {
    state = next_[static_cast<size_t>(state)][static_cast<size_t>(inputs[t])];
    out[t] = first_label_ + state;
  }
  return out;
}

void QuaternionTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> inputs(static_cast<size_t>(n));
  for (auto& x : inputs) x = static_cast<int32_t>(rng.below(4));
  format_automaton(mode_, inputs, labels(inputs), out);
}

TaskInfo quaternion_info() {
  return {"quaternion",
          "running product in the quaternion group Q8 (right multiplication)",
          {output_param()},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            return std::make_unique<QuaternionTask>(read_output_mode(p));
          }};
}

}  // namespace srbench::tasks
