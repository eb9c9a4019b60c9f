#!/usr/bin/python3
"""Writes examples/tutorial.ipynb from examples/train_gru.py, the one source of both: each
`# %%` line starts a code cell, each `# %% [markdown]` line a markdown cell (its lines without
the leading `# `). `--check` only tells whether the notebook is up to date (exit 1 if not).

  /usr/bin/python3 examples/make_notebook.py [--check]
"""
import argparse
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SCRIPT, NOTEBOOK = HERE / "train_gru.py", HERE / "tutorial.ipynb"


def cells(text):
    out, kind, lines = [], None, []

    def flush():
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
        if kind and body:
            out.append(nbformat.v4.new_markdown_cell(body) if kind == "markdown" else nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("#!"):
            continue
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        else:
            lines.append(line)
    flush()
    return out


def notebook():
    nb = nbformat.v4.new_notebook(cells=cells(SCRIPT.read_text()))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def sources(nb):
    return [(c.cell_type, c.source) for c in nb.cells]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the notebook is not made from the script")
    args = ap.parse_args()
    nb = notebook()
    if args.check:
        ok = NOTEBOOK.exists() and sources(nbformat.read(NOTEBOOK, as_version=4)) == sources(nb)
        print(f"{NOTEBOOK.name}: " + ("up to date" if ok else f"not made from {SCRIPT.name}: run {Path(__file__).name}"))
        return 0 if ok else 1
    nbformat.write(nb, NOTEBOOK)
    print(f"wrote {NOTEBOOK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
