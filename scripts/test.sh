#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (CTest) on the optimised build. Arguments
# go to ctest (e.g. `-R slurm` for a subset).
#
# Then (with no arguments) the C++ tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/sanitize.sh: a separate build in build-sanitize/ and a time-bounded subset; zero reports
# to pass; it prints its build and test seconds; docs/harness.md, "Testing under sanitizers").
# SRBENCH_SANITIZE=0 leaves that stage out (a quicker local run; CI always runs it). Then the
# cross-build stage (scripts/cross-build.sh: a build for x86-64-v3 beside the native one, a suite
# of every numerical path run with both and at 1 and 2 threads, every value compared bit for
# bit); SRBENCH_CROSS=0 leaves it out likewise.
#
# No test found is an error. A skipped test (one that exits 77: Slurm cannot start here) fails the
# run in CI (CI=true, as .ci/run runs); elsewhere it stays a skip, and its reason is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash scripts/install-deps.sh
bash scripts/build.sh
# Tests run side by side: OpenMP threads that spin while waiting would steal the other cores.
export OMP_WAIT_POLICY=PASSIVE
log=build/Testing/ctest-summary.log
mkdir -p "$(dirname "$log")"
built=$SECONDS
set +e
ctest --test-dir build --output-on-failure --no-tests=error -j"$(nproc)" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
echo "test.sh: install and build $((built - start)) s, CTest $((SECONDS - built)) s"
# CTest lists each skipped test as "<n> - <name> (Skipped)" and still exits 0.
skipped=$(grep -E '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log" || true)
if [ -n "$skipped" ]; then
  echo "test.sh: skipped tests:"
  echo "$skipped"
  echo "test.sh: why (the SKIPPED lines they printed):"
  grep -h 'SKIPPED:' build/Testing/Temporary/LastTest.log || echo "  (none printed)"
  if [ "${CI:-}" = true ]; then
    echo "test.sh: FAIL: CI=true and $(echo "$skipped" | wc -l) test(s) skipped; in CI every test must run"
    exit 1
  fi
fi
if [ $# -eq 0 ]; then
  if [ "${SRBENCH_SANITIZE:-1}" != 0 ] || [ "${CI:-}" = true ]; then
    bash scripts/sanitize.sh || rc=1
  else
    echo "test.sh: SRBENCH_SANITIZE=0: the sanitizer stage (scripts/sanitize.sh) left out"
  fi
  if [ "${SRBENCH_CROSS:-1}" != 0 ] || [ "${CI:-}" = true ]; then
    bash scripts/cross-build.sh || rc=1
  else
    echo "test.sh: SRBENCH_CROSS=0: the cross-build stage (scripts/cross-build.sh) left out"
  fi
fi
echo "test.sh: $((SECONDS - start)) s in all"
exit "$rc"
