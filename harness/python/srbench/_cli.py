"""The `srbench` console command of a pip-installed srbench: runs the srbench binary installed
inside the package (srbench/bin/srbench), or the build's (an editable install), with the same
arguments."""
import os
import sys


def binary():
    """The packaged binary (a wheel's srbench/bin/srbench), or the build's own for a package that
    is the CMake build's build/python/srbench (an editable install: build/harness/srbench); None
    when neither is there."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "bin", "srbench"), os.path.join(here, "..", "..", "harness", "srbench")):
        if os.access(path, os.X_OK):
            return os.path.normpath(path)
    return None


def main():
    path = binary()
    if path is None:
        sys.stderr.write("srbench: no binary inside this srbench package, nor beside it in a build (build/harness/srbench)\n")
        return 2
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
