// The `srbench` module's tasks (docs/python.md): a task's examples as NumPy batches, padded as the
// trainer pads them, and the task registry.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "harness/python/bindings.hpp"
#include "tasks/task.hpp"

namespace srbench::pymodule {

[[noreturn]] void value_error(const std::string& message) { throw py::value_error(message); }

namespace {

// An int32 NumPy array that owns `v` (moved, no copy).
py::array_t<int32_t> owned_array(std::vector<int32_t>&& v, std::vector<py::ssize_t> shape) {
  auto* owner = new std::vector<int32_t>(std::move(v));
  py::capsule free_it(owner, [](void* p) { delete static_cast<std::vector<int32_t>*>(p); });
  return py::array_t<int32_t>(shape, owner->data(), free_it);
}

}  // namespace

PyBatch to_python(Batch&& b) {
  PyBatch p;
  p.tokens = owned_array(std::move(b.tokens), {b.B, b.T});
  p.targets = owned_array(std::move(b.targets), {b.B, b.T});
  p.lengths = owned_array(std::move(b.lengths), {b.B});
  p.input_lengths = owned_array(std::move(b.input_lengths), {b.B});
  return p;
}

namespace {

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

}  // namespace

void bind_tasks(py::module_& m) {
  m.def("tasks", &task_list);
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
}

}  // namespace srbench::pymodule
