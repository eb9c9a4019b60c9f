#include "tasks/dyck.hpp"

#include <stdexcept>

namespace srbench::tasks {

namespace {

constexpr const char* kBrackets[] = {"(", ")", "[", "]", "{", "}", "<", ">"};
constexpr int kMaxTypes = 4;

bool is_open(int32_t token) { return token % 2 == 0; }
int type_of(int32_t token) { return token / 2 + 1; }

}  // namespace

DyckTask::DyckTask(int k, int max_depth, double p_open, DyckLabel label, OutputMode mode)
    : Task("dyck"), k_(k), max_depth_(max_depth), p_open_(p_open), label_(label), mode_(mode) {
  for (int i = 0; i < 2 * k_; ++i) vocab_.add(kBrackets[i]);
  switch (label_) {
    case DyckLabel::Top:
      first_label_ = vocab_.add("t0");
      for (int t = 1; t <= k_; ++t) vocab_.add("t" + std::to_string(t));
      break;
    case DyckLabel::Depth:
      first_label_ = vocab_.add("d0");
      for (int d = 1; d <= max_depth_; ++d) vocab_.add("d" + std::to_string(d));
      break;
    case DyckLabel::Balanced:
      first_label_ = vocab_.add("yes");
      vocab_.add("no");
      break;
  }
}

void DyckTask::check_length(int n) const {
  Task::check_length(n);
  if (label_ == DyckLabel::Balanced && n % 2 != 0)
    fail("n", "length " + std::to_string(n) + " is odd; label balanced needs an even length >= 2");
}

int DyckTask::max_sequence_length(int n) const {
  return label_ == DyckLabel::Balanced ? n : automaton_max_sequence_length(mode_, n);
}

std::vector<int32_t> DyckTask::labels(const std::vector<int32_t>& word) const {
  std::vector<int32_t> out;
  std::vector<int> stack;  // types
  for (const int32_t token : word) {
    if (token < 0 || token >= 2 * k_) throw std::invalid_argument("dyck: not a bracket id");
    if (is_open(token)) {
      if (static_cast<int>(stack.size()) == max_depth_) throw std::invalid_argument("dyck: deeper than max_depth");
      stack.push_back(type_of(token));
    } else {
      if (stack.empty() || stack.back() != type_of(token)) throw std::invalid_argument("dyck: invalid prefix");
      stack.pop_back();
    }
    if (label_ == DyckLabel::Depth)
      out.push_back(first_label_ + static_cast<int32_t>(stack.size()));
    else
      out.push_back(first_label_ + (stack.empty() ? 0 : stack.back()));
  }
  return out;
}

bool DyckTask::is_balanced(const std::vector<int32_t>& word) const {
  std::vector<int> stack;
  for (const int32_t token : word) {
    if (is_open(token)) {
      stack.push_back(type_of(token));
    } else {
      if (stack.empty() || stack.back() != type_of(token)) return false;
      stack.pop_back();
    }
  }
  return stack.empty();
}

void DyckTask::format(const std::vector<int32_t>& word, Example& out) const {
  if (label_ != DyckLabel::Balanced) {
    format_automaton(mode_, word, labels(word), out);
    return;
  }
  const int32_t verdict = first_label_ + (is_balanced(word) ? 0 : 1);  // yes, no
  for (size_t t = 0; t < word.size(); ++t) out.push(word[t], t + 1 == word.size() ? verdict : kNotScored);
}

std::vector<int32_t> DyckTask::walk(Rng& rng, int n, bool closed) const {
  std::vector<int32_t> word;
  std::vector<int> stack;
  for (int t = 0; t < n; ++t) {
    const int depth = static_cast<int>(stack.size());
    bool open;
    if (depth == 0)
      open = true;
    else if (depth == max_depth_ || (closed && depth == n - t))
      open = false;
    else
      open = rng.bernoulli(p_open_);
    if (open) {
      const int type = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(k_)));
      stack.push_back(type);
      word.push_back(open_token(type));
    } else {
      word.push_back(close_token(stack.back()));
      stack.pop_back();
    }
  }
  return word;
}

std::vector<int32_t> DyckTask::corrupt(Rng& rng, const std::vector<int32_t>& word) const {
  while (true) {
    const bool change_type = rng.bernoulli(0.5);
    if (change_type && k_ == 1) continue;  // no other type: draw the kind again
    const size_t pos = rng.below(word.size());
    std::vector<int32_t> bad = word;
    if (change_type) {
      const int type = type_of(bad[pos]);
      int other = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(k_ - 1)));  // uniform over the k-1 others
      if (other >= type) ++other;
      bad[pos] = is_open(bad[pos]) ? open_token(other) : close_token(other);
    } else {
      bad[pos] ^= 1;  // open <-> close of the same type
    }
    if (!is_balanced(bad)) return bad;
  }
}

void DyckTask::generate(Rng& rng, Stream, int n, Example& out) const {
  if (label_ != DyckLabel::Balanced) {
    format(walk(rng, n, false), out);
    return;
  }
  std::vector<int32_t> word = walk(rng, n, true);
  if (rng.bernoulli(0.5)) word = corrupt(rng, word);
  format(word, out);
}

TaskInfo dyck_info() {
  return {"dyck",
          "bracket matching with k types and bounded depth: top of stack, depth, or balanced",
          {{"k", ParamType::Int, "2", "number of bracket types, 1..4: ( ) [ ] { } < > in order"},
           {"max_depth", ParamType::Int, "8", "largest stack depth, 1..256 (the walk closes there)"},
           {"p_open", ParamType::Real, "0.5", "probability of opening when both moves are allowed"},
           {"label", ParamType::Choice, "top",
            "top: type on top of the stack; depth: stack depth; balanced: is the word valid (last position)",
            {"top", "depth", "balanced"}},
           output_param()},
          [](const ParamReader& p, const TaskContext&) -> std::unique_ptr<Task> {
            const int k = static_cast<int>(p.integer_in("k", 1, kMaxTypes));
            const int max_depth = static_cast<int>(p.integer_in("max_depth", 1, 256));
            const double p_open = p.probability("p_open");
            const std::string label = p.string("label");
            const OutputMode mode = read_output_mode(p);
            DyckLabel l = DyckLabel::Top;
            if (label == "depth") l = DyckLabel::Depth;
            if (label == "balanced") {
              l = DyckLabel::Balanced;
              if (p.is_set("output"))
                p.fail("output", "is not used with label balanced (only the last position is scored); remove it");
            }
            return std::make_unique<DyckTask>(k, max_depth, p_open, l, mode);
          }};
}

}  // namespace srbench::tasks
