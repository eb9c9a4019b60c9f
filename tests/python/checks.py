"""What the Python module's tests share: failures gathered, not stopped at, and reported at the end;
a script under test run by Debian's interpreter, or loaded as a module."""
import importlib.util
import os
import subprocess
import sys

FAILURES = []


def check(cond, what):
    """Records `what` as a failure unless `cond`; returns cond."""
    if not cond:
        FAILURES.append(what)
    return cond


def raises(fn, *needles, kind=ValueError):
    """fn() must raise `kind` (ValueError unless given) whose message contains every needle;
    returns the message."""
    try:
        fn()
    except kind as e:
        for s in needles:
            check(s in str(e), f"{kind.__name__} '{e}' does not name '{s}'")
        return str(e)
    except Exception as e:  # another kind of error: a failure, not a crash of the test
        check(False, f"{type(e).__name__} '{e}' where {kind.__name__} naming {needles} was expected")
        return str(e)
    check(False, f"no {kind.__name__} (expected one naming {needles})")
    return ""


def finish(ok_message):
    """The exit code: 0 and `ok_message`, or 1 and the failures."""
    if FAILURES:
        print(f"FAIL: {len(FAILURES)} failure(s)")
        for f in FAILURES[:40]:
            print("  " + f)
        return 1
    print("ok: " + ok_message)
    return 0


def saved_figures(run):
    """The matplotlib figures saved while run() runs (its stdout and stderr swallowed), to read
    what a script drew: titles, lines, bands, legends."""
    import contextlib
    import io

    import matplotlib.figure

    saved, savefig = [], matplotlib.figure.Figure.savefig

    def record(fig, *args, **kw):
        saved.append(fig)
        return savefig(fig, *args, **kw)

    matplotlib.figure.Figure.savefig = record
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            run()
    finally:
        matplotlib.figure.Figure.savefig = savefig
    return saved


def load_script(script):
    """scripts/<name>.py loaded as a module (its folder on sys.path, as when it runs, for the
    scripts it imports), to call its functions."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(script))[0], script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_script(script, *args):
    """scripts/<script>.py run with args by /usr/bin/python3: its CompletedProcess (text output)."""
    return subprocess.run(["/usr/bin/python3", script, *args], capture_output=True, text=True)
