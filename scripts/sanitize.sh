#!/usr/bin/env bash
# The C++ tests under AddressSanitizer and UndefinedBehaviorSanitizer: a separate build in
# build-sanitize/ (-O1 -g1: line tables only; -fsanitize=address,undefined on the common, tasks, model and
# harness libraries and srbench, the tests' own sources uninstrumented: tests/CMakeLists.txt;
# every report fatal), then a subset of the tests chosen to cover every source file — the tasks,
# the model's layers and training steps (all but the two [long] ones), suite parsing, results
# files (damaged ones too), the fuzzer (a shorter budget), the report, metrics, diagnostics and
# spline searches, the Slurm scripts, and one sweep with its child processes — within
# SRBENCH_SANITIZE_SECONDS (default 1800: the tests took 357 s here, and a CI machine may be twice
# as slow). Run by scripts/test.sh (and so by CI).
# Zero reports is the pass: a report aborts its test, which fails. Prints the time of each part.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# -march=native as the Release build: the same kernels (sgemm's AVX2 or AVX-512 tiles) are tested,
# and the tests that hold results bit-identical across batchings rely on them (a generic x86-64
# build takes other product paths).
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -march=native" \
  -DSRBENCH_SANITIZE=ON >/dev/null
cmake --build build-sanitize -j"$(nproc)" --target srbench test_tasks test_model test_harness test_slurm
built=$SECONDS
echo "sanitize.sh: build $((built - start)) s"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export SRBENCH_FUZZ_SECONDS=${SRBENCH_FUZZ_SECONDS:-20}
export OMP_WAIT_POLICY=PASSIVE
budget=${SRBENCH_SANITIZE_SECONDS:-1800}
run() {  # run BINARY FILTER...
  local left=$((budget - (SECONDS - built)))
  [ "$left" -gt 0 ] || { echo "sanitize.sh: FAIL: out of time ($budget s) before $1 $2"; exit 1; }
  echo "sanitize.sh: $1 $2"
  local t0=$SECONDS
  # --warn NoTests: a filter that matches no test fails instead of passing with nothing run
  timeout "$left" "build-sanitize/tests/$1" --warn NoTests "$2" || { echo "sanitize.sh: FAIL: $1 $2 (a sanitizer report or a failed test above)"; exit 1; }
  echo "sanitize.sh: $1 $2: $((SECONDS - t0)) s"
}
run test_tasks "*"
# [long]: the two model tests that only repeat kernels the others cover, for hundreds of steps or 24 layers
run test_model "~[long]"
# [no-asan]: tests that measure resident memory or need std::bad_alloc (tests/harness/test_resources.cpp)
run test_harness "[suite],[results],[damaged],[fuzz],[resources]~[no-asan]"
run test_harness "[report],[stats],[metrics],[diagnostics],[search]"
run test_slurm "~[signals]"
run test_harness "sweep: killed with SIGKILL*"
echo "sanitize.sh: zero sanitizer reports; build $((built - start)) s, tests $((SECONDS - built)) s"
