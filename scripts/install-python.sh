#!/usr/bin/env bash
# Puts the srbench Python module (built into build/python/ by scripts/build.sh) on the path of
# Debian's /usr/bin/python3, so that `import srbench` works from any folder: one file srbench.pth
# in its site-packages folder (/usr/local/lib/python3.X/dist-packages) naming this clone's
# build/python. Idempotent; a rebuild needs no re-install. Run as root (or with sudo on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(pwd)/build/python"
[ -f "$dir/srbench/__init__.py" ] || { echo "install-python: $dir/srbench is not built: run scripts/build.sh first" >&2; exit 1; }
site="$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-python: need root (or sudo) to write $site/srbench.pth" >&2; exit 1; }
  SUDO=sudo
fi
$SUDO mkdir -p "$site"
echo "$dir" | $SUDO tee "$site/srbench.pth" > /dev/null
version="$(cd / && /usr/bin/python3 -c 'import srbench; print(srbench.__version__)')"
echo "install-python: srbench $version for /usr/bin/python3 ($site/srbench.pth -> $dir)"
