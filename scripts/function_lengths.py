#!/usr/bin/python3
"""The length of every function defined in the C++ sources, and the ones over a limit.

  function_lengths.py [--limit 120] [--list] [ROOT]   (ROOT: the repository, default the parent
                                                       of this script's folder)

Scans the .cpp and .hpp files of tasks/, model/, harness/ and common/ under ROOT. A function's
length is its lines from the first line of its signature to its closing brace, both included
(blank and comment lines count). Exits 1 naming each function over the limit as
`file:line: name is N lines (limit L)`, else 0; --list prints every function's length.

The scan is a brace matcher over the text with comments, string and character literals and
preprocessor lines blanked out. At namespace and class scope, a `{` opens:
  - a scope (namespace, class, struct, union, enum, extern "C"), scanned inside;
  - a function body when the text before it since the last `;`, `{` or `}` ends in `)` and
    optional qualifiers (const, noexcept, override, final, mutable, &, &&, a trailing return
    type) — a lambda assigned at namespace scope counts as a function too;
  - otherwise an initializer (`kTable = {...}`, `x{0}`, a constructor's `a_{1}` member
    initializer), skipped.
Inside a function every brace belongs to the function.
"""
import argparse
import os
import re
import sys

FOLDERS = ("tasks", "model", "harness", "common")
SCOPE = re.compile(r"^(template\s*<.*>\s*)?(namespace\b|class\b|struct\b|union\b|enum\b|extern\s*\"C\")", re.S)
QUALIFIERS = r"(\s*(const|noexcept(\s*\([^()]*\))?|override|final|mutable|volatile|&&|&|->\s*[\w:<>,\s\*&]+?))*\s*$"
BODY = re.compile(r"\)" + QUALIFIERS, re.S)


def blank_out(text):
    """The text with comments, string/char literals and preprocessor lines replaced by spaces
    (newlines kept, so offsets and line numbers stay)."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":  # a preprocessor line, with its continuations
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            blank(i, j)
            i = j
            continue
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            blank(i, j)
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a digit separator
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching_brace(code, i):
    """The offset of the `}` closing the `{` at i."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced braces")


def function_name(header):
    """The name before the header's first top-level `(`: `Foo::bar`, `operator==`."""
    m = re.search(r"((?:[\w~]+\s*::\s*)*(?:operator\s*[^\s(]+|operator\s*\(\s*\)|[\w~]+))\s*(?:<[^()]*>)?\s*\(", header)
    return re.sub(r"\s+", "", m.group(1)) if m else header.strip().split("\n")[0][:40]


def functions(code):
    """(offset of the signature's first character, offset of the closing brace, name) of every
    function defined in `code` (already blanked out)."""
    found = []

    def scan(begin, end):
        header_start = begin
        i = begin
        while i < end:
            c = code[i]
            if c in ";}":
                header_start = i + 1
            elif c == "{":
                header = code[header_start:i]
                stripped = header.strip()
                close = matching_brace(code, i)
                if SCOPE.match(stripped):
                    scan(i + 1, close)
                    header_start = close + 1
                elif BODY.search(header):
                    start = header_start + len(header) - len(header.lstrip())
                    found.append((start, close, function_name(stripped)))
                    header_start = close + 1
                # else: an initializer; the header goes on (a constructor's `a_{1}, b_(2) {`)
                i = close
            i += 1

    scan(0, len(code))
    return found


def line_of(code, offset):
    return code.count("\n", 0, offset) + 1


def lengths_in(path):
    with open(path, encoding="utf-8") as f:
        code = blank_out(f.read())
    out = []
    for start, close, name in functions(code):
        first, last = line_of(code, start), line_of(code, close)
        out.append((first, last - first + 1, name))
    return out


def source_files(root):
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".cpp", ".hpp")):
                    yield os.path.join(dirpath, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--limit", type=int, default=120)
    parser.add_argument("--list", action="store_true", help="print every function's length")
    args = parser.parse_args()
    over = []
    count = 0
    for path in source_files(args.root):
        rel = os.path.relpath(path, args.root)
        for line, length, name in lengths_in(path):
            count += 1
            if args.list:
                print(f"{rel}:{line}: {name} {length}")
            if length > args.limit:
                over.append(f"{rel}:{line}: {name} is {length} lines (limit {args.limit})")
    for o in over:
        print(o)
    if count == 0:
        print(f"no function found under {args.root} ({', '.join(FOLDERS)})")
        return 1
    print(f"{count} functions, {len(over)} over {args.limit} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
