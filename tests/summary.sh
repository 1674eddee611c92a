#!/usr/bin/env bash
# tests/summary.sh LOG... - the final lines of `make test` from meson's
# testlog.txt files (normal and ASan/UBSan builds):
#   gtrace: P passed, F failed, S skipped
# P and F count test suites; S counts what was skipped: whole suites meson
# reports as skipped (exit 77, e.g. a tmux case whose trace is absent) plus
# the single Criterion tests that skipped inside a passing suite (their
# "gtrace-skip:" line, tests/testdata.h).  The distinct reasons are listed
# above the count, so a skip is never silent.
set -euo pipefail
logs=()
for f in "$@"; do
	[ -f "$f" ] && logs+=("$f")
done
if [ ${#logs[@]} -eq 0 ]; then
	echo "gtrace: no test log found" >&2
	exit 1
fi
reasons=$(grep -h '^gtrace-skip: \|^SKIP: ' "${logs[@]}" | sed 's/^gtrace-skip: /test skipped: /; s/^SKIP: /suite skipped: /' | sort | uniq -c | sort -rn || true)
if [ -n "$reasons" ]; then
	echo "skipped (count, reason):"
	echo "$reasons" | head -40
	echo "(GTRACE_TESTDATA=DIR points the tests at the traces; .ci/run sets GTRACE_REQUIRE_TESTDATA=1, which fails instead of skipping)"
fi
# why each failed test failed, at the end where a CI log's tail shows it
fails=$(grep -h -E '\[FAIL\]|Assertion Failed|^\[----\] .*:[0-9]+: |AssertionError|^FAIL: |ERROR: AddressSanitizer|runtime error:' "${logs[@]}" | head -40 || true)
if [ -n "$fails" ]; then
	echo "failures (first 40 lines naming them):"
	echo "$fails"
fi
awk '/^Ok:/{p+=$2} /^(Fail|Timeout|Unexpected Pass):/{f+=$NF} /^Skipped:/{s+=$2}
     /^gtrace-skip: /{t++}
     END{print "test suites, normal and ASan/UBSan builds together (skipped: suites and single tests):";
         print "gtrace: " p+0 " passed, " f+0 " failed, " s+t " skipped"}' "${logs[@]}"
