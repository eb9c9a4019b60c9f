#!/usr/bin/env bash
# Installs every dependency of srbench from Debian 12 packages. Idempotent: packages already
# present are left alone, so running it twice is harmless. Run as root (or with sudo on PATH).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake git pkg-config
  # C++ libraries
  libeigen3-dev libyaml-cpp-dev libhdf5-dev zlib1g-dev catch2 libboost-program-options-dev
  # OpenMP runtime comes with g++ (libgomp); the PyTorch reference wants OpenBLAS' OpenMP build
  libopenblas0-openmp
  # Python reference, benchmark and plotting tools (for /usr/bin/python3); PyYAML for the PyTorch
  # reference's configs, Pillow for the figure test's decoding of PNGs
  python3 python3-torch python3-numpy python3-h5py python3-pandas python3-matplotlib
  python3-yaml python3-pil
  # the srbench Python module (pybind11, Python's headers) and the tests' run of its notebook
  python3-dev pybind11-dev python3-pybind11 python3-nbconvert python3-ipykernel
  # `pip install .` (pyproject.toml, setup.py) and its test's virtual environment, offline
  python3-pip python3-setuptools python3-wheel python3-venv
  # a real single-node Slurm for `srbench slurm` and its tests (scripts/slurm-local.sh)
  slurm-wlm munge
  # xz for scripts/runs_archive.sh (a suite's run files kept in docs/data/runs/)
  xz-utils
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
