#include "harness/run/resources.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>

#include "model/memory.hpp"
#include "model/params.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

namespace {

constexpr int64_t kEvalBatch = 64;               // harness/run/evaluate.cpp's batches (and the diagnostics')
constexpr uint64_t kProcessBytes = 64ull << 20;  // the binary, its libraries, data and evaluation sets
// A Python model's process (arch: python): the interpreter, numpy, torch and srbench's module,
// without the model's own tensors (docs/python.md gives the measured figure).
constexpr uint64_t kPythonProcessBytes = 512ull << 20;

uint64_t u64(int64_t bytes) { return static_cast<uint64_t>(bytes); }

// What the model allocates for a forward_backward of B sequences of T tokens (model/memory.hpp).
model::CallMemory forward_backward_memory(const model::ModelConfig& m, int64_t B, int64_t T, bool grads, int threads) {
  return model::forward_backward_memory(m, static_cast<int>(B), static_cast<int>(T), grads, std::max(threads, 1));
}

}  // namespace

MemoryEstimate estimate_memory(const RunSpec& run, int threads) {
  MemoryEstimate e;
  if (run.python.on) {  // a Python process: the interpreter and torch; the model's own is not known here
    e.process = kPythonProcessBytes;
    return e;
  }
  // A recurrent arch (recurrent.md) has its own parameter layout (ParamLayout lists either) and
  // workspace.
  const uint64_t P = model::ParamLayout(run.model).total();
  e.parameters = 4 * P;
  e.optimiser = 12 * P;
  e.process = kProcessBytes;
  // The longest sequence of the training range and of every evaluation length (and condition).
  const auto task = tasks::make_task(run.task, run.params, {run.train.data_seed});
  auto tokens = [&](const tasks::Task& t, int n) { return static_cast<int64_t>(t.max_sequence_length(n)); };
  int64_t train_T = tokens(*task, run.train.length_max), eval_T = train_T;
  if (task->uses_length()) {
    for (int n : run.eval.lengths) eval_T = std::max(eval_T, tokens(*task, n));
    for (const auto& sh : run.eval.shifts) {
      tasks::RawParams p = run.params;
      for (const auto& [k, v] : sh.params) p[k] = v;
      const auto shifted = tasks::make_task(run.task, p, {run.train.data_seed});
      for (int n : run.eval.lengths)
        if (n >= run.train.length_min && n <= run.train.length_max) eval_T = std::max(eval_T, tokens(*shifted, n));
    }
  }
  if (!run.model.transformer()) {  // recurrent.md's and linear-rnn.md's archs: no T×T matrices
    uint64_t recurrent_acts = 0;
    for (const auto& [B, T, grads] : {std::tuple<int64_t, int64_t, bool>{run.train.batch, train_T, true}, {kEvalBatch, eval_T, false}}) {
      const model::CallMemory call = forward_backward_memory(run.model, B, T, grads, threads);
      const uint64_t acts = u64(call.saved + call.scratch), work = u64(call.outputs) + u64(model::packing_bytes(run.model, threads));
      recurrent_acts += acts;
      if (acts + work > e.activations + e.workspaces) e.activations = acts, e.workspaces = work, e.batch = B, e.tokens = T;
    }
    e.activations = recurrent_acts;
    return e;
  }
  // A transformer keeps forward's buffers (with the T×T attention matrices) for the larger of the
  // training batch and the diagnostics' 64 examples at the training lengths; evaluation (validation
  // and the final sets, at every length) runs forward only, in buffers of its own beside them.
  const int64_t B = std::max<int64_t>(run.train.batch, kEvalBatch);
  const model::CallMemory train = forward_backward_memory(run.model, B, train_T, true, threads);
  const model::CallMemory eval = model::infer_memory(run.model, static_cast<int>(kEvalBatch), static_cast<int>(eval_T), std::max(threads, 1));
  e.activations = u64(train.saved), e.workspaces = u64(train.scratch + train.outputs + eval.total());
  e.batch = B, e.tokens = train_T;
  return e;
}

MemoryEstimate estimate_search_memory(const SearchSpec& search, int threads) {
  RunSpec run;
  run.task = search.task, run.params = search.params, run.model = search.model, run.train = search.train;
  run.eval = search.eval;
  run.eval.lengths.clear(), run.eval.shifts.clear();  // validation only, at the training lengths
  MemoryEstimate e = estimate_memory(run, threads);
  const uint64_t M = static_cast<uint64_t>(std::max<int64_t>(search.population, 1));
  e.parameters *= M, e.optimiser *= M, e.activations *= M, e.workspaces *= M;
  return e;
}

std::string bytes_text(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

std::string describe_estimate(const MemoryEstimate& e) {
  return bytes_text(e.total()) + " (parameters " + bytes_text(e.parameters) + ", optimiser " + bytes_text(e.optimiser) +
         ", activations " + bytes_text(e.activations) + " at " + std::to_string(e.batch) + " × " +
         std::to_string(e.tokens) + " tokens, workspaces " + bytes_text(e.workspaces) + ")";
}

uint64_t machine_memory() {
  uint64_t total = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    uint64_t kb = 0;
    meminfo >> kb;
    if (key == "MemTotal:") {
      total = kb * 1024;
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  std::ifstream cg("/sys/fs/cgroup/memory.max");
  std::string limit;
  if (cg >> limit && limit != "max") {
    const uint64_t v = std::strtoull(limit.c_str(), nullptr, 10);
    if (v > 0 && (total == 0 || v < total)) total = v;
  }
  return total;
}

}  // namespace srbench::harness
