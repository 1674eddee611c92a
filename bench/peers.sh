#!/usr/bin/env bash
# bench/peers.sh BUILD - gtrace and a peer tool side by side, same files, one run.
#
# The peer is Holistic Trace Analysis (../shared/peers/hta_run.py, HTA's own
# code run by Debian's python3).  On each input both tools do the same two
# jobs:
#   load + temporal breakdown   HTA: TraceAnalysis() + get_temporal_breakdown()
#                               gtrace: `gtrace stats DIR --report gputime`
#   load + kernel breakdown     HTA: TraceAnalysis() + get_gpu_kernel_breakdown()
#                               gtrace: `gtrace stats DIR --report kernels`
# HTA loads once and runs both in one process (its times come from its own
# clock around each call, so its interpreter start is not counted); gtrace
# runs one process per job, start-up and output included.  Peak memory is
# the largest RSS of a process (HTA's one process; the larger of gtrace's).
#
# Inputs: the largest trace of ../shared/testdata that HTA reads (Kineto JSON)
# and a ~1 GB Kineto trace written by `import_bench --gen` (kept in
# BUILD/bench-peers/ between runs).  Prints `peer ...` lines, and with
# --docs rewrites the block between the bench-peers markers of
# docs/benchmarks.md with the figures and ratios.
#
# options: --mb N (size of the generated trace, default 1000), --runs N
# (gtrace runs per job and HTA runs on the testdata trace, default 5; HTA runs
# once on the generated trace), --hta-timeout S (stop an HTA run after S s of
# wall time, default 1800: the table then gives lower bounds), --docs
set -euo pipefail
build=${1:-build}
shift || true
mb=1000
runs=5
docs=0
hta_timeout=1800
while [ $# -gt 0 ]; do
	case "$1" in
	--mb) mb=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--docs) docs=1; shift ;;
	--hta-timeout) hta_timeout=$2; shift 2 ;;
	*) echo "bench/peers.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/.."
src=$(pwd)
peers="$src/../shared/peers"
testdata="$src/../shared/testdata"
gtrace="$src/$build/tui/gtrace"
gen="$src/$build/bench/import_bench"
for f in "$peers/hta_run.py" "$gtrace" "$gen"; do
	[ -e "$f" ] || { echo "bench/peers.sh: $f: missing (build first; ../shared beside the repository)" >&2; exit 1; }
done

# the Debian packages HTA needs (../shared/peers/README.md), installed when missing
pkgs="python3-pandas python3-plotly python3-psutil python3-networkx python3-yaml"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "bench/peers.sh: installing$missing"
	$sudo apt-get install -y --no-install-recommends $missing
fi

work="$src/$build/bench-peers"
mkdir -p "$work/largest" "$work/gen"
# largest Kineto JSON of testdata (by file size)
largest=$(find "$testdata" -name '*.json.gz' -o -name '*.json' | xargs ls -S | head -1)
rm -f "$work/largest"/*
ln -s "$largest" "$work/largest/$(basename "$largest")"
genfile="$work/gen/rank-0.json"
want=$((mb * 1000000))
have=$(stat -c %s "$genfile" 2>/dev/null || echo 0)
if [ "$have" -lt $((want * 95 / 100)) ] || [ "$have" -gt $((want * 105 / 100)) ]; then
	"$gen" --gen "$genfile" --mb "$mb"
fi

median() { sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
max() { sort -g | tail -1; }

# hta DIR N: medians of load, temporal, kernels (s), max RSS (MB) over N runs;
# a run past --hta-timeout seconds is stopped: then "dnf dnf dnf RSS"
hta() {
	local dir=$1 n=$2 out i
	: >"$work/hta.txt"
	for ((i = 0; i < n; i++)); do
		if ! out=$(/usr/bin/time -f "%M" -o "$work/hta_time.txt" \
				timeout "$hta_timeout" /usr/bin/python3 "$peers/hta_run.py" "$dir" | tail -1) ||
		   [ -z "$out" ]; then
			echo "dnf dnf dnf $(($(tail -1 "$work/hta_time.txt") / 1024))"
			return
		fi
		echo "$out" | sed 's/^hta: //; s/[a-z_]*=//g' >>"$work/hta.txt"
	done
	echo "$(awk '{print $1}' "$work/hta.txt" | median) $(awk '{print $2}' "$work/hta.txt" | median)" \
	     "$(awk '{print $3}' "$work/hta.txt" | median) $(awk '{print $4}' "$work/hta.txt" | max)"
}

# gt DIR REPORT N: median wall (s) and max RSS (MB) of `gtrace stats` over N runs
gt() {
	local dir=$1 rep=$2 n=$3 i
	: >"$work/gt.txt"
	for ((i = 0; i < n; i++)); do
		/usr/bin/time -f "%e %M" -o "$work/time.txt" "$gtrace" stats "$dir" --report "$rep" \
			--format csv >/dev/null
		cat "$work/time.txt" >>"$work/gt.txt"
	done
	echo "$(awk '{print $1}' "$work/gt.txt" | median) $(awk '{print $2 / 1024}' "$work/gt.txt" | max)"
}

rows=""
for input in largest gen; do
	dir="$work/$input"
	if [ "$input" = largest ]; then
		name="largest testdata trace, ${largest#"$testdata"/}"
		nh=$runs
	else
		name="generated Kineto trace (\`import_bench --gen --mb $mb\`)"
		nh=1
	fi
	f=$(readlink -f "$dir"/*)
	case "$f" in
	*.gz) raw_bytes=$(zcat "$f" | wc -c) ;;
	*) raw_bytes=$(stat -c %s "$f") ;;
	esac
	raw_mb=$(awk -v b="$raw_bytes" 'BEGIN{printf "%.1f", b / 1e6}')
	read -r h_load h_temp h_kern h_rss < <(hta "$dir" "$nh")
	read -r g_temp g_temp_rss < <(gt "$dir" gputime "$runs")
	read -r g_kern g_kern_rss < <(gt "$dir" kernels "$runs")
	g_rss=$(printf '%s\n%s\n' "$g_temp_rss" "$g_kern_rss" | max)
	line=$(awk -v n="$name" -v raw="$raw_mb" -v hl="$h_load" -v ht="$h_temp" -v hk="$h_kern" -v hr="$h_rss" \
		-v gt="$g_temp" -v gk="$g_kern" -v gr="$g_rss" -v nh="$nh" -v ng="$runs" -v to="$hta_timeout" 'BEGIN{
		if (hl == "dnf") {   # stopped at the timeout: lower bounds
			printf "| %s: %.1f MB of JSON | did not finish in %d s | %.3f s | **> %.0fx** | did not finish in %d s | %.3f s | **> %.0fx** | > %.0f MB when stopped | %.1f MB | **> %.0fx** | %d / %d |\n",
				n, raw, to, gt, to / gt, to, gk, to / gk, hr, gr, hr / gr, nh, ng
			exit
		}
		tt = hl + ht; tk = hl + hk
		printf "| %s: %.1f MB of JSON | %.2f s | %.3f s | **%.0fx** | %.2f s | %.3f s | **%.0fx** | %.0f MB | %.1f MB | **%.0fx** | %d / %d |\n",
			n, raw, tt, gt, tt / gt, tk, gk, tk / gk, hr, gr, hr / gr, nh, ng }')
	echo "peer input=$input raw_mb=$raw_mb hta_load_s=$h_load hta_temporal_s=$h_temp hta_kernels_s=$h_kern" \
	     "hta_maxrss_mb=$h_rss gtrace_gputime_s=$g_temp gtrace_kernels_s=$g_kern gtrace_maxrss_mb=$g_rss"
	rows="$rows$line"$'\n'
done

if [ "$docs" = 1 ]; then
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	block=$(cat <<EOF
<!-- bench-peers begin: written by \`make bench-peers\` (bench/peers.sh), do not edit by hand -->
## Side by side with Holistic Trace Analysis (\`make bench-peers\`)

Measured $(date -u '+%Y-%m-%d %H:%M') UTC, load average $load at the end, same machine, same files,
one run of \`bash bench/peers.sh $build --runs $runs --mb $mb --hta-timeout $hta_timeout --docs\`. HTA (../shared/peers,
facebookresearch/HolisticTraceAnalysis @ f4d0062 on Debian's python3-pandas) loads a trace
directory once and computes the temporal breakdown and the kernel type breakdown; its times are its
own clock around each call (interpreter start and imports not counted). gtrace runs
\`gtrace stats DIR --report gputime\` (HTA's temporal breakdown, same definitions) and
\`--report kernels\`, one process per job, start-up, load and CSV output included. Times are
medians (runs: HTA / gtrace); peak memory is the largest RSS of a process. Ratio = HTA / gtrace.

| input | HTA load + temporal | gtrace load + gputime | time ratio | HTA load + kernels | gtrace load + kernels | time ratio | HTA peak RSS | gtrace peak RSS | memory ratio | runs |
|---|---|---|---|---|---|---|---|---|---|---|
$rows<!-- bench-peers end -->
EOF
)
	BLOCK="$block" python3 - "$src/docs/benchmarks.md" <<'PY'
import os, re, sys
p = sys.argv[1]
s = open(p).read()
b = os.environ["BLOCK"].rstrip("\n") + "\n"
pat = re.compile(r"<!-- bench-peers begin.*?<!-- bench-peers end -->\n", re.S)
s = pat.sub(lambda m: b, s) if pat.search(s) else s.rstrip("\n") + "\n\n" + b
open(p, "w").write(s)
PY
	echo "bench/peers.sh: docs/benchmarks.md updated"
fi
