#!/bin/bash
# graph_prepare.sh - what the CUDA-graph preparation costs a process that
# has the capture library loaded but dormant (docs/capture.md, "CUDA
# graphs"): the stand-in trainer on the emulated driver and CUPTI
# (tests/cudaemu/) timed with no library, with the library dormant and
# prepared (kernel tracing on, every record dropped), and with the library
# dormant and GTRACE_PREPARE_GRAPHS=0.  Runs interleaved; median wall ms.
#
# usage: bench/graph_prepare.sh BUILD_DIR [RUNS [WORK]]   (default 5 200000)
# output: "name value unit" lines.
set -eu
build=$(cd "$1" && pwd)
runs=${2:-5}
work=${3:-200000}
emu="$build/tests/cudaemu"
lib="$build/capture/libgtrace-inject.so"
args=(--out - --threads 2 --work "$work" --configs 50 --dur-ns 100)
declare -A ms
for ((i = 0; i < runs; i++)); do
	for mode in none prepared unprepared; do
		s=$(date +%s%N)
		case $mode in
		none) env -u CUDA_INJECTION64_PATH LD_LIBRARY_PATH="$emu" "$emu/cudaemu_trainer" "${args[@]}" ;;
		prepared) CUDA_INJECTION64_PATH="$lib" LD_LIBRARY_PATH="$emu" "$emu/cudaemu_trainer" "${args[@]}" ;;
		unprepared) GTRACE_PREPARE_GRAPHS=0 CUDA_INJECTION64_PATH="$lib" LD_LIBRARY_PATH="$emu" \
			"$emu/cudaemu_trainer" "${args[@]}" ;;
		esac >/dev/null
		e=$(date +%s%N)
		ms[$mode]="${ms[$mode]:-} $(((e - s) / 1000000))"
	done
done
for mode in none prepared unprepared; do
	med=$(tr ' ' '\n' <<<"${ms[$mode]}" | sed '/^$/d' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
	echo "trainer_${mode}_ms $med ms (runs:${ms[$mode]}; $((2 * work)) launches)"
done
