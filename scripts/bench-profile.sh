#!/usr/bin/env bash
# What sampling costs the measured server: sysbench oltp_point_select QPS on a
# sandbox MariaDB while
#   pb-F       perfbench profile --pid PID --freq F samples it (call stacks,
#              CPU-wide per-CPU ring buffers, samples kept by pid)
#   perf-F     perf record -F F -g -p PID samples it (perf's per-thread,
#              per-CPU events)
# for F in FREQS, against windows of the same run with nothing attached.
#
# One sysbench run serves the whole measurement. Inside it, windows of WINDOW
# seconds alternate: a window with nothing attached, then a window with a
# sampler, a pair for each mode in a rotating order, ROUNDS rounds. A window's
# QPS is the server's Questions delta over the window; each sampler window is
# compared with the unattached window just before it, so the drift of a shared
# machine hits both alike. The sampler is started 1.5 s before its window
# opens, so that the window sees sampling and not the sampler's start-up, and
# the next window opens only once it has exited (perfbench names
# frames and writes its pprof file, perf record writes perf.data and collects
# build-ids, after the window). Throughput drifts a lot on shared or virtual
# machines, so the script also prints what drifts less: the CPU time the
# server and sysbench spent per query in the window (from /proc: the kernel
# charges the cost of taking a sample to the task it interrupts) divided by
# the paired window's, and the sampler's own CPU time per second of sampling.
#
# It prints every pair, then for each frequency perfbench's and perf's median
# QPS ratio and CPU-per-query ratio side by side. Run as root.
# Environment: ROUNDS (default 7), WINDOW (default 4), THREADS (default 2),
# FREQS (default "99 999").
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-7}
win=${WINDOW:-4}
threads=${THREADS:-2}
freqs=${FREQS:-99 999}
modes=()
for f in $freqs; do modes+=("pb-$f" "perf-$f"); done

for tool in perf sysbench mariadbd mariadb-install-db mariadb python3; do
	command -v "$tool" >/dev/null || {
		echo "bench-profile: $tool is not installed: apt-get install linux-perf sysbench mariadb-server python3" >&2
		exit 1
	}
done
tmp=$(mktemp -d /tmp/pb-profile.XXXXXX)
spid= lpid=
cleanup() {
	for p in $lpid $spid; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/perfbench" ./cmd/perfbench

# The server, as in shared/reference/mariadb-sandbox.md.
sock=$tmp/mysqld.sock
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mariadb-install-db --no-defaults --datadir="$tmp/data" --user=root \
	--auth-root-authentication-method=normal --skip-test-db >"$tmp/install.log" 2>&1
mariadbd --no-defaults --datadir="$tmp/data" --socket="$sock" --port="$port" --bind-address=127.0.0.1 \
	--user=root --pid-file="$tmp/mariadbd.pid" --log-error="$tmp/error.log" --skip-name-resolve \
	--innodb-buffer-pool-size=256M --max-connections=100 >/dev/null 2>&1 &
spid=$!
for _ in $(seq 600); do
	mariadb-admin --no-defaults -uroot --socket="$sock" ping >/dev/null 2>&1 && break
	sleep 0.05
done
sql() { mariadb --no-defaults -uroot --socket="$sock" -N -B -e "$1"; }
sql "CREATE DATABASE sbtest; CREATE USER sbtest@'%' IDENTIFIED BY 'sbtest'; GRANT ALL ON sbtest.* TO sbtest@'%';"
sb=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=sbtest
	--mysql-password=sbtest --mysql-db=sbtest --tables=1 --table_size=100000)
"${sb[@]}" oltp_read_write prepare >/dev/null

# The load: long enough for every window, stopped at the end.
total=$((rounds * ${#modes[@]} * (2 * win + 4) + 30))
"${sb[@]}" oltp_point_select --threads="$threads" --time="$total" --events=0 run >"$tmp/sb.txt" &
lpid=$!
sleep 5 # connected, buffer pool warm

# cpu PID: user+system CPU time of a process (all its threads), clock ticks.
cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# snap: time (s), Questions, server CPU ticks, sysbench CPU ticks.
snap() {
	echo "$(date +%s.%N) $(sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}') $(cpu "$spid") $(cpu "$lpid")"
}
tick=$(getconf CLK_TCK)
# window A B: QPS and server+sysbench CPU µs per query between two snaps.
window() {
	awk -v t="$tick" -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		q = y[2] - x[2]
		printf "%.1f %.4f\n", q / (y[1] - x[1]), ((y[3] - x[3]) + (y[4] - x[4])) / t * 1e6 / q
	}'
}

# measure MODE: an unattached window, then a window with MODE's sampler;
# prints "QPS CPU/q" of each and the sampler's CPU ms per second.
measure() {
	local mode=$1 span cpid a b c d
	a=$(snap)
	sleep "$win"
	b=$(snap)
	span=$(awk -v w="$win" 'BEGIN { print w + 2 }')
	case $mode in
	pb-*)
		/usr/bin/time -f '%U %S' -o "$tmp/sampler.cpu" "$tmp/perfbench" profile --pid "$spid" \
			--freq "${mode#pb-}" --duration "${span}s" --output "$tmp/profile.pb.gz" >/dev/null 2>"$tmp/sampler.txt" &
		;;
	perf-*)
		/usr/bin/time -f '%U %S' -o "$tmp/sampler.cpu" perf record -q -F "${mode#perf-}" -g -p "$spid" \
			-o "$tmp/perf.data" -- sleep "$span" >/dev/null 2>"$tmp/sampler.txt" &
		;;
	esac
	cpid=$!
	sleep 1.5 # sampling, past the sampler's start-up (perf reads every thread's maps)
	c=$(snap)
	sleep "$win"
	d=$(snap)
	if ! wait "$cpid"; then
		echo "bench-profile: $mode failed:" >&2
		cat "$tmp/sampler.txt" >&2
		exit 1
	fi
	sleep 0.5 # the next window starts clean
	echo "$(window "$a" "$b") $(window "$c" "$d") $(awk -v s="$span" '{ printf "%.1f", ($1 + $2) * 1000 / s }' "$tmp/sampler.cpu")"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-profile: MariaDB $(mariadbd --version | awk '{print $3}'), $(nproc) CPUs, $threads sysbench threads, $rounds rounds of ${win}s window pairs in one sysbench run"
for r in $(seq "$rounds"); do
	line="round=$r"
	for i in "${!modes[@]}"; do
		mode=${modes[$(((i + r) % ${#modes[@]}))]}
		read -r nq nc q c own <<<"$(measure "$mode")"
		line+=$(printf '  %s %.0f/%.0f' "$mode" "$q" "$nq")
		echo "$nq" >>"$tmp/qps.none"
		echo "$q" >>"$tmp/qps.$mode"
		awk -v a="$q" -v b="$nq" 'BEGIN { printf "%.5f\n", a / b }' >>"$tmp/ratio.$mode"
		awk -v a="$c" -v b="$nc" 'BEGIN { printf "%.5f\n", a / b }' >>"$tmp/cpu.$mode"
		echo "$own" >>"$tmp/own.$mode"
	done
	echo "$line"
done
kill "$lpid" 2>/dev/null || true

echo
printf '%-6s %10s %10s %10s %10s %11s %11s %11s %11s\n' freq "pb QPS" "perf QPS" "pb QPS/" "perf QPS/" "pb CPU/q/" "perf CPU/q/" "pb own CPU" "perf own"
printf '%-6s %10s %10s %10s %10s %11s %11s %11s %11s\n' "" median median none none none none "ms/s" "CPU ms/s"
printf '%-6s %10.0f\n' none "$(median <"$tmp/qps.none")"
for f in $freqs; do
	printf '%-6s %10.0f %10.0f %10.3f %10.3f %11.3f %11.3f %11.1f %11.1f\n' "$f" \
		"$(median <"$tmp/qps.pb-$f")" "$(median <"$tmp/qps.perf-$f")" \
		"$(median <"$tmp/ratio.pb-$f")" "$(median <"$tmp/ratio.perf-$f")" \
		"$(median <"$tmp/cpu.pb-$f")" "$(median <"$tmp/cpu.perf-$f")" \
		"$(median <"$tmp/own.pb-$f")" "$(median <"$tmp/own.perf-$f")"
done
echo "(round=N entries: MODE QPS/QPS of the unattached window before it. QPS/none and CPU/q/none: medians over"
echo " pairs of the sampled window's QPS, and server+sysbench CPU per query, divided by the unattached"
echo " window's. own CPU: the sampler's user+system CPU per second, naming frames and writing files included.)"
