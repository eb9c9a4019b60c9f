// bucket_sort (CS; NNCH tasks/cs/bucket_sort.py): sort the symbols.
//
// Input tape: n uniform symbols of `0 … {V-1}`; L_out = n blanks, all scored: the symbols in
// ascending order of value (a counting sort). Example (V = 5): 1 0 2 0 4 1 1 2 + 8 blanks →
// 0 0 1 1 1 2 2 4.
#include "tasks/chomsky.hpp"
#include "tasks/symbol_string.hpp"

namespace srbench::tasks {

namespace {

class BucketSortTask : public SymbolStringTask {
 public:
  explicit BucketSortTask(int vocab_size) : SymbolStringTask("bucket_sort", vocab_size) {}
  int output_length(int input_length) const override { return input_length; }

 protected:
  void label(std::span<const int32_t> input, std::vector<int32_t>& out) const override {
    std::vector<size_t> count(static_cast<size_t>(vocab_size()), 0);
    for (const int32_t x : input) ++count[static_cast<size_t>(x)];
    for (int32_t v = 0; v < vocab_size(); ++v) out.insert(out.end(), count[static_cast<size_t>(v)], v);
  }
};

}  // namespace

TaskInfo bucket_sort_info() {
  return symbol_string_task_info<BucketSortTask>(
      "bucket_sort", "CS: the input symbols sorted ascending (Delétang et al.)", "5");
}

}  // namespace srbench::tasks
