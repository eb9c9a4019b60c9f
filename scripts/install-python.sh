#!/usr/bin/env bash
# Installs the srbench Python module for Debian's /usr/bin/python3 the way pip installs it
# anywhere (docs/python.md): `pip install -e .` (editable, offline, no build isolation) into
# /usr/local/lib/python3.X/dist-packages, which maps the package to this clone's CMake build,
# build/python/srbench — so `import srbench` works from any folder, a rebuild needs no
# re-install, and pip knows the package (pip show / pip uninstall srbench) and its `srbench`
# command (/usr/local/bin/srbench, which runs build/harness/srbench). Reuses build/ (built by
# scripts/build.sh first); idempotent. Run as root (or with sudo on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
[ -f "$root/build/python/srbench/__init__.py" ] || { echo "install-python: $root/build/python/srbench is not built: run scripts/build.sh first" >&2; exit 1; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-python: need root (or sudo) to install into /usr/bin/python3's site-packages" >&2; exit 1; }
  SUDO=sudo
fi
site="$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')"
$SUDO rm -f "$site/srbench.pth"  # the earlier install's one-line file: pip's editable install replaces it
# Debian marks its Python as externally managed; this install goes to /usr/local, pip's place for
# root's packages, and pulls nothing (--no-deps: Debian's numpy, torch, ... are already there).
$SUDO env SRBENCH_BUILD_DIR="$root/build" /usr/bin/python3 -m pip install --quiet --no-build-isolation --no-index \
  --no-deps --break-system-packages --root-user-action=ignore --editable "$root"
version="$(cd / && /usr/bin/python3 -c 'import srbench; print(srbench.__version__)')"
where="$(cd / && /usr/bin/python3 -c 'import os, srbench; print(os.path.dirname(os.path.dirname(srbench.__file__)))')"
[ "$where" = "$root/build/python" ] || { echo "install-python: /usr/bin/python3 imports srbench from $where, not $root/build/python" >&2; exit 1; }
echo "install-python: srbench $version for /usr/bin/python3 (pip install -e: $where)"
