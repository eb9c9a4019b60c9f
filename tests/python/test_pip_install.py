#!/usr/bin/python3
"""`pip install .` (pyproject.toml, setup.py): into a fresh virtual environment, offline, with
Debian's setuptools and pybind11 (--no-build-isolation --no-index), reusing this build's CMake
folder (SRBENCH_BUILD_DIR). Then, with nothing but the environment: `import srbench` comes from
the environment's site-packages, its version is the binary's, the `srbench` console command runs
the packaged binary, a task samples the same examples as the build's binary, and
srbench.analysis finds the packaged binary.

  /usr/bin/python3 test_pip_install.py --build build

Exit 0 when everything holds; 1 with a list of failures otherwise (it never skips).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the configured CMake build folder")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="srbench-pip-")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        venv = os.path.join(tmp, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True, env=env)
        py, cmd = os.path.join(venv, "bin", "python"), os.path.join(venv, "bin", "srbench")
        p = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet", ROOT],
                           capture_output=True, text=True, env=dict(env, SRBENCH_BUILD_DIR=os.path.abspath(a.build)),
                           cwd=tmp)
        if not check(p.returncode == 0, f"pip install failed: {p.stdout[-2000:]}{p.stderr[-2000:]}"):
            return finish("")
        code = ("import json, srbench, srbench.analysis as an; "
                "t = srbench.Task('parity'); b = t.sample(n=6, count=3, seed=4); "
                "print(json.dumps({'file': srbench.__file__, 'version': srbench.__version__, "
                "'tokens': b.tokens.tolist(), 'binary': an.srbench_path()}))")
        p = subprocess.run([py, "-c", code], capture_output=True, text=True, env=env, cwd=tmp)
        if not check(p.returncode == 0, f"import srbench in the environment: {p.stderr}"):
            return finish("")
        got = json.loads(p.stdout)
        site = os.path.join(venv, "lib")
        check(got["file"].startswith(site), f"srbench imported from {got['file']}, not the environment's {site}")
        check(got["binary"].startswith(site) and got["binary"].endswith(os.path.join("srbench", "bin", "srbench")),
              f"srbench.analysis finds {got['binary']}, not the packaged binary")
        built = os.path.join(a.build, "harness", "srbench")
        mine = subprocess.run([cmd, "--version"], capture_output=True, text=True, env=env, cwd=tmp)
        theirs = subprocess.run([built, "--version"], capture_output=True, text=True)
        check(mine.returncode == 0 and mine.stdout.splitlines()[:2] == theirs.stdout.splitlines()[:2],
              f"the console command's --version {mine.stdout!r} != the build's {theirs.stdout!r}")
        check(got["version"] == theirs.stdout.split()[1], f"srbench.__version__ {got['version']} != the binary's")
        # the same examples from the packaged binary as from the module
        s = subprocess.run([cmd, "sample", "parity", "-n", "6", "--count", "3", "--seed", "4", "--format", "jsonl"],
                           capture_output=True, text=True, env=env, cwd=tmp)
        rows = [json.loads(line) for line in s.stdout.splitlines()]
        check(s.returncode == 0 and len(rows) == 3, f"srbench sample from the console command: {s.stderr}")
        vocab = subprocess.run([py, "-c", "import srbench; print(' '.join(srbench.Task('parity').vocab))"],
                               capture_output=True, text=True, env=env, cwd=tmp).stdout.split()
        check([[vocab.index(tok) for tok in r["tokens"]] for r in rows] == [t[:len(r["tokens"])] for t, r in
                                                                            zip(got["tokens"], rows)],
              "the console command's examples differ from the module's")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish("pip install . into a virtual environment: the module, the console command and the binary agree")


if __name__ == "__main__":
    sys.exit(main())
