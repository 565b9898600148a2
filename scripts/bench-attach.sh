#!/usr/bin/env bash
# Times perfbench's attach + read + detach against perf stat's, side by side,
# on one process with 2,000 threads and 8 software events: PAIRS interleaved
# runs of
#   perfbench stat --force --pid PID -e EVENTS --duration WINDOW --format json
#   perf stat -e EVENTS -p PID -- sleep WINDOW
# and prints each pair, then the medians and their ratio. Run as root.
# Environment: PAIRS (default 7), THREADS (default 2000), WINDOW in seconds
# (default 0.1; 0 times attach, read and detach alone).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-7}
threads=${THREADS:-2000}
window=${WINDOW:-0.1}
events=task-clock,cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,alignment-faults

command -v perf >/dev/null || { echo "bench-attach: perf is not installed: apt-get install linux-perf" >&2; exit 1; }
tmp=$(mktemp -d)
wpid=
cleanup() {
	if [ -n "$wpid" ]; then
		echo quit >&3 || true
		exec 3>&-
		wait "$wpid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "${PERFBENCH:-}" ]; then
	cp "$PERFBENCH" "$tmp/perfbench"
else
	go build -o "$tmp/perfbench" ./cmd/perfbench
fi
go build -o "$tmp/workload" ./perfevent/internal/workload
ulimit -n 20000 2>/dev/null || true

# The process to count: the workload with THREADS threads parked.
mkfifo "$tmp/in"
"$tmp/workload" <"$tmp/in" >"$tmp/out" &
wpid=$!
exec 3>"$tmp/in"
await() { # wait for a reply line starting with $1
	for _ in $(seq 500); do
		grep -q "^$1" "$tmp/out" && return 0
		sleep 0.02
	done
	echo "bench-attach: the workload did not answer $1" >&2
	exit 1
}
await ready
# Top up to THREADS: the Go runtime adds or retires a thread of its own now
# and then.
for round in 1 2 3; do
	n=$(ls "/proc/$wpid/task" | wc -l)
	[ "$n" -ge "$threads" ] && break
	echo "park $((threads - n))" >&3
	for _ in $(seq 500); do
		[ "$(grep -c '^parked' "$tmp/out")" -ge "$round" ] && break
		sleep 0.02
	done
	sleep 0.1
done
n=$(ls "/proc/$wpid/task" | wc -l)

now() { date +%s%N; }
# perfbench's --duration: 0 s is a window of 1 ns (a duration of 0 means
# until Ctrl-C).
dur=$(awk -v w="$window" 'BEGIN { if (w + 0 > 0) printf "%dus", w * 1e6; else print "1ns" }')
echo "pid $wpid: $n threads, 8 events ($events), ${window} s window, $pairs pairs"
printf '%-5s %12s %12s %8s\n' pair perfbench_s perf_stat_s ratio
ours=() theirs=()
for i in $(seq "$pairs"); do
	t0=$(now)
	"$tmp/perfbench" stat --force --pid "$wpid" -e "$events" --duration "$dur" --format json >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	t1=$(now)
	perf stat -e "$events" -p "$wpid" -- sleep "$window" >/dev/null 2>"$tmp/perf.err" || { cat "$tmp/perf.err" >&2; exit 1; }
	t2=$(now)
	a=$(( (t1 - t0) / 1000 )) b=$(( (t2 - t1) / 1000 ))
	ours+=("$a") theirs+=("$b")
	awk -v i="$i" -v a="$a" -v b="$b" 'BEGIN { printf "%-5s %12.3f %12.3f %8.2f\n", i, a/1e6, b/1e6, b/a }'
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }
ma=$(median "${ours[@]}") mb=$(median "${theirs[@]}")
awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%-5s %12.3f %12.3f %8.2f   (perf stat time / perfbench time)\n", "median", a/1e6, b/1e6, b/a }'
