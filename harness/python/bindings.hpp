// What the parts of the `srbench._srbench` module share (module.cpp defines the module; py_tasks.cpp,
// py_suite.cpp, py_evaluate.cpp and py_python_run.cpp each bind one part): a batch, a suite, an
// external model's result, and the functions one part calls in another.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/results/results.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "harness/run/metrics.hpp"
#include "harness/suite/suite.hpp"
#include "tasks/task.hpp"

namespace srbench::pymodule {

namespace py = pybind11;
using harness::Batch;
using harness::RunSpec;

// Bad input from Python: a ValueError with `message`.
[[noreturn]] void value_error(const std::string& message);

// A batch as Python sees it: tokens and targets [B,T], lengths and input_lengths [B].
struct PyBatch {
  py::array_t<int32_t> tokens, targets, lengths, input_lengths;
};
PyBatch to_python(Batch&& b);  // the arrays own b's vectors (moved, no copy)
std::string shape_text(const py::array& a);  // "(2, 3)", "(4,)"

struct PySuite {
  harness::Suite suite;
};
// The run whose data an external model uses: by run id, or by (entry, seed) when every run of
// that pair has the same data (the built-in model entries may set train or eval keys).
const RunSpec& find_run(const harness::Suite& suite, const std::string& entry, uint64_t seed,
                        const std::string& run_id, bool with_eval);
// The run attributes of one kind (the results stage's table, run_attribute_values) as a dict.
py::dict attributes(const harness::RunResult& r, harness::RunAttributeKind kind);

// The batch of training step `step`, drawn exactly as run_training draws it: examples
// step·B … step·B+B−1 of `data` (B = examples.size()), assembled into one Batch; each example's
// tokens added to `seen` when given. Runs with the GIL released.
PyBatch draw_batch(harness::TrainingData& data, std::vector<tasks::Example>& examples, int64_t step,
                   harness::SeenSet* seen = nullptr);

// An external model's result (Suite.evaluate), or a suite's Python model's (_PythonRun), as it is
// built: the run's spec, the suite it belongs to, and the metrics derived from its rows and curve.
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

// A run's chance accuracy, as run_training has it: a tape task's output classes, else a uniform
// guess over the targets of the run's validation set.
double chance_of(const tasks::Task& task, const std::vector<tasks::Example>& val);
// The final evaluation of `r` with `predict` (the GIL released but for its calls and the
// progress callback's); a non-finite logit at a scored position makes the run `diverged`, as a
// built-in run with a non-finite loss: never `ok`.
void evaluate_with(py::function predict, const tasks::Task& task, const RunSpec& spec, harness::RunResult& r,
                   const harness::SeenSet* seen, int batch, const py::object& progress);
// seq_acc and token_acc of `predict` on `examples` (the GIL released but for its calls).
harness::EvalScore score_examples(py::function predict, int vocab, const std::vector<tasks::Example>& examples,
                                  int batch);
// Suite.evaluate: an external model's result on a run's evaluation sets.
PyResult evaluate(const PySuite& s, py::function predict, const std::string& entry, uint64_t seed,
                  const std::string& model_name, const std::string& run_id, int batch, const std::string& model_yaml,
                  py::object progress);

void bind_tasks(py::module_& m);       // Batch, Task, tasks()
void bind_suite(py::module_& m);       // Suite, load_suite, load_suite_text, _TrainingStream
void bind_result(py::module_& m);      // Result
void bind_python_run(py::module_& m);  // _PythonRun

}  // namespace srbench::pymodule
