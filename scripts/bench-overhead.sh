#!/usr/bin/env bash
# What attaching counters costs the measured server: sysbench oltp_point_select
# QPS on a sandbox MariaDB at 1 and 2 client threads, with
#   none       nothing attached
#   perf       perf stat -e EVENTS -p PID -- sleep D
#   pb-stat    perfbench stat --pid PID -e EVENTS --duration D
#   pb-run     perfbench stat as perfbench run measures a step: counters
#              attached before sysbench connects, attached again per thread
#              when the window opens after a warm-up (--per-role), SHOW
#              GLOBAL STATUS, /proc and the counters read every second
#              (--interval 1s)
# with the same software events. The modes run interleaved, PAIRS rounds per
# thread count (each round runs every mode once, in a rotating order), TIME
# seconds of sysbench each. It prints every run, then per thread count the
# median QPS of each mode and the median over rounds of its QPS divided by
# the same round's unattached QPS; and the same for the server's CPU time per
# query (/proc/PID/stat over SHOW GLOBAL STATUS Questions), where the
# counters' cost lands (the kernel's work at each context switch of a counted
# thread) and which other work on the machine disturbs far less than QPS.
# Run as root.
# Throughput on a shared or virtual machine drifts: the load average is
# printed before and after; trust a run whose load stayed low.
# Environment: PAIRS (default 5), TIME (default 10), THREADS (default "1 2"),
# EVENTS (default task-clock,context-switches,cpu-migrations,page-faults).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-5}
secs=${TIME:-10}
threads_list=${THREADS:-1 2}
events=${EVENTS:-task-clock,context-switches,cpu-migrations,page-faults}
modes=(none perf pb-stat pb-run)

for tool in perf sysbench mariadbd mariadb-install-db; do
	command -v "$tool" >/dev/null || {
		echo "bench-overhead: $tool is not installed: apt-get install linux-perf sysbench mariadb-server" >&2
		exit 1
	}
done
tmp=$(mktemp -d /tmp/pb-overhead.XXXXXX)
spid=
cleanup() {
	if [ -n "$spid" ]; then
		kill "$spid" 2>/dev/null || true
		wait "$spid" 2>/dev/null || true
	fi
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
mariadb --no-defaults -uroot --socket="$sock" -e "CREATE DATABASE sbtest;
  CREATE USER sbtest@'%' IDENTIFIED BY 'sbtest'; GRANT ALL ON sbtest.* TO sbtest@'%';"
printf '[client]\nuser=root\nsocket=%s\n' "$sock" >"$tmp/my.cnf"
sb=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=sbtest
	--mysql-password=sbtest --mysql-db=sbtest --tables=1 --table_size=100000)
"${sb[@]}" oltp_read_write prepare >/dev/null
"${sb[@]}" oltp_point_select --threads=2 --time=5 run >/dev/null # warm the buffer pool

# cpu_ticks: the server's user + system CPU time, in clock ticks.
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$spid/stat"; }
questions() { mariadb --no-defaults -uroot --socket="$sock" -N -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }'; }
hz=$(getconf CLK_TCK)

# run MODE THREADS: one sysbench run with MODE attached; prints its QPS and
# the server's CPU microseconds per query.
run() {
	local mode=$1 th=$2 cpid=
	local span=$((secs + 3))
	case $mode in
	perf)
		perf stat -e "$events" -p "$spid" -- sleep "$span" >/dev/null 2>"$tmp/counter.txt" &
		cpid=$!
		;;
	pb-stat)
		"$tmp/perfbench" stat --pid "$spid" --defaults-file "$tmp/my.cnf" -e "$events" \
			--duration "${span}s" >/dev/null 2>"$tmp/counter.txt" &
		cpid=$!
		;;
	pb-run)
		# perfbench run: attach, sysbench connects, warm-up, then the
		# window with per-role counters and a per-second series.
		"$tmp/perfbench" stat --pid "$spid" --defaults-file "$tmp/my.cnf" -e "$events" \
			--per-role --interval 1s --warmup 2s --duration "$((span - 2))s" >/dev/null 2>"$tmp/counter.txt" &
		cpid=$!
		;;
	esac
	[ -n "$cpid" ] && sleep 1 # attached before the load connects
	local c0 q0 c1 q1
	c0=$(cpu_ticks)
	q0=$(questions)
	"${sb[@]}" oltp_point_select --threads="$th" --time="$secs" --events=0 run >"$tmp/sb.txt"
	c1=$(cpu_ticks)
	q1=$(questions)
	if [ -n "$cpid" ]; then
		if ! wait "$cpid"; then
			echo "bench-overhead: $mode failed:" >&2
			cat "$tmp/counter.txt" >&2
			exit 1
		fi
	fi
	awk -v c="$((c1 - c0))" -v q="$((q1 - q0))" -v hz="$hz" \
		'/^ *queries:/ { gsub(/[()]/, "", $3); printf "%s %.3f\n", $3, c / hz * 1e6 / q; exit }' "$tmp/sb.txt"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-overhead: MariaDB $(mariadbd --version | awk '{print $3}'), $(nproc) CPUs, events $events, $pairs rounds of ${secs}s per mode and thread count"
echo "bench-overhead: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for th in $threads_list; do
	for r in $(seq "$pairs"); do
		line="threads=$th round=$r"
		declare -A qps=() cpu=()
		for i in "${!modes[@]}"; do
			mode=${modes[$(((i + r) % ${#modes[@]}))]}
			read -r qps[$mode] cpu[$mode] <<<"$(run "$mode" "$th")"
		done
		for mode in "${modes[@]}"; do
			line+=$(printf '  %s %.0f (%.2f us/q)' "$mode" "${qps[$mode]}" "${cpu[$mode]}")
			echo "${qps[$mode]}" >>"$tmp/qps.$th.$mode"
			echo "${cpu[$mode]}" >>"$tmp/cpu.$th.$mode"
			awk -v a="${qps[$mode]}" -v b="${qps[none]}" 'BEGIN { printf "%.5f\n", a / b }' >>"$tmp/ratio.$th.$mode"
			awk -v a="${cpu[$mode]}" -v b="${cpu[none]}" 'BEGIN { printf "%.5f\n", a / b }' >>"$tmp/cratio.$th.$mode"
		done
		echo "$line"
		unset qps cpu
	done
done

echo
printf '%-8s %-8s %12s %12s %16s %16s\n' threads mode "median QPS" "QPS / none" "CPU us/query" "CPU/q / none"
for th in $threads_list; do
	for mode in "${modes[@]}"; do
		printf '%-8s %-8s %12.0f %12.3f %16.2f %16.3f\n' "$th" "$mode" \
			"$(median <"$tmp/qps.$th.$mode")" "$(median <"$tmp/ratio.$th.$mode")" \
			"$(median <"$tmp/cpu.$th.$mode")" "$(median <"$tmp/cratio.$th.$mode")"
	done
done
echo "(X / none: the median over rounds of the mode's value divided by the same round's value with nothing attached)"
echo "bench-overhead: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
