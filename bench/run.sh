#!/usr/bin/env bash
# Runs every benchmark program in BUILD/bench with its full-size arguments and
# prints their machine-readable lines.  Figures go to docs/benchmarks.md.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
for b in "$build"/bench/*_bench; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || echo "($(basename "$b") failed: $?)"
done
