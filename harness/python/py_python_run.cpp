// The `srbench` module's side of a suite's Python model (arch: python), trained by
// srbench/suite_run.py: the run's batch stream, learning rate, validation and final evaluation.
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

#include "harness/python/bindings.hpp"
#include "model/optim.hpp"

namespace srbench::pymodule {

namespace {

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
    const harness::EvalScore score = score_examples(std::move(predict), task->vocab().size(), val, batch_size);
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

}  // namespace

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

}  // namespace srbench::pymodule
