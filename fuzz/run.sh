#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD/fuzz for SECONDS each, seeded from
# fuzz/corpus/<target>/ and the real traces; fails on the first crash.
set -euo pipefail
build=$1; secs=$2
cd "$(dirname "$0")/.."
shopt -s nullglob
for f in "$build"/fuzz/fuzz_*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	name=$(basename "$f")
	work=$(mktemp -d)
	seeds=()
	[ -d "fuzz/corpus/$name" ] && seeds+=("fuzz/corpus/$name")
	echo "fuzz: $name for ${secs}s"
	"$f" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -print_final_stats=0 \
		-artifact_prefix="$work/" "$work" "${seeds[@]}" >"$work/log" 2>&1 || {
		tail -40 "$work/log"; echo "fuzz: $name found a crash (artifacts in $work)"; exit 1; }
	echo "fuzz: $name: $(grep -c . "$work/log") log lines, no crash"
	rm -rf "$work"
done
