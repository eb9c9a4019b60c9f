#!/usr/bin/python3
"""`pip install .` (pyproject.toml, setup.py): into a fresh virtual environment, offline, with
Debian's setuptools and pybind11 (--no-build-isolation --no-index), reusing this build's CMake
folder (SRBENCH_BUILD_DIR). Then, with nothing but the environment: `import srbench` comes from
the environment's site-packages, its version is the binary's, the `srbench` console command runs
the packaged binary, a task samples the same examples as the build's binary, and
srbench.analysis finds the packaged binary, and the packaged binary sweeps a suite's Python model
under the environment's interpreter. `pip install -e .` (scripts/install-python.sh's route) into
a second environment: `import srbench` is the build folder's python/srbench, and the console
command runs the build's binary.

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
        # a suite's Python model, swept by the packaged binary under the environment's interpreter
        with open(os.path.join(tmp, "tinymodel.py"), "w") as f:
            f.write("import torch\n"
                    "def make(vocab_size, max_len):\n"
                    "    return torch.nn.Sequential(torch.nn.Embedding(vocab_size, 8), torch.nn.Linear(8, vocab_size))\n")
        with open(os.path.join(tmp, "s.yaml"), "w") as f:
            f.write("name: s\ntasks:\n  - task: parity\n    train: {steps: 5, batch: 4, length: [1, 4]}\n"
                    "    eval: {examples: 8, val_examples: 8}\n"
                    "models:\n  - name: tiny\n    model: {arch: python, module: \"tinymodel:make\"}\n")
        p = subprocess.run([cmd, "sweep", "s.yaml", "--out", "out/s.h5"], capture_output=True, text=True,
                           env=dict(env, SRBENCH_PYTHON=py), cwd=tmp)
        check(p.returncode == 0 and "tiny  seed=0" in p.stdout and p.stdout.count(" ok\n") == 1,
              f"a Python model swept by the packaged binary with SRBENCH_PYTHON={py}: exit {p.returncode}\n{p.stdout}{p.stderr}")

        # pip install -e . (scripts/install-python.sh's route): the build folder itself, no copy
        edit = os.path.join(tmp, "edit")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", edit], check=True, env=env)
        epy, ecmd = os.path.join(edit, "bin", "python"), os.path.join(edit, "bin", "srbench")
        p = subprocess.run([epy, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", "--quiet",
                            "-e", ROOT], capture_output=True, text=True,
                           env=dict(env, SRBENCH_BUILD_DIR=os.path.abspath(a.build)), cwd=tmp)
        if not check(p.returncode == 0, f"pip install -e failed: {p.stdout[-2000:]}{p.stderr[-2000:]}"):
            return finish("")
        p = subprocess.run([epy, "-c", "import srbench; print(srbench.__file__)"], capture_output=True, text=True,
                           env=env, cwd=tmp)
        want = os.path.join(os.path.abspath(a.build), "python", "srbench", "__init__.py")
        check(p.stdout.strip() == want, f"pip install -e: srbench imported from {p.stdout.strip()!r}, not {want}")
        mine = subprocess.run([ecmd, "--version"], capture_output=True, text=True, env=env, cwd=tmp)
        check(mine.returncode == 0 and mine.stdout.splitlines()[:2] == theirs.stdout.splitlines()[:2],
              f"pip install -e: the console command's --version {mine.stdout!r} != the build's {theirs.stdout!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish("pip install . and pip install -e . into virtual environments: the module, the console command, "
                  "the binary and a suite's Python model agree")


if __name__ == "__main__":
    sys.exit(main())
