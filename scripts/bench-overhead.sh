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
# and, with CGROUP=1, the server moved into a cgroup v2 of its own and
#   pb-cgroup   perfbench stat --cgroup --pid PID -e EVENTS --duration D
#              (one counter per CPU filtered by the server's cgroup)
#   perf-cgroup perf stat -a -G CGROUP -e EVENTS -- sleep D
# with the same software events. The modes run interleaved, PAIRS rounds per
# thread count (each round runs every mode once, in a rotating order), TIME
# seconds of sysbench each. It prints every run, then per thread count the
# median QPS of each mode and the median over rounds of its QPS divided by
# the same round's unattached QPS (with its range over rounds); and the same
# for the server's CPU time per query (/proc/PID/stat over SHOW GLOBAL STATUS Questions), where the
# counters' cost lands (the kernel's work at each context switch of a counted
# thread) and which other work on the machine disturbs far less than QPS.
# Run as root.
# Throughput on a shared or virtual machine drifts: the load average is
# printed before and after and with each round; trust a run whose load
# stayed low, or give QUIET.
# Environment:
#   PAIRS      rounds per thread count (default 5)
#   TIME       seconds of sysbench per run (default 10)
#   THREADS    client thread counts (default "1 2")
#   EVENTS     default task-clock,context-switches,cpu-migrations,page-faults
#   CGROUP     1: put the server in a cgroup v2 of its own (made under the
#              cgroup2 mount, removed at exit) and add the two cgroup modes
#   MODES      the modes to run, none first (default "none perf pb-stat
#              pb-run", plus "pb-cgroup perf-cgroup" with CGROUP=1)
#   PERFBENCH  a perfbench binary to measure instead of building this tree's
#   QUIET      a percentage of one CPU: before each run, wait (up to
#              QUIET_WAIT seconds, default 900) until the machine's CPU use
#              over two seconds, steal included, is below it (an idle machine
#              here shows about 10); the round's line says how long it
#              waited, or that it gave up and ran on a busy machine
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-5}
secs=${TIME:-10}
threads_list=${THREADS:-1 2}
events=${EVENTS:-task-clock,context-switches,cpu-migrations,page-faults}
cgroup=${CGROUP:-0}
if [ "$cgroup" = 1 ]; then
	read -r -a modes <<<"${MODES:-none perf pb-stat pb-run pb-cgroup perf-cgroup}"
else
	read -r -a modes <<<"${MODES:-none perf pb-stat pb-run}"
fi
if [ "${modes[0]}" != none ]; then
	echo "bench-overhead: MODES must start with none (every ratio is to the same round's unattached run)" >&2
	exit 2
fi
for mode in "${modes[@]}"; do
	case $mode in
	none | perf | pb-stat | pb-run) ;;
	pb-cgroup | perf-cgroup)
		[ "$cgroup" = 1 ] || {
			echo "bench-overhead: mode $mode needs CGROUP=1" >&2
			exit 2
		}
		;;
	*)
		echo "bench-overhead: unknown mode $mode (none, perf, pb-stat, pb-run, pb-cgroup, perf-cgroup)" >&2
		exit 2
		;;
	esac
done

for tool in perf sysbench mariadbd mariadb-install-db; do
	command -v "$tool" >/dev/null || {
		echo "bench-overhead: $tool is not installed: apt-get install linux-perf sysbench mariadb-server" >&2
		exit 1
	}
done
cgmount= cgdir=
if [ "$cgroup" = 1 ]; then
	# The cgroup2 mount: /sys/fs/cgroup on a unified host,
	# /sys/fs/cgroup/unified on a hybrid one.
	cgmount=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
	if [ -z "$cgmount" ]; then
		echo "bench-overhead: CGROUP=1 needs cgroup v2 mounted (mount -t cgroup2 none /sys/fs/cgroup)" >&2
		exit 1
	fi
fi
tmp=$(mktemp -d /tmp/pb-overhead.XXXXXX)
spid=
cleanup() {
	if [ -n "$spid" ]; then
		kill "$spid" 2>/dev/null || true
		wait "$spid" 2>/dev/null || true
	fi
	if [ -n "$cgdir" ]; then
		# Empty once the server is reaped; rmdir removes only an empty cgroup.
		for _ in $(seq 50); do
			rmdir "$cgdir" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "$cgdir" ] && echo "bench-overhead: could not remove cgroup $cgdir" >&2
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "${PERFBENCH:-}" ]; then
	cp "$PERFBENCH" "$tmp/perfbench"
else
	go build -o "$tmp/perfbench" ./cmd/perfbench
fi

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
if [ "$cgroup" = 1 ]; then
	# A cgroup of its own for the server: every thread moves with the pid.
	cgname=pb-overhead.$$
	cgdir=$cgmount/$cgname
	mkdir "$cgdir"
	echo "$spid" >"$cgdir/cgroup.procs"
	grep -qx "0::/$cgname" "/proc/$spid/cgroup" || {
		echo "bench-overhead: the server did not move to cgroup $cgdir: $(cat "/proc/$spid/cgroup")" >&2
		exit 1
	}
fi
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

# busy_pct: the machine's CPU use (user, nice, system, irq, softirq, steal)
# over two seconds, in percent of one CPU.
busy_pct() {
	local a b
	a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat)
	sleep 2
	b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat)
	awk -v a="$a" -v b="$b" -v n="$(nproc)" 'BEGIN {
		split(a, x, " "); split(b, y, " "); busy = y[1] - x[1]; all = busy + y[2] - x[2]
		printf "%d\n", (all > 0 ? 100 * n * busy / all : 0) }'
}

# quiet: with QUIET, waits until the machine is quiet; prints the seconds
# waited, with a '!' when it gave up.
quiet() {
	local waited=0 limit=${QUIET_WAIT:-900}
	if [ -z "${QUIET:-}" ]; then
		echo 0
		return
	fi
	while [ "$(busy_pct)" -ge "$QUIET" ]; do
		if [ "$waited" -ge "$limit" ]; then
			echo "$waited!"
			return
		fi
		sleep 3
		waited=$((waited + 5))
	done
	echo "$waited"
}

# run MODE THREADS: one sysbench run with MODE attached; prints its QPS, the
# server's CPU microseconds per query and the seconds waited for quiet.
run() {
	local mode=$1 th=$2 cpid= waited
	local span=$((secs + 3))
	waited=$(quiet)
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
	pb-cgroup)
		"$tmp/perfbench" stat --pid "$spid" --defaults-file "$tmp/my.cnf" -e "$events" --cgroup \
			--duration "${span}s" >/dev/null 2>"$tmp/counter.txt" &
		cpid=$!
		;;
	perf-cgroup)
		# -G names the cgroup relative to the cgroup2 mount; one name
		# given after the list applies to every event of it.
		perf stat -a -e "$events" -G "$cgname" -- sleep "$span" >/dev/null 2>"$tmp/counter.txt" &
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
		-v w="$waited" '/^ *queries:/ { gsub(/[()]/, "", $3); printf "%s %.3f %s\n", $3, c / hz * 1e6 / q, w; exit }' "$tmp/sb.txt"
}

span() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f..%.3f", lo, hi }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-overhead: MariaDB $(mariadbd --version | awk '{print $3}'), $(nproc) CPUs, events $events, $pairs rounds of ${secs}s per mode and thread count"
[ -n "$cgdir" ] && echo "bench-overhead: server pid $spid in cgroup $cgdir"
echo "bench-overhead: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for th in $threads_list; do
	for r in $(seq "$pairs"); do
		line="threads=$th round=$r load=$(cut -d" " -f1 /proc/loadavg)"
		declare -A qps=() cpu=() waited=()
		for i in "${!modes[@]}"; do
			mode=${modes[$(((i + r) % ${#modes[@]}))]}
			read -r qps[$mode] cpu[$mode] waited[$mode] <<<"$(run "$mode" "$th")"
		done
		for mode in "${modes[@]}"; do
			line+=$(printf '  %s %.0f (%.2f us/q)' "$mode" "${qps[$mode]}" "${cpu[$mode]}")
			case ${waited[$mode]} in
			0) ;;
			*!) line+=" [still busy after ${waited[$mode]%!}s]" ;;
			*) line+=" [waited ${waited[$mode]}s]" ;;
			esac
			echo "${qps[$mode]}" >>"$tmp/qps.$th.$mode"
			echo "${cpu[$mode]}" >>"$tmp/cpu.$th.$mode"
			awk -v a="${qps[$mode]}" -v b="${qps[none]}" 'BEGIN { printf "%.5f\n", a / b }' >>"$tmp/ratio.$th.$mode"
			awk -v a="${cpu[$mode]}" -v b="${cpu[none]}" 'BEGIN { printf "%.5f\n", a / b }' >>"$tmp/cratio.$th.$mode"
		done
		echo "$line"
		unset qps cpu waited
	done
done

echo
printf '%-8s %-11s %11s %11s %15s %12s %13s %15s\n' threads mode "median QPS" "QPS / none" "(min..max)" "CPU us/q" "CPU/q / none" "(min..max)"
for th in $threads_list; do
	for mode in "${modes[@]}"; do
		printf '%-8s %-11s %11.0f %11.3f %15s %12.2f %13.3f %15s\n' "$th" "$mode" \
			"$(median <"$tmp/qps.$th.$mode")" "$(median <"$tmp/ratio.$th.$mode")" "$(span <"$tmp/ratio.$th.$mode")" \
			"$(median <"$tmp/cpu.$th.$mode")" "$(median <"$tmp/cratio.$th.$mode")" "$(span <"$tmp/cratio.$th.$mode")"
	done
done
echo "(X / none: the median over rounds of the mode's value divided by the same round's value with nothing attached; min..max over rounds)"
echo "bench-overhead: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
