// The `srbench` module's evaluation of any model (docs/python.md): a callable's predictions scored
// with the harness's protocol on a run's evaluation sets, and its result written as a run file.
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "harness/python/bindings.hpp"
#include "harness/run/trainer.hpp"
#include "tasks/tape.hpp"

namespace srbench::pymodule {

namespace fs = std::filesystem;

namespace {

// A grid point without its model keys: what an external model's run keeps of it.
std::string data_grid(const std::string& grid) {
  std::istringstream in(grid);
  std::string item, out;
  while (in >> item)
    if (item.rfind("model.", 0) != 0) out += (out.empty() ? "" : " ") + item;
  return out;
}

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

}  // namespace

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

double chance_of(const tasks::Task& task, const std::vector<tasks::Example>& val) {
  if (const auto* tape = dynamic_cast<const tasks::TapeTask*>(&task))
    return 1.0 / static_cast<double>(tape->output_classes().size());
  return harness::uniform_guess_accuracy(val);
}

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

harness::EvalScore score_examples(py::function predict, int vocab, const std::vector<tasks::Example>& examples,
                                  int batch) {
  PyScorer scorer{std::move(predict), vocab, {}, {}, false, false, {}};
  py::gil_scoped_release release;
  return harness::evaluate_examples(std::ref(scorer), examples, batch);
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

namespace {

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
  return write_result_to(res, (runs / (res.run.run_id + ".h5")).string());
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

}  // namespace

void bind_result(py::module_& m) {
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

}  // namespace srbench::pymodule
