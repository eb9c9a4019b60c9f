#!/usr/bin/env bash
# Keeps a suite's finished run files in git, so that a suite run in shards over several sessions
# (or machines) can be joined: results/ is not tracked, and a new checkout starts without it.
#
#   bash scripts/runs_archive.sh save SUITE [RESULTS_DIR] [ARCHIVE_DIR]
#   bash scripts/runs_archive.sh restore SUITE [RESULTS_DIR] [ARCHIVE_DIR]
#
# save: adds the run files RESULTS_DIR/SUITE/runs/*.h5 (default results/) to ARCHIVE_DIR/SUITE.tar.xz
# (default docs/data/runs/): the runs already in the archive are kept as they are (a run's file is
# its first result; a run id is its configuration, so a second file of the same id holds the same
# numbers), the others added. The archive is written anew (entries sorted, owner and time fixed),
# then renamed over the old one. A run file is ~100 KiB, ~2 KiB compressed.
# restore: unpacks the archive into RESULTS_DIR/SUITE/runs/, leaving run files already there
# untouched; `srbench sweep` then counts those runs as finished, and `srbench merge
# RESULTS_DIR/SUITE` joins them with the runs of later shards.
# Exit 2 on a bad command line or a missing folder or archive.
set -euo pipefail
usage() { echo "usage: runs_archive.sh save|restore SUITE [RESULTS_DIR] [ARCHIVE_DIR]" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 4 ] || usage
cmd=$1 suite=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
results=$(realpath -m "${3:-$root/results}")
archives=$(realpath -m "${4:-$root/docs/data/runs}")
case "$suite" in */* | "" | .*) echo "runs_archive.sh: '$suite' is not a suite name" >&2; exit 2 ;; esac
archive="$archives/$suite.tar.xz"
runs="$results/$suite/runs"
case "$cmd" in
  save)
    compgen -G "$runs/*.h5" > /dev/null || { echo "runs_archive.sh: no run files in $runs" >&2; exit 2; }
    mkdir -p "$archives"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    [ -f "$archive" ] && tar -xJf "$archive" -C "$tmp"
    before=$(find "$tmp" -name '*.h5' | wc -l)
    cp -n "$runs"/*.h5 "$tmp"/
    after=$(find "$tmp" -name '*.h5' | wc -l)
    (cd "$tmp" && find . -maxdepth 1 -name '*.h5' -printf '%f\n' | LC_ALL=C sort |
       tar --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=0644 -cf - -T - | xz -9 -T1 > "$archive.tmp")
    mv "$archive.tmp" "$archive"
    echo "runs_archive.sh: $archive holds $after runs ($((after - before)) added)"
    ;;
  restore)
    [ -f "$archive" ] || { echo "runs_archive.sh: no archive $archive" >&2; exit 2; }
    mkdir -p "$runs"
    before=$(find "$runs" -maxdepth 1 -name '*.h5' | wc -l)
    tar -xJf "$archive" -C "$runs" --skip-old-files
    after=$(find "$runs" -maxdepth 1 -name '*.h5' | wc -l)
    echo "runs_archive.sh: $runs holds $after runs ($((after - before)) restored from $archive)"
    ;;
  *) usage ;;
esac
