#!/bin/sh
# budget_gen.sh - the large simulated capture of bench/budget_bench.c: a
# 64-rank x 8-GPU data-parallel trainer (a compute, copy and NCCL stream per
# GPU, a host thread per rank) of EVENTS events (default 50M), written by
# `gtrace sim` (which builds it in a store under the default memory budget:
# 48 bytes an event go to a cache file in $TMPDIR, ~50 GB for 1G events).
# usage: bench/budget_gen.sh OUT.gtrace [EVENTS]
set -e
out=${1:?usage: budget_gen.sh OUT.gtrace [EVENTS]}
build=${GTRACE_BUILD:-build}
exec "$build/tui/gtrace" sim --force -o "$out" --ranks 64 --gpus 8 --events "${2:-50M}"
