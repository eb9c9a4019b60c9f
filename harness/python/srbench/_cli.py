"""The `srbench` console command of a pip-installed srbench: runs the srbench binary installed
inside the package (srbench/bin/srbench) with the same arguments."""
import os
import sys


def binary():
    """The packaged binary, or None in a source build (there: build/harness/srbench)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "srbench")
    return path if os.access(path, os.X_OK) else None


def main():
    path = binary()
    if path is None:
        sys.stderr.write("srbench: no binary inside this srbench package (a source build's is build/harness/srbench)\n")
        return 2
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
