#!/usr/bin/env bash
# Optional setup part: public IPC planning problems, for the outside check of the planner
# (benchmarks/bench_ipc.py, test/unit/test_ipc_problems.py).
#
#   hash  print a hash of what this step depends on (the pin below, and whether its
#         files are in place)
#   run   download the `pddl` package's source distribution from PyPI (the same pinned
#         version as requirements/core.txt; its tests ship IPC domains and problems)
#         and unpack its classical IPC folders, with the package's LICENSE, into
#         $VENV/share/cowp_ipc/pddl-$VERSION/
#
# Nothing is installed or imported: the archive is read as data. The domains are the
# International Planning Competition's (public), as the `pddl` package's tests keep
# them (MIT licence for the package; see LICENSE beside them). Skip with
# COWP_SETUP_SKIP=ipc_benchmarks; the tests that need them are then skipped.
set -euo pipefail
: "${VENV:?VENV must be set}" "${ROOT:?ROOT must be set}"
PY="$VENV/bin/python"
VERSION=$(sed -n 's/^pddl==\([0-9.]*\).*/\1/p' "$ROOT/requirements/core.txt")
DEST="$VENV/share/cowp_ipc/pddl-$VERSION"
FOLDERS="barman-sequential-optimal cave-diving-sequential-optimal childsnack
  maintenance-sequential-satisficing-ipc2014 sokoban-sequential-optimal storage
  block-grouping depots-numeric-automatic drone social-planning"

case "${1:-}" in
  hash)
    { echo "$VERSION $FOLDERS"; ls "$DEST" 2>/dev/null || echo "not yet"; } | sha256sum | cut -d' ' -f1
    ;;
  run)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$PY" -m pip download --disable-pip-version-check --no-input --no-deps \
      --no-binary :all: "pddl==$VERSION" -d "$tmp"
    tar -xzf "$tmp"/pddl-"$VERSION".tar.gz -C "$tmp"
    src="$tmp/pddl-$VERSION/tests/fixtures/pddl_files"
    rm -rf "$DEST" && mkdir -p "$DEST"
    for folder in $FOLDERS; do cp -r "$src/$folder" "$DEST/"; done
    cp "$tmp/pddl-$VERSION/LICENSE" "$DEST/LICENSE"
    echo "ipc_benchmarks: $(ls "$DEST" | wc -l) entries in $DEST"
    ;;
  *)
    echo "usage: $0 hash|run" >&2
    exit 2
    ;;
esac
