"""Builds srbench for `pip install .` with the project's CMake: the extension _srbench and the
srbench binary, copied into the package (srbench/_srbench*.so, srbench/bin/srbench) beside the
pure-Python files. pyproject.toml holds the metadata.

The CMake build folder is $SRBENCH_BUILD_DIR, or build/pip/<python tag> in the source tree (kept
between installs, so a second install rebuilds only what changed); the extension is built for the
interpreter running pip (its headers must be installed: python3-dev for Debian's). Needs what
scripts/install-deps.sh installs; nothing is downloaded.
"""
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def cmake_build_dir():
    given = os.environ.get("SRBENCH_BUILD_DIR")
    if given:
        return os.path.abspath(given)
    tag = sysconfig.get_config_var("SOABI") or f"py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(ROOT, "build", "pip", tag)


def cached_python(build):
    """Python3_EXECUTABLE of an already configured build folder, or None."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("Python3_EXECUTABLE:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


class BuildWithCMake(build_py):
    """build_py, then the CMake targets srbench and srbench_python, copied into the package."""

    def run(self):
        super().run()
        build = cmake_build_dir()
        python = os.path.realpath(sys.executable)
        cached = cached_python(build)
        if cached is None or os.path.realpath(cached) != python:  # (re)configure for this interpreter
            subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                            f"-DPython3_EXECUTABLE={python}"], check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", build, "-j", jobs, "--target", "srbench", "srbench_python"], check=True)
        package = os.path.join(self.build_lib, "srbench")
        built = os.path.join(build, "python", "srbench")
        for name in os.listdir(built):
            if name.startswith("_srbench") and name.endswith(".so"):
                shutil.copy2(os.path.join(built, name), os.path.join(package, name))
        os.makedirs(os.path.join(package, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(build, "harness", "srbench"), os.path.join(package, "bin", "srbench"))


class BinaryDistribution(Distribution):
    """A wheel for this platform and interpreter (it holds a compiled extension and binary)."""

    def has_ext_modules(self):
        return True


# `pip install -e .` (scripts/install-python.sh): the package is the CMake build's own
# build/python/srbench (the extension and the copied .py files), mapped in place, so that a rebuild
# is what `import srbench` imports with no new install; a wheel (`pip install .`) packages
# harness/python/srbench with the built extension and binary copied in.
EDITABLE = "editable_wheel" in sys.argv
PACKAGE_DIR = {"": os.path.relpath(os.path.join(cmake_build_dir(), "python"), ROOT)} if EDITABLE else {"": "harness/python"}

setup(cmdclass={"build_py": BuildWithCMake}, distclass=BinaryDistribution, package_dir=PACKAGE_DIR, packages=["srbench"],
      options={"build": {"build_base": os.path.join("build", "pip", "setuptools")},
               "egg_info": {"egg_base": os.path.join("build", "pip")}})
