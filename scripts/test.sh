#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (CTest) on the optimised build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# Tests run side by side: OpenMP threads that spin while waiting would steal the other cores.
export OMP_WAIT_POLICY=PASSIVE
ctest --test-dir build --output-on-failure -j"$(nproc)"
