// The `srbench` module's suites (docs/python.md): a suite loaded and expanded, its runs, and a run's
// training stream drawn as the trainer draws it.
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <memory>
#include <variant>

#include "common/float_mode.hpp"
#include "harness/python/bindings.hpp"
#include "harness/run/trainer.hpp"
#include "harness/suite/fields.hpp"
#include "harness/sweep/splines.hpp"

namespace srbench::pymodule {

namespace {

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

}  // namespace

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

namespace {

// A run attribute's value as a Python str, int or float.
py::object cell_value(const h5::Cell& c) {
  return std::visit([](const auto& v) { return py::object(py::cast(v)); }, c);
}

}  // namespace

py::dict attributes(const harness::RunResult& r, harness::RunAttributeKind kind) {
  py::dict d;
  for (const auto& a : harness::run_attribute_values(r))
    if (a.kind == kind) d[py::str(a.name)] = cell_value(a.value);
  return d;
}

namespace {

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

}  // namespace

PyBatch draw_batch(harness::TrainingData& data, std::vector<tasks::Example>& examples, int64_t step,
                   harness::SeenSet* seen) {
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

namespace {

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

}  // namespace

void bind_suite(py::module_& m) {
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


  py::class_<PyStream>(m, "_TrainingStream")
      .def("__iter__", [](PyStream& s) -> PyStream& { return s; })
      .def("__next__", &PyStream::next)
      .def("__len__", [](const PyStream& s) { return s.spec->train.steps; })
      .def_property_readonly("step", [](const PyStream& s) { return s.step; })
      .def_property_readonly("run", [](const PyStream& s) { return s.spec->id; })
      .def("batch", &PyStream::batch_at, py::arg("step"));
}

}  // namespace srbench::pymodule
