// The `srbench` Python module's C++ part, `srbench._srbench` (docs/python.md): tasks as NumPy
// batches, a suite's training stream, the harness's evaluation of any model given as a callable,
// and run files written in the harness's layout. It joins tasks and the harness's run and results
// stages; the pure-Python part beside it (srbench/__init__.py) wraps it and reads results with
// pandas. Long C++ work runs with the GIL released.
// This file defines the module; py_tasks.cpp, py_suite.cpp, py_evaluate.cpp and py_python_run.cpp
// bind its parts (harness/python/bindings.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <variant>

#include "common/version.hpp"
#include "harness/core/metric_fields.hpp"
#include "harness/python/bindings.hpp"
#include "harness/report/stats.hpp"
#include "model/error.hpp"

namespace py = pybind11;
using namespace srbench;

namespace {

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
  m.def("seed_stats", &seed_stats_of, py::arg("values"));
  m.def("bootstrap_mean_interval", [](const std::vector<double>& values, double level, int resamples) {
    const harness::Interval ci = harness::bootstrap_mean_interval(values, level, resamples);
    return std::make_pair(ci.lo, ci.hi);
  }, py::arg("values"), py::arg("level") = 0.95, py::arg("resamples") = 10000);
  m.def("metric_fields", &metric_list);
  m.def("summary_columns", &summary_column_names);

  pymodule::bind_tasks(m);
  pymodule::bind_suite(m);
  pymodule::bind_python_run(m);
  pymodule::bind_result(m);
}
