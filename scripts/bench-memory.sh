#!/usr/bin/env bash
# Peak memory of perfbench on 100 MB inputs, the bounds behind streaming
# reports and imports: writes
#   a long-format CSV of 100 versions × about 1,800 steps × 10 metrics,
#   about 138,000 appended perf stat runs (testdata/perfstat/default.txt),
#   one perf stat -I text run of about 230,000 intervals of 4 events,
# each 100 MB, then runs perfbench report on the first and perfbench import
# perf-stat on the others under /usr/bin/time -v, prints each peak RSS and
# fails when the report peaks at 1 GB or more or an import at 300 MB or
# more. Environment: SIZE (bytes per input, default 100000000).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${SIZE:-100000000}
for tool in python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || {
		echo "bench-memory: $tool is not installed: apt-get install python3 time" >&2
		exit 1
	}
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/perfbench" ./cmd/perfbench
python3 - "$tmp" "$size" <<'PY'
import sys
tmp, size = sys.argv[1], int(sys.argv[2])
metrics = ["qps", "cpu/o", "cs/o", "r/o", "w/o", "rKB/o", "wKB/o", "IPC", "instructions/o", "cycles/o"]
with open(tmp + "/big.csv", "w") as f:
    n = f.write("version,step,threads,metric,value\n")
    step = 0
    while n < size:
        for v in range(100):
            for m, metric in enumerate(metrics):
                n += f.write("mariadb-11.%03d,step-%05d_range=100,16,%s,%d.%04d\n" % (v, step, metric, 1 + (step * 31 + v * 7 + m) % 4999, (step + v * m) % 10000))
        step += 1
run = open("testdata/perfstat/default.txt").read()
with open(tmp + "/append.txt", "w") as f:
    for _ in range(size // len(run) + 1):
        f.write(run)
with open(tmp + "/interval.txt", "w") as f:
    n = f.write("#           time             counts unit events\n")
    i = 0
    while n < size:
        i += 1
        t = "%15.9f" % (i * 0.1)
        n += f.write("%s %18.2f msec task-clock                       #    1.211 CPUs utilized          \n" % (t, 121.07 + i % 7))
        n += f.write("%s %18d      context-switches                 #   68.389 K/sec                  \n" % (t, 8282 + i % 13))
        n += f.write("%s %18d      cpu-migrations                   #    3.303 /sec                   \n" % (t, i % 5))
        n += f.write("%s %18d      page-faults                      #    0.000 /sec                   \n" % (t, i % 3))
PY
fail=0
# measure NAME LIMIT_MB COMMAND...: runs the command, prints its peak RSS
# (MB are 10^6 bytes).
measure() {
	local name=$1 limit=$2
	shift 2
	/usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" || {
		echo "bench-memory: $name failed:" >&2
		tail -3 "$tmp/err.txt" >&2
		exit 1
	}
	local kb
	kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
	printf '%-40s %5d MB peak RSS (%d KB; limit %d MB), %s\n' "$name" $((kb * 1024 / 1000000)) "$kb" "$limit" \
		"$(awk -F': ' '/Elapsed/ {print $2}' "$tmp/time.txt")"
	if [ $((kb * 1024)) -ge $((limit * 1000000)) ]; then
		fail=1
	fi
}
mb() { echo $(($(stat -c %s "$1") / 1000000)); }
unset GOMEMLIMIT
measure "report: $(mb "$tmp/big.csv") MB CSV" 1000 \
	"$tmp/perfbench" report "$tmp/big.csv" --out "$tmp/report.txt"
measure "import: $(mb "$tmp/append.txt") MB of appended runs" 300 \
	"$tmp/perfbench" import perf-stat "$tmp/append.txt" --version v --step s --out "$tmp/imported-append"
measure "import: $(mb "$tmp/interval.txt") MB -I run" 300 \
	"$tmp/perfbench" import perf-stat "$tmp/interval.txt" --version v --step s --out "$tmp/imported-interval"
echo "Records: $(find "$tmp/imported-append" -name '*.json' | wc -l) from the appended runs, $(find "$tmp/imported-interval" -name '*.json' | wc -l) from the -I run"
exit $fail
