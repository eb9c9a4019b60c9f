#!/usr/bin/env bash
# Runs a command and passes only if it exits 0 and a line of what it prints (stdout and stderr)
# matches an extended regular expression. (CTest's PASS_REGULAR_EXPRESSION alone would ignore the
# exit code.)
#
#   expect_output.sh REGEX COMMAND [ARGS...]
#
# Exit codes: 0 pass, 1 fail (the command's output is printed either way), 2 bad usage.
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 REGEX COMMAND [ARGS...]" >&2; exit 2; }
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { echo "expect_output: FAIL: $1 exited with $rc"; exit 1; }
grep -Eq -- "$regex" <<<"$out" || { echo "expect_output: FAIL: no line of the output matches /$regex/"; exit 1; }
