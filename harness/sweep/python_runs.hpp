// The runs of a suite's Python models (arch: python; docs/python.md, "Python models in a
// suite"), as the sweep runs them: each in a Python process of its own, started from the run's
// worker process, which trains the model on the run's batch stream and writes the run file
// itself (srbench/suite_run.py). Internal to harness/sweep/.
#pragma once

#include <string>

#include "harness/core/specs.hpp"

namespace srbench::harness::sweep {

// In a worker process: runs `spec` (a Python model) in the suite's interpreter and returns when
// its run file is written at `path`. A Python process that ends without writing it (it could
// not import srbench, it crashed) leaves a `failed` run naming how it ended; one killed by a
// stop signal (SIGTERM, SIGINT, SIGHUP) takes the worker with it by the same signal, so that
// the run is left unfinished as any other.
void run_python_model(const Suite& suite, const RunSpec& spec, const std::string& path, int threads);

// Before a sweep with Python models runs any: the suite's interpreter starts and imports an
// srbench module built from this binary's commit (else a ConfigError saying which module it
// found and how to fix it).
void check_python_setup(const Suite& suite);

// `sweep --dry-run`: imports each distinct Python model of `runs` once, builds it from its
// factory and checks one forward pass's shape; the first failure is a ConfigError at the
// model entry's `module:` line ("cannot import 'mypkg.models': ...").
void check_python_models(const Suite& suite, const std::vector<const RunSpec*>& runs);

// The folder holding the srbench Python package that belongs to the running binary (a build's
// build/python, a pip install's site-packages), or "" when there is none.
std::string package_folder();

}  // namespace srbench::harness::sweep
