// The `srbench` Python module's C++ part, `srbench._srbench` (docs/python.md): tasks as NumPy
// batches, a suite's training stream, the harness's evaluation of any model given as a callable,
// and run files written in the harness's layout. It joins tasks and the harness's run and results
// stages; the pure-Python part beside it (srbench/__init__.py) wraps it and reads results with
// pandas. Long C++ work runs with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <tuple>
#include <variant>

#include "harness/core/metric_fields.hpp"
#include "harness/report/stats.hpp"
#include "harness/results/results.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "harness/run/metrics.hpp"
#include "harness/run/trainer.hpp"
#include "harness/suite/fields.hpp"
#include "harness/suite/suite.hpp"
#include "harness/sweep/splines.hpp"
#include "model/error.hpp"
#include "model/optim.hpp"
#include "common/float_mode.hpp"
#include "common/version.hpp"
#include "tasks/tape.hpp"
#include "tasks/task.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace srbench;
using harness::Batch;
using harness::RunSpec;

namespace {

[[noreturn]] void value_error(const std::string& message) { throw py::value_error(message); }

// An int32 NumPy array that owns `v` (moved, no copy).
py::array_t<int32_t> owned_array(std::vector<int32_t>&& v, std::vector<py::ssize_t> shape) {
  auto* owner = new std::vector<int32_t>(std::move(v));
  py::capsule free_it(owner, [](void* p) { delete static_cast<std::vector<int32_t>*>(p); });
  return py::array_t<int32_t>(shape, owner->data(), free_it);
}

// A batch as Python sees it: tokens and targets [B,T], lengths and input_lengths [B].
struct PyBatch {
  py::array_t<int32_t> tokens, targets, lengths, input_lengths;
};

PyBatch to_python(Batch&& b) {
  PyBatch p;
  p.tokens = owned_array(std::move(b.tokens), {b.B, b.T});
  p.targets = owned_array(std::move(b.targets), {b.B, b.T});
  p.lengths = owned_array(std::move(b.lengths), {b.B});
  p.input_lengths = owned_array(std::move(b.input_lengths), {b.B});
  return p;
}

// A bool array of `like`'s shape [B, T] with element (i, t) = at(i, t).
template <typename F>
py::array_t<bool> bool_grid(const py::array_t<int32_t>& like, F&& at) {
  const auto B = like.shape(0), T = like.shape(1);
  py::array_t<bool> m({B, T});
  auto out = m.mutable_unchecked<2>();
  for (py::ssize_t i = 0; i < B; ++i)
    for (py::ssize_t t = 0; t < T; ++t) out(i, t) = at(i, t);
  return m;
}

tasks::Stream stream_of(const std::string& text) {
  const auto s = tasks::parse_stream(text);
  if (!s) value_error("stream must be train, train-arch or eval, got '" + text + "'");
  return *s;
}

// ---- tasks --------------------------------------------------------------------------------------

// The int32 buffers of batches' arrays. A released array's buffer is kept for the next batch
// (a few of them): a fresh large block from malloc, returned to the system when freed, costs
// page faults that take as long as generating a fast task's batch. Used with the GIL held
// (taken before releasing it, given back by the array's capsule), which guards the pool.
struct Buffer {
  std::unique_ptr<int32_t[]> data;
  size_t capacity = 0;
};
class BufferPool {
 public:
  Buffer* take(size_t n) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if ((*it)->capacity >= n && (best == free_.end() || (*it)->capacity < (*best)->capacity)) best = it;
    if (best != free_.end() && (*best)->capacity <= 2 * n + 1024) {
      Buffer* b = best->release();
      free_.erase(best);
      return b;
    }
    return new Buffer{std::unique_ptr<int32_t[]>(new int32_t[n]), n};
  }
  void give(Buffer* b) {
    if (free_.size() >= kKept) free_.erase(free_.begin());  // the oldest
    free_.emplace_back(b);
  }

 private:
  static constexpr size_t kKept = 8;
  std::vector<std::unique_ptr<Buffer>> free_;
};
BufferPool& buffer_pool() {
  static auto* pool = new BufferPool;  // never destroyed: capsules may outlive static destruction
  return *pool;
}

// Arrays of shape `shape` over `data`, each keeping `owner` (the capsule that frees their memory)
// alive: several arrays of a batch share one block and one capsule.
py::array_t<int32_t> array_over(int32_t* data, std::vector<py::ssize_t> shape, const py::capsule& owner) {
  return py::array_t<int32_t>(std::move(shape), data, owner);
}
py::capsule owning(std::unique_ptr<int32_t[]> data) {
  return py::capsule(data.release(), [](void* p) { delete[] static_cast<int32_t*>(p); });
}
// A pool buffer's capsule, which gives the buffer back when the last array over it is freed.
py::capsule pooled(Buffer* b) {
  return py::capsule(b, [](void* p) { buffer_pool().give(static_cast<Buffer*>(p)); });
}

// Copies n int32 (a row, often a short one) without a call to memmove per row: fixed-size
// blocks of 8, then of 4, 2 and 1, which the compiler inlines as moves.
inline void copy_row(const int32_t* __restrict from, size_t n, int32_t* __restrict to) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(to + i, from + i, 8 * sizeof(int32_t));
  if (i + 4 <= n) std::memcpy(to + i, from + i, 4 * sizeof(int32_t)), i += 4;
  if (i + 2 <= n) std::memcpy(to + i, from + i, 2 * sizeof(int32_t)), i += 2;
  if (i < n) to[i] = from[i];
}

// Examples 0..count−1 drawn by draw(k, n_k, example) at lengths length(k), as Batch::assemble
// lays them out (right-padded to the longest with token 0 and target −1) but written straight
// into the rows: each example goes through one reused Example (no batch of them held), its row
// (stride: the longest example the lengths allow) padded at once, and the rows packed to the
// longest example drawn only when that is shorter. `fixed`: every length(k) is length(0).
template <typename Length, typename Draw>
PyBatch draw_batch(const tasks::Task& task, int64_t count, bool fixed, Length length, Draw draw) {
  size_t cap = 0;
  for (int64_t k = 0; k < (fixed ? 1 : count); ++k) {
    task.check_length(length(k));  // a bad n: the TaskError sample_into would throw
    cap = std::max(cap, static_cast<size_t>(task.max_sequence_length(length(k))));
  }
  const size_t B = static_cast<size_t>(count);
  // tokens and targets in one pool buffer, lengths and input_lengths in one block
  std::unique_ptr<Buffer> rows(buffer_pool().take(2 * B * cap));
  int32_t* tokens = rows->data.get();
  int32_t* targets = tokens + B * cap;
  std::unique_ptr<int32_t[]> per_example(new int32_t[2 * B]);
  int32_t* lengths = per_example.get();
  int32_t* input_lengths = lengths + B;
  size_t T = 0;
  {
    py::gil_scoped_release release;
    tasks::Example ex;
    ex.tokens.reserve(cap), ex.targets.reserve(cap);
    for (size_t k = 0; k < B; ++k) {
      draw(static_cast<int64_t>(k), length(static_cast<int64_t>(k)), ex);
      const size_t L = ex.tokens.size();
      if (L > cap) throw std::logic_error(task.name() + ": an example longer than max_sequence_length");
      int32_t* row_tokens = tokens + k * cap;
      int32_t* row_targets = targets + k * cap;
      copy_row(ex.tokens.data(), L, row_tokens);
      copy_row(ex.targets.data(), L, row_targets);
      std::fill(row_tokens + L, row_tokens + cap, 0);
      std::fill(row_targets + L, row_targets + cap, tasks::kNotScored);
      lengths[k] = static_cast<int32_t>(L);
      input_lengths[k] = ex.input_length;
      T = std::max(T, L);
    }
    if (T != cap)  // pack rows of stride cap to stride T (row k moves left: k·T ≤ k·cap)
      for (size_t k = 1; k < B; ++k) {
        std::memmove(tokens + k * T, tokens + k * cap, T * sizeof(int32_t));
        std::memmove(targets + k * T, targets + k * cap, T * sizeof(int32_t));
      }
  }
  const auto b = static_cast<py::ssize_t>(B), t = static_cast<py::ssize_t>(T);
  const py::capsule rows_owner = pooled(rows.release()), per_example_owner = owning(std::move(per_example));
  return {array_over(tokens, {b, t}, rows_owner), array_over(targets, {b, t}, rows_owner),
          array_over(lengths, {b}, per_example_owner), array_over(input_lengths, {b}, per_example_owner)};
}

struct PyTask {
  std::shared_ptr<const tasks::Task> task;

  PyTask(const std::string& name, const tasks::RawParams& params, uint64_t data_seed)
      : task(tasks::make_task(name, params, {data_seed})) {}

  // Examples index .. index+count−1 at length n, as `srbench sample` draws them, padded as the
  // trainer pads.
  PyBatch sample(int64_t n, int64_t count, uint64_t seed, const std::string& stream_text, int64_t index) const {
    if (count < 1) value_error("count must be at least 1, got " + std::to_string(count));
    if (index < 0) value_error("index must be at least 0, got " + std::to_string(index));
    if (n < -1'000'000) value_error("n " + std::to_string(n) + " is below the limit of -1000000");
    if (n > 1'000'000) value_error("n " + std::to_string(n) + " is above the limit of 1000000");
    const tasks::Stream stream = stream_of(stream_text);
    const int len = static_cast<int>(n);
    return draw_batch(*task, count, true, [len](int64_t) { return len; }, [&](int64_t k, int n_k, tasks::Example& ex) {
      task->sample_into(seed, stream, static_cast<uint64_t>(index + k), n_k, ex);
    });
  }

  // One example per entry of `lengths`: example index+i at length lengths[i].
  PyBatch batch(const std::vector<int64_t>& lengths, uint64_t seed, const std::string& stream_text,
                int64_t index) const {
    if (lengths.empty()) value_error("lengths must not be empty");
    if (index < 0) value_error("index must be at least 0, got " + std::to_string(index));
    for (int64_t n : lengths) {
      if (n < -1'000'000) value_error("length " + std::to_string(n) + " is below the limit of -1000000");
      if (n > 1'000'000) value_error("length " + std::to_string(n) + " is above the limit of 1000000");
    }
    const tasks::Stream stream = stream_of(stream_text);
    return draw_batch(
        *task, static_cast<int64_t>(lengths.size()), false,
        [&](int64_t k) { return static_cast<int>(lengths[static_cast<size_t>(k)]); },
        [&](int64_t k, int n_k, tasks::Example& ex) {
          task->sample_into(seed, stream, static_cast<uint64_t>(index + k), n_k, ex);
        });
  }
};

py::list task_list() {
  py::list out;
  for (const auto& t : tasks::task_registry()) {
    py::list params;
    for (const auto& p : t.params) {
      py::dict d;
      d["name"] = p.name;
      d["kind"] = tasks::param_type_name(p.type);
      d["default"] = p.default_text.empty() ? py::object(py::none()) : py::object(py::str(p.default_text));
      d["help"] = p.help;
      d["choices"] = p.choices;
      params.append(d);
    }
    py::dict d;
    d["name"] = t.name;
    d["summary"] = t.summary;
    d["level"] = t.level;
    d["params"] = params;
    out.append(d);
  }
  return out;
}

// ---- suites ---------------------------------------------------------------------------------------

struct PySuite {
  harness::Suite suite;
};

// A parsed suite, its splines files read (the ids of runs whose splines come from a file).
PySuite expanded(harness::Suite suite) {
  PySuite s{std::move(suite)};
  harness::resolve_splines_files(s.suite);
  return s;
}

PySuite load(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides) {
  return expanded(harness::load_suite(path, overrides));
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

// What a run's data depends on (its training data: params, train; its evaluation: also eval).
std::string data_key(const RunSpec& r, bool with_eval) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "params" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : r.params) e << YAML::Key << k << YAML::Value << v;
  e << YAML::EndMap << YAML::Key << "train" << YAML::Value << YAML::BeginMap;
  write_fields(harness::suite::train_fields(), r.train, e);
  e << YAML::EndMap;
  if (with_eval) {
    e << YAML::Key << "eval" << YAML::Value << YAML::BeginMap;
    write_fields(harness::suite::eval_fields(), r.eval, e);
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  return e.c_str();
}

// The run whose data an external model uses: by run id, or by (entry, seed) when every run of
// that pair has the same data (the built-in model entries may set train or eval keys).
const RunSpec& find_run(const harness::Suite& suite, const std::string& entry, uint64_t seed,
                        const std::string& run_id, bool with_eval) {
  if (!run_id.empty()) {
    for (const auto& r : suite.runs)
      if (r.id == run_id) return r;
    value_error("run '" + run_id + "' is not a run of suite '" + suite.name + "'");
  }
  std::vector<std::string> entries;
  for (const auto& r : suite.runs)
    if (std::find(entries.begin(), entries.end(), r.entry) == entries.end()) entries.push_back(r.entry);
  if (std::find(entries.begin(), entries.end(), entry) == entries.end())
    value_error("entry '" + entry + "' is not a task entry of suite '" + suite.name + "' (entries: " + join(entries) + ")");
  std::vector<const RunSpec*> match;
  for (const auto& r : suite.runs)
    if (r.entry == entry && r.seed == seed) match.push_back(&r);
  if (match.empty()) {
    std::vector<std::string> seeds;
    for (auto s : suite.seeds) seeds.push_back(std::to_string(s));
    value_error("seed " + std::to_string(seed) + " is not a seed of suite '" + suite.name + "' (seeds: " + join(seeds) + ")");
  }
  const std::string key = data_key(*match.front(), with_eval);
  for (const RunSpec* r : match)
    if (data_key(*r, with_eval) != key)
      value_error("entry '" + entry + "' seed " + std::to_string(seed) + ": its runs " + match.front()->id + " (" +
                  match.front()->model_name + ") and " + r->id + " (" + r->model_name +
                  ") differ in their train or eval settings: pass run=<run id> to choose one");
  return *match.front();
}

// A grid point without its model keys: what an external model's run keeps of it.
std::string data_grid(const std::string& grid) {
  std::istringstream in(grid);
  std::string item, out;
  while (in >> item)
    if (item.rfind("model.", 0) != 0) out += (out.empty() ? "" : " ") + item;
  return out;
}

// A run attribute's value as a Python str, int or float.
py::object cell_value(const h5::Cell& c) {
  return std::visit([](const auto& v) { return py::object(py::cast(v)); }, c);
}

// The run attributes of one kind (the results stage's table, run_attribute_values) as a dict.
py::dict attributes(const harness::RunResult& r, harness::RunAttributeKind kind) {
  py::dict d;
  for (const auto& a : harness::run_attribute_values(r))
    if (a.kind == kind) d[py::str(a.name)] = cell_value(a.value);
  return d;
}

// Each run as {index, id} and its identity attributes as a run file records them (config, task,
// entry, model, grid, seed).
py::list run_list(const PySuite& s) {
  py::list out;
  for (const auto& r : s.suite.runs) {
    py::dict d;
    d["index"] = r.index;
    d["id"] = r.id;
    for (const auto& [k, v] : attributes(harness::result_of(r), harness::RunAttributeKind::Identity)) d[k] = v;
    out.append(d);
  }
  return out;
}

// ---- the training stream ------------------------------------------------------------------------------

// The batch of training step `step`, drawn exactly as run_training draws it: examples
// step·B … step·B+B−1 of `data` (B = examples.size()), assembled into one Batch; each example's
// tokens added to `seen` when given. Runs with the GIL released.
PyBatch draw_batch(harness::TrainingData& data, std::vector<tasks::Example>& examples, int64_t step,
                   harness::SeenSet* seen = nullptr) {
  Batch b;
  {
    py::gil_scoped_release release;
    const auto B = static_cast<int64_t>(examples.size());
    for (int64_t k = 0; k < B; ++k) {
      tasks::Example& ex = examples[static_cast<size_t>(k)];
      data.example(static_cast<uint64_t>(step * B + k), ex);
      if (seen) seen->add(ex.tokens);
    }
    b.assemble(examples);
  }
  return to_python(std::move(b));
}

// Batches s = 0, 1, … of a run, drawn exactly as run_training draws them (draw_batch).
struct PyStream {
  std::unique_ptr<RunSpec> spec;
  std::unique_ptr<tasks::Task> task;
  std::unique_ptr<harness::TrainingData> data;
  std::vector<tasks::Example> examples;
  int64_t step = 0;

  explicit PyStream(const RunSpec& r) : spec(std::make_unique<RunSpec>(r)) {
    task = tasks::make_task(spec->task, spec->params, {spec->train.data_seed});
    data = std::make_unique<harness::TrainingData>(*task, *spec);
    examples.resize(static_cast<size_t>(spec->train.batch));
  }
  // The batch of training step `at` (0 .. train.steps−1), drawn as the trainer draws it.
  PyBatch batch_at(int64_t at) {
    if (at < 0 || at >= spec->train.steps)
      throw py::index_error("step " + std::to_string(at) + " is outside 0.." + std::to_string(spec->train.steps - 1) +
                            " (train.steps " + std::to_string(spec->train.steps) + ")");
    return draw_batch(*data, examples, at);
  }
  PyBatch next() {
    if (step >= spec->train.steps) throw py::stop_iteration();
    PyBatch b = batch_at(step);
    ++step;
    return b;
  }
};

// The batches the built-in trainer draws for a run, observed in run_training (which trains the
// run's model): the first `max_batches` of them.
std::vector<PyBatch> trainer_batches(const PySuite& s, const std::string& run_id, int64_t max_batches) {
  const RunSpec& spec = find_run(s.suite, "", 0, run_id, false);
  std::vector<Batch> seen;
  harness::RunResult r;
  {
    py::gil_scoped_release release;
    const srbench::DenormalsFlushed flushed;  // the CLI's floating-point mode (common/float_mode.hpp)
    r = harness::run_training(spec, nullptr, [&](int64_t step, const Batch& b) {
      if (step < max_batches) seen.push_back(b);
    });
  }
  if (r.status != "ok") throw std::runtime_error("run " + run_id + ": " + r.status + ": " + r.message);
  std::vector<PyBatch> out;
  for (auto& b : seen) out.push_back(to_python(std::move(b)));
  return out;
}

// ---- evaluation of any model ----------------------------------------------------------------------------

struct PyResult {
  harness::RunResult run;
  RunSpec spec;  // the external run: the suite run's data settings, the external model's name
  std::string suite_text, suite_name;
  void derive() {
    run.metrics = harness::derive_metrics(run.eval, run.conditions, spec.train.length_min, spec.train.length_max,
                                          run.curve, spec.train.target_accuracy,
                                          spec.train.fit_metric);
  }
};

// The resolved config of an external model's run: a built-in run's, with its model section
// `arch: external` (plus the caller's own keys, YAML text of a map).
std::string external_yaml(const RunSpec& r, const std::string& model_yaml) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "arch" << YAML::Value << "external";
  e << YAML::Key << "vocab" << YAML::Value << r.model.vocab;
  if (!model_yaml.empty()) {
    const YAML::Node extra = YAML::Load(model_yaml);
    if (!extra.IsMap()) value_error("model_config must be a dict");
    for (const auto& kv : extra) {
      const std::string k = kv.first.as<std::string>();
      if (k == "arch" || k == "vocab") value_error("model_config: key '" + k + "' is srbench's own");
      e << YAML::Key << k << YAML::Value << kv.second;
    }
  }
  e << YAML::EndMap;
  return harness::run_yaml(r, e.c_str());
}

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// Wraps a Python callable predict(tokens int32 [B,T]) -> logits [B,T,V] or predictions [B,T].
struct PyScorer {
  py::function predict;
  int vocab;
  std::vector<float> logits;
  std::vector<int32_t> predictions;
  bool saw_logits = false, saw_predictions = false;
  std::string nonfinite;  // where predict first returned a non-finite logit at a scored position

  harness::BatchOutput operator()(const Batch& bt) {
    harness::BatchOutput out;
    py::gil_scoped_acquire gil;
    auto tokens = py::array_t<int32_t>({bt.B, bt.T});
    std::copy(bt.tokens.begin(), bt.tokens.end(), tokens.mutable_data());
    const py::object got = predict(tokens);
    const py::array a = py::array::ensure(got);
    if (!a) value_error("predict must return an array (logits [B, T, V] or predictions [B, T])");
    const auto want = "for tokens of shape (" + std::to_string(bt.B) + ", " + std::to_string(bt.T) + ")";
    if (a.ndim() == 3) {
      if (a.shape(0) != bt.B || a.shape(1) != bt.T || a.shape(2) != vocab)
        value_error("predict returned logits of shape " + shape_text(a) + " " + want + ": expected (" +
                    std::to_string(bt.B) + ", " + std::to_string(bt.T) + ", " + std::to_string(vocab) + ") (V = the task's vocabulary)");
      if (!py::isinstance<py::array_t<float>>(a) && !py::isinstance<py::array_t<double>>(a) &&
          a.dtype().kind() != 'f')
        value_error("predict returned a 3-D array of dtype " + std::string(py::str(a.dtype())) + ": logits must be floats");
      const auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
      logits.assign(f.data(), f.data() + f.size());
      saw_logits = true;
      py::gil_scoped_release release;
      // cross-entropy over the scored positions, in double
      double loss = 0;
      const size_t V = static_cast<size_t>(vocab);
      for (size_t at = 0; at < bt.targets.size(); ++at) {
        const int32_t target = bt.targets[at];
        if (target < 0) continue;
        const float* row = logits.data() + at * V;
        if (!std::all_of(row, row + V, [](float x) { return std::isfinite(x); })) {
          if (nonfinite.empty())
            nonfinite = "predict returned a non-finite logit at row " + std::to_string(at / static_cast<size_t>(bt.T)) +
                        ", position " + std::to_string(at % static_cast<size_t>(bt.T)) + " of a batch of shape (" +
                        std::to_string(bt.B) + ", " + std::to_string(bt.T) + ")";
          continue;
        }
        // log Σ exp(row − max) = log1p(Σ over the others), exact for confident logits too
        const size_t top = static_cast<size_t>(std::max_element(row, row + V) - row);
        const double mx = row[top];
        double rest = 0;
        for (size_t v = 0; v < V; ++v)
          if (v != top) rest += std::exp(static_cast<double>(row[v]) - mx);
        loss += std::log1p(rest) + (mx - static_cast<double>(row[target]));
      }
      out.logits = logits.data();
      out.vocab = vocab;
      out.loss_sum = loss;
    } else if (a.ndim() == 2) {
      if (a.shape(0) != bt.B || a.shape(1) != bt.T)
        value_error("predict returned predictions of shape " + shape_text(a) + " " + want);
      if (a.dtype().kind() != 'i' && a.dtype().kind() != 'u')
        value_error("predict returned a 2-D array of dtype " + std::string(py::str(a.dtype())) +
                    ": predictions must be integers (token ids)");
      const auto p = py::array_t<int32_t, py::array::c_style | py::array::forcecast>::ensure(a);
      predictions.assign(p.data(), p.data() + p.size());
      for (size_t at = 0; at < bt.targets.size(); ++at)
        if (bt.targets[at] >= 0 && (predictions[at] < 0 || predictions[at] >= vocab))
          value_error("predict returned token id " + std::to_string(predictions[at]) + " at row " +
                      std::to_string(at / static_cast<size_t>(bt.T)) + ", position " +
                      std::to_string(at % static_cast<size_t>(bt.T)) + ": ids must be in 0.." +
                      std::to_string(vocab - 1) + " (the task's vocabulary)");
      saw_predictions = true;
      out.predictions = predictions.data();
    } else {
      value_error("predict returned an array of shape " + shape_text(a) + " " + want +
                  ": expected logits [B, T, V] or predictions [B, T]");
    }
    return out;
  }
};

// A run's chance accuracy, as run_training has it: a tape task's output classes, else a uniform
// guess over the targets of the run's validation set.
double chance_of(const tasks::Task& task, const std::vector<tasks::Example>& val) {
  if (const auto* tape = dynamic_cast<const tasks::TapeTask*>(&task))
    return 1.0 / static_cast<double>(tape->output_classes().size());
  return harness::uniform_guess_accuracy(val);
}

// The final evaluation of `r` with `predict` (the GIL released but for its calls and the
// progress callback's); a non-finite logit at a scored position makes the run `diverged`, as a
// built-in run with a non-finite loss: never `ok`.
void evaluate_with(py::function predict, const tasks::Task& task, const RunSpec& spec, harness::RunResult& r,
                   const harness::SeenSet* seen, int batch, const py::object& progress) {
  PyScorer scorer{std::move(predict), task.vocab().size(), {}, {}, false, false, {}};
  {
    py::gil_scoped_release release;
    harness::EvalProgress report;
    if (!progress.is_none())
      report = [&](size_t done, size_t total) {
        py::gil_scoped_acquire gil;
        progress(done, total);
      };
    harness::evaluate_run(std::ref(scorer), task, spec, r, seen, batch, report);
  }
  if (!scorer.nonfinite.empty()) {
    r.status = "diverged";
    r.message = scorer.nonfinite;
  }
}

PyResult evaluate(const PySuite& s, py::function predict, const std::string& entry, uint64_t seed,
                  const std::string& model_name, const std::string& run_id, int batch, const std::string& model_yaml,
                  py::object progress) {
  if (model_name.empty()) value_error("model must be a name (the run's model entry), got ''");
  if (batch < 1) value_error("batch must be at least 1, got " + std::to_string(batch));
  const RunSpec& base = find_run(s.suite, entry, seed, run_id, true);
  for (const auto& r : s.suite.runs)
    if (r.model_name == model_name)
      value_error("model '" + model_name + "' is a model entry of suite '" + s.suite.name + "': give the external model another name");
  PyResult res;
  res.spec = base;
  res.spec.model_name = model_name;
  res.spec.grid = data_grid(base.grid);
  res.spec.resolved_yaml = external_yaml(res.spec, model_yaml);
  res.spec.id = harness::short_hash(res.spec.resolved_yaml);
  res.suite_text = s.suite.text;
  res.suite_name = s.suite.name;
  res.run = harness::result_of(res.spec);
  harness::RunResult& r = res.run;
  const auto start = std::chrono::steady_clock::now();
  const auto task = tasks::make_task(base.task, base.params, {base.train.data_seed});
  r.bits_per_byte = task->reports_bits_per_byte();
  r.chance = chance_of(*task, harness::validation_set(*task, base.train, static_cast<size_t>(base.eval.val_examples)));
  evaluate_with(std::move(predict), *task, res.spec, r, nullptr, batch, progress);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.eval_s = r.wall_s;
  res.derive();
  return res;
}

// ---- a suite's Python model, trained by srbench/suite_run.py ---------------------------------------

// What run_training does around the model, for a model trained in Python (arch: python): the
// run's batch stream (every batch drawn recorded for seen_frac), its learning rate per step, its
// validation set scored with the model's predict, its curve, and the final evaluation into the
// run's own result (its id, config and model entry: the suite's run, not an external one).
struct PyPythonRun {
  PyResult res;  // the run's spec, suite text and name, and its result as it is built
  const RunSpec& spec = res.spec;
  std::unique_ptr<tasks::Task> task;
  std::unique_ptr<harness::TrainingData> data;
  std::vector<tasks::Example> val, examples;
  harness::SeenSet seen;
  int64_t drawn = 0;  // batches drawn so far, in order (each recorded once)

  PyPythonRun(const PyPythonRun&) = delete;  // `spec` refers to its own res
  PyPythonRun& operator=(const PyPythonRun&) = delete;
  PyPythonRun(const PySuite& s, const std::string& run_id) {
    res.spec = find_run(s.suite, "", 0, run_id, false);
    if (!spec.python.on) value_error("run " + run_id + " is not a Python model's run (arch: python)");
    res.suite_text = s.suite.text;
    res.suite_name = s.suite.name;
    task = tasks::make_task(spec.task, spec.params, {spec.train.data_seed});
    data = std::make_unique<harness::TrainingData>(*task, spec);
    val = harness::validation_set(*task, spec.train, static_cast<size_t>(spec.eval.val_examples));
    examples.resize(static_cast<size_t>(spec.train.batch));
    res.run = harness::result_of(spec);
    res.run.bits_per_byte = task->reports_bits_per_byte();
    res.run.chance = chance_of(*task, val);
  }

  // The batch of step `step`, which must be the next one: the stream is drawn once, in order.
  PyBatch batch(int64_t step) {
    if (step != drawn)
      value_error("batch " + std::to_string(step) + " asked for; the next batch is " + std::to_string(drawn) +
                  " (a Python run draws its stream once, in order)");
    if (step >= spec.train.steps) throw py::index_error("step " + std::to_string(step) + " is past train.steps");
    PyBatch b = draw_batch(*data, examples, step, &seen);
    ++drawn;
    return b;
  }

  double lr(int64_t step) const {
    const auto& t = spec.train;
    return model::scheduled_lr(t.lr, step, t.warmup, t.steps, t.schedule);
  }

  // seq_acc and token_acc of predict on the run's validation set.
  std::pair<double, double> validate(py::function predict, int batch_size) {
    PyScorer scorer{std::move(predict), task->vocab().size(), {}, {}, false, false, {}};
    harness::EvalScore score;
    {
      py::gil_scoped_release release;
      score = harness::evaluate_examples(std::ref(scorer), val, batch_size);
    }
    return {score.seq_acc, score.token_acc};
  }

  // The final evaluation (status ok) and the metrics: the run's result, ready to write.
  PyResult finish(py::object predict, const std::string& status, const std::string& message, double tokens_per_s,
                  double eval_s, int batch_size, py::object progress) {
    harness::RunResult& r = res.run;
    r.status = status;
    r.message = message;
    r.tokens_per_s = tokens_per_s;
    r.eval_s = eval_s;
    if (status == "ok") {
      seen.seal();
      const auto start = std::chrono::steady_clock::now();
      evaluate_with(predict.cast<py::function>(), *task, spec, r, &seen, batch_size, progress);
      r.eval_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    res.derive();
    return res;
  }
};

std::string write_result_to(const PyResult& res, const std::string& path) {
  py::gil_scoped_release release;
  harness::write_run_file(path, res.run, res.suite_text, nullptr);
  return path;
}

std::string write_result(const PyResult& res, const std::string& out) {
  const fs::path suite_file = out.empty() ? fs::path("results") / (res.suite_name + ".h5") : fs::path(out);
  const fs::path runs = suite_file.parent_path() / res.suite_name / "runs";
  std::error_code ec;
  fs::create_directories(runs, ec);
  if (ec) throw std::runtime_error(runs.string() + ": cannot create the folder: " + ec.message());
  const std::string path = (runs / (res.run.run_id + ".h5")).string();
  {
    py::gil_scoped_release release;
    harness::write_run_file(path, res.run, res.suite_text, nullptr);
  }
  return path;
}

// The evaluation rows as (length, condition, loss, token_acc, seq_acc, input_space) tuples.
using RowTuple = std::tuple<int64_t, std::string, double, double, double, double>;
std::vector<RowTuple> rows_of(const harness::RunResult& r) {
  std::vector<RowTuple> out;
  for (const auto& row : r.eval)
    out.emplace_back(row.length, r.conditions.at(static_cast<size_t>(row.condition)), row.loss, row.token_acc,
                     row.seq_acc, row.input_space);
  return out;
}

// The report's statistics of one metric across seeds (harness/report/stats.hpp) as a dict: n,
// mean, std, min, median, max, ci_lo, ci_hi — the numbers `srbench report` prints for those values.
py::dict seed_stats_of(const std::vector<double>& values) {
  const harness::SeedStats s = harness::seed_stats(values);
  py::dict d;
  d["n"] = s.n, d["mean"] = s.mean, d["std"] = s.std, d["min"] = s.min, d["median"] = s.median, d["max"] = s.max;
  d["ci_lo"] = s.ci_lo, d["ci_hi"] = s.ci_hi;
  return d;
}

// Each per-run metric (metric_fields()) as {name, kind ("int" | "real"), optional, default,
// summarised, doc}, in the table's order.
py::list metric_list() {
  py::list out;
  const harness::RunMetrics defaults;
  for (const auto& f : harness::metric_fields()) {
    py::dict d;
    d["name"] = f.name;
    d["kind"] = f.integer() ? "int" : "real";
    d["optional"] = f.optional;
    d["default"] = std::visit([&](auto member) { return py::object(py::cast(defaults.*member)); }, f.member);
    d["summarised"] = f.summarised;
    d["doc"] = f.doc;
    out.append(d);
  }
  return out;
}

// The names of the suite file's /summary columns, in order.
std::vector<std::string> summary_column_names() {
  std::vector<std::string> out;
  for (const auto& c : harness::summary_columns()) out.push_back(c.name);
  return out;
}

// _PythonRun: a suite's Python model's run, for srbench/suite_run.py.
void bind_python_run(py::module_& m) {
  py::class_<PyPythonRun>(m, "_PythonRun")
      .def(py::init<const PySuite&, const std::string&>(), py::arg("suite"), py::arg("run"))
      .def_property_readonly("id", [](const PyPythonRun& r) { return r.spec.id; })
      .def_property_readonly("index", [](const PyPythonRun& r) { return r.spec.index; })
      .def_property_readonly("seed", [](const PyPythonRun& r) { return r.spec.seed; })
      .def_property_readonly("module", [](const PyPythonRun& r) { return r.spec.python.module; })
      .def_property_readonly("kwargs", [](const PyPythonRun& r) { return r.spec.python.kwargs; })
      .def_property_readonly("device", [](const PyPythonRun& r) { return r.spec.python.device; })
      .def_property_readonly("source", [](const PyPythonRun& r) { return r.spec.python.source; })
      .def_property_readonly("vocab", [](const PyPythonRun& r) { return r.spec.model.vocab; })
      .def_property_readonly("max_len", [](const PyPythonRun& r) { return r.spec.model.max_len; })
      .def_property_readonly("train", [](const PyPythonRun& r) {
        const auto& t = r.spec.train;
        py::dict d;
        d["steps"] = t.steps, d["batch"] = t.batch, d["eval_every"] = t.eval_every, d["lr"] = t.lr;
        d["warmup"] = t.warmup, d["weight_decay"] = t.weight_decay, d["clip"] = t.clip;
        d["beta1"] = t.beta1, d["beta2"] = t.beta2, d["eps"] = t.eps;
        d["fit_metric"] = harness::fit_metric_name(t.fit_metric);
        d["save_checkpoint"] = t.save_checkpoint;
        return d;
      })
      .def("batch", &PyPythonRun::batch, py::arg("step"))
      .def("lr", &PyPythonRun::lr, py::arg("step"))
      .def("validate", &PyPythonRun::validate, py::arg("predict"), py::arg("batch") = 64)
      .def("add_curve", [](PyPythonRun& r, int64_t step, double train_loss, double val_acc, double lr, double grad_norm,
                           double val_token_acc) {
        r.res.run.curve.push_back({step, train_loss, val_acc, lr, grad_norm, val_token_acc});
      }, py::arg("step"), py::arg("train_loss"), py::arg("val_acc"), py::arg("lr"), py::arg("grad_norm"),
         py::arg("val_token_acc"))
      .def("finish", &PyPythonRun::finish, py::arg("predict"), py::arg("status"), py::arg("message"),
           py::arg("tokens_per_s"), py::arg("eval_s"), py::arg("batch") = 64, py::arg("progress") = py::none());
}

}  // namespace

PYBIND11_MODULE(_srbench, m) {
  // OpenMP's threads start in the floating-point mode of the thread that creates them: made now, in
  // the interpreter's mode, they do not carry the mode of a DenormalsFlushed call into the
  // caller's own OpenMP code (torch shares libgomp's team) afterwards.
#pragma omp parallel
  { }

  m.doc() = "srbench's generators, evaluation protocol and results files (the C++ part; see docs/python.md)";
  // Bad input from Python is a ValueError carrying the command line's message; a results file
  // that does not read an OSError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tasks::TaskError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const harness::ConfigError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const InputError& e) {  // the model's ModelError, a bad batch file
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const h5::Error& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });
  m.attr("__version__") = srbench::version();
  m.attr("__commit__") = srbench::commit();
  m.def("tasks", &task_list);
  m.def("seed_stats", &seed_stats_of, py::arg("values"));
  m.def("bootstrap_mean_interval", [](const std::vector<double>& values, double level, int resamples) {
    const harness::Interval ci = harness::bootstrap_mean_interval(values, level, resamples);
    return std::make_pair(ci.lo, ci.hi);
  }, py::arg("values"), py::arg("level") = 0.95, py::arg("resamples") = 10000);
  m.def("metric_fields", &metric_list);
  m.def("summary_columns", &summary_column_names);

  py::class_<PyBatch>(m, "Batch")
      .def_readonly("tokens", &PyBatch::tokens)
      .def_readonly("targets", &PyBatch::targets)
      .def_readonly("lengths", &PyBatch::lengths)
      .def_readonly("input_lengths", &PyBatch::input_lengths)
      // The padding made explicit: mask[b, t] is a real token (t < lengths[b]), loss_mask[b, t] a
      // scored position (targets[b, t] >= 0).
      .def_property_readonly("mask", [](const PyBatch& b) {
        const auto len = b.lengths.unchecked<1>();
        return bool_grid(b.tokens, [&](py::ssize_t i, py::ssize_t t) { return t < len(i); });
      })
      .def_property_readonly("loss_mask", [](const PyBatch& b) {
        const auto tg = b.targets.unchecked<2>();
        return bool_grid(b.targets, [&](py::ssize_t i, py::ssize_t t) { return tg(i, t) >= 0; });
      })
      .def("__repr__", [](const PyBatch& b) {
        return "<srbench.Batch tokens " + shape_text(b.tokens) + ">";
      });

  py::class_<PyTask>(m, "Task")
      .def(py::init<const std::string&, const tasks::RawParams&, uint64_t>(), py::arg("name"), py::arg("params"),
           py::arg("data_seed") = 0)
      .def_property_readonly("name", [](const PyTask& t) { return t.task->name(); })
      .def_property_readonly("vocab", [](const PyTask& t) { return t.task->vocab().names(); })
      .def("max_length", [](const PyTask& t, int n) {
        t.task->check_length(n);
        return t.task->max_sequence_length(n);
      }, py::arg("n"))
      .def("sample", &PyTask::sample, py::arg("n"), py::arg("count"), py::arg("seed"), py::arg("stream"), py::arg("index"))
      .def("batch", &PyTask::batch, py::arg("lengths"), py::arg("seed"), py::arg("stream"), py::arg("index"));

  py::class_<PySuite>(m, "Suite")
      .def_property_readonly("name", [](const PySuite& s) { return s.suite.name; })
      .def_property_readonly("text", [](const PySuite& s) { return s.suite.text; })
      .def_property_readonly("seeds", [](const PySuite& s) { return s.suite.seeds; })
      .def("runs", &run_list)
      .def("training_stream", [](const PySuite& s, const std::string& entry, uint64_t seed, const std::string& run) {
        return std::make_unique<PyStream>(find_run(s.suite, entry, seed, run, false));
      }, py::arg("entry"), py::arg("seed"), py::arg("run"))
      .def("evaluate", &evaluate, py::arg("predict"), py::arg("entry"), py::arg("seed"), py::arg("model"),
           py::arg("run"), py::arg("batch"), py::arg("model_yaml"), py::arg("progress") = py::none())
      .def("_trainer_batches", &trainer_batches, py::arg("run"), py::arg("max_batches"));
  m.def("load_suite", &load, py::arg("path"), py::arg("overrides"));
  m.def("load_suite_text", [](const std::string& text, const std::string& file) {
    return expanded(harness::parse_suite(text, file));
  }, py::arg("text"), py::arg("file"));

  bind_python_run(m);

  py::class_<PyStream>(m, "_TrainingStream")
      .def("__iter__", [](PyStream& s) -> PyStream& { return s; })
      .def("__next__", &PyStream::next)
      .def("__len__", [](const PyStream& s) { return s.spec->train.steps; })
      .def_property_readonly("step", [](const PyStream& s) { return s.step; })
      .def_property_readonly("run", [](const PyStream& s) { return s.spec->id; })
      .def("batch", &PyStream::batch_at, py::arg("step"));

  py::class_<PyResult>(m, "Result")
      .def_property_readonly("run_id", [](const PyResult& r) { return r.run.run_id; })
      .def_property_readonly("config", [](const PyResult& r) { return r.run.config_yaml; })
      .def_property_readonly("status", [](const PyResult& r) { return r.run.status; })
      .def_property_readonly("message", [](const PyResult& r) { return r.run.message; })
      .def_property_readonly("metrics", [](const PyResult& r) { return attributes(r.run, harness::RunAttributeKind::Metric); })
      .def_property_readonly("_rows", [](const PyResult& r) { return rows_of(r.run); })
      .def_property("tokens_per_s", [](const PyResult& r) { return r.run.tokens_per_s; },
                    [](PyResult& r, double v) { r.run.tokens_per_s = v; })
      .def_property("wall_s", [](const PyResult& r) { return r.run.wall_s; },
                    [](PyResult& r, double v) { r.run.wall_s = v; })
      .def("add_curve", [](PyResult& r, int64_t step, double train_loss, double val_acc, double lr, double grad_norm,
                           double val_token_acc) {
        if (!r.run.curve.empty() && step <= r.run.curve.back().step)
          value_error("add_curve: step " + std::to_string(step) + " is not after the last one (" +
                      std::to_string(r.run.curve.back().step) + ")");
        r.run.curve.push_back({step, train_loss, val_acc, lr, grad_norm, val_token_acc});
        r.derive();
      }, py::arg("step"), py::arg("train_loss"), py::arg("val_acc"), py::arg("lr"), py::arg("grad_norm"),
         py::arg("val_token_acc"))
      .def("write", &write_result, py::arg("out"))
      .def("_write_to", &write_result_to, py::arg("path"));
}
