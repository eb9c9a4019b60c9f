#include "tasks/modcount.hpp"

#include <cmath>
#include <sstream>

namespace srbench::tasks {

ModCountTask::ModCountTask(int m, std::vector<int> actions, std::vector<double> probs, OutputMode mode)
    : Task("modcount"), m_(m), mode_(mode) {
  for (int v = 0; v < m; ++v) vocab_.add("a" + std::to_string(v));
  q0_ = vocab_.size();
  for (int v = 0; v < m; ++v) vocab_.add("q" + std::to_string(v));
  // Zero-probability actions are left out, so not even a rounding edge can draw one.
  double total = 0.0;
  for (size_t i = 0; i < actions.size(); ++i) {
    if (probs[i] <= 0.0) continue;
    total += probs[i];
    drawable_.push_back(actions[i]);
    cumulative_.push_back(total);
  }
}

std::vector<int32_t> ModCountTask::labels(const std::vector<int32_t>& inputs) const {
  std::vector<int32_t> out(inputs.size());
  int32_t state = 0;
  for (size_t t = 0; t < inputs.size(); ++t) {
    state = (state + inputs[t]) % m_;
    out[t] = q0_ + state;
  }
  return out;
}

void ModCountTask::generate(Rng& rng, Stream, int n, Example& out) const {
  std::vector<int32_t> inputs(static_cast<size_t>(n));
  for (auto& x : inputs) x = drawable_[rng.categorical(cumulative_)];
  format_automaton(mode_, inputs, labels(inputs), out);
}

namespace {

std::string number_text(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// `actions`: "all" (every value 0..m-1) or a non-empty list of distinct values in 0..m-1.
std::vector<int> read_actions(const ParamReader& p, int m) {
  std::vector<int> actions;
  if (p.string("actions") == "all") {
    for (int v = 0; v < m; ++v) actions.push_back(v);
    return actions;
  }
  const std::vector<int64_t> list = p.int_list("actions");
  if (list.empty()) p.fail("actions", "must name at least one action (or be 'all')");
  std::vector<bool> seen(static_cast<size_t>(m), false);
  for (int64_t v : list) {
    if (v < 0 || v >= m)
      p.fail("actions", std::to_string(v) + " is outside 0.." + std::to_string(m - 1) + " (m = " +
                            std::to_string(m) + ")");
    if (seen[static_cast<size_t>(v)]) p.fail("actions", std::to_string(v) + " is listed twice");
    seen[static_cast<size_t>(v)] = true;
    actions.push_back(static_cast<int>(v));
  }
  return actions;
}

// `probs`: "uniform" or one probability per action, summing to 1 (within 1e-6).
std::vector<double> read_probs(const ParamReader& p, size_t count) {
  if (p.string("probs") == "uniform") return std::vector<double>(count, 1.0 / static_cast<double>(count));
  const std::vector<double> probs = p.real_list("probs");
  if (probs.size() != count)
    p.fail("probs", "needs one probability per action (" + std::to_string(count) + "), got " +
                        std::to_string(probs.size()));
  double sum = 0.0;
  for (double q : probs) {
    if (q < 0.0 || q > 1.0) p.fail("probs", "entry " + number_text(q) + " is outside [0, 1]");
    sum += q;
  }
  if (std::abs(sum - 1.0) > 1e-6) p.fail("probs", "sums to " + number_text(sum) + ", not 1 (within 1e-6)");
  return probs;
}

}  // namespace

TaskInfo modcount_info() {
  return {"modcount",
          "running sum modulo m (cyclic group C_m)",
          {{"m", ParamType::Int, "5", "modulus, 2..1000"},
           {"actions", ParamType::IntList, "all", "the values drawn (distinct, in 0..m-1); all = 0..m-1"},
           {"probs", ParamType::RealList, "uniform", "probability of each action, summing to 1"},
           output_param()},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            const int m = static_cast<int>(p.integer_in("m", 2, 1000));
            std::vector<int> actions = read_actions(p, m);
            std::vector<double> probs = read_probs(p, actions.size());
            return std::make_unique<ModCountTask>(m, std::move(actions), std::move(probs),
                                                  read_output_mode(p));
          }};
}

}  // namespace srbench::tasks
