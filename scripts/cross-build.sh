#!/usr/bin/env bash
# The same numbers from every build and thread count (docs/harness.md, "The same numbers on every
# machine"): builds srbench for x86-64-v3 (AVX2 + FMA, generic tuning) in build-v3/ beside the
# Release build in build/ (-march=native: AVX-512 where the CPU has it), runs
# tests/cross_isa/suite.yaml (one run of every numerical path: each position scheme, spline
# activations and attentions, LIMe, the recurrent archs, training at T = 256, evaluation at 4x)
# with the native build at 1 and at 2 threads per run, with Eigen's cache sizes set to another
# machine's (SRBENCH_EIGEN_CACHE_SIZES), and with the v3 build, and compares the suite files bit
# for bit (scripts/compare_h5.py: every attribute, dataset and /summary field;
# the timings and each run's `build` aside). Any difference fails. Run by scripts/test.sh (and so
# by CI); the first argument, if given, is the native build folder (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
native=${1:-build}
if ! grep -qw avx2 /proc/cpuinfo || ! grep -qw fma /proc/cpuinfo; then
  echo "cross-build.sh: FAIL: this CPU has no AVX2 + FMA, which srbench's identity guarantee assumes"
  exit 1
fi
cmake -S . -B build-v3 -DCMAKE_BUILD_TYPE=Release -DSRBENCH_NATIVE=OFF -DCMAKE_CXX_FLAGS="-march=x86-64-v3" >/dev/null
cmake --build build-v3 -j"$(nproc)" --target srbench
built=$SECONDS
echo "cross-build.sh: build-v3 $((built - start)) s"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
suite=tests/cross_isa/suite.yaml
sweep() {  # sweep NAME BINARY OPTIONS...
  local name=$1 bin=$2
  shift 2
  "$bin" sweep "$suite" --out "$out/$name/cross-isa.h5" "$@" > "$out/$name.log" 2>&1 ||
    { cat "$out/$name.log"; echo "cross-build.sh: FAIL: the sweep with $bin $* failed"; exit 1; }
  "$bin" --version | sed -n 's/^build: /  build: /p'
}
echo "cross-build.sh: native, 1 thread a run"
sweep native "$native/harness/srbench" --jobs 2 --threads 1
echo "cross-build.sh: native, 2 threads a run"
sweep native-2 "$native/harness/srbench" --jobs 1 --threads 2
echo "cross-build.sh: x86-64-v3"
sweep v3 build-v3/harness/srbench --jobs 2 --threads 1
# Eigen's cache sizes set to another machine's (tiny ones, so that any Eigen product blocks
# differently): float products must not go through Eigen, so nothing may change.
caches=4096,65536,262144
bad=$(SRBENCH_EIGEN_CACHE_SIZES=4096,65536 "$native/harness/srbench" --version 2>&1) && {
  echo "cross-build.sh: FAIL: SRBENCH_EIGEN_CACHE_SIZES=4096,65536 was accepted"; exit 1; }
case $bad in *"expected three cache sizes in bytes"*) ;; *) echo "cross-build.sh: FAIL: $bad"; exit 1 ;; esac
SRBENCH_EIGEN_CACHE_SIZES=$caches "$native/harness/srbench" --version | grep -q "eigen cache sizes: $caches bytes" ||
  { echo "cross-build.sh: FAIL: srbench --version does not report SRBENCH_EIGEN_CACHE_SIZES=$caches"; exit 1; }
echo "cross-build.sh: native, Eigen's cache sizes $caches (detected: $("$native/harness/srbench" --version | sed -n 's/^eigen cache sizes: //p'))"
SRBENCH_EIGEN_CACHE_SIZES=$caches sweep caches "$native/harness/srbench" --jobs 2 --threads 1
ran=$SECONDS
rc=0
for other in native-2 v3 caches; do
  if /usr/bin/python3 scripts/compare_h5.py "$out/native/cross-isa.h5" "$out/$other/cross-isa.h5" > "$out/cmp-$other.txt"; then
    echo "cross-build.sh: native = $other: $(tail -1 "$out/cmp-$other.txt")"
  else
    head -40 "$out/cmp-$other.txt"
    echo "cross-build.sh: FAIL: native and $other differ ($(grep -c . "$out/cmp-$other.txt") lines above, the first 40)"
    rc=1
  fi
done
echo "cross-build.sh: sweeps $((ran - built)) s, in all $((SECONDS - start)) s"
exit $rc
