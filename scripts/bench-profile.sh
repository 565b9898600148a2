#!/usr/bin/env bash
# What sampling costs the measured server: sysbench oltp_point_select QPS on a
# sandbox MariaDB with
#   none       nothing attached
#   pb-F       perfbench profile --pid PID --freq F (call stacks, CPU-wide
#              per-CPU ring buffers, kept by pid), then naming the frames
#              and writing the pprof file after the run
#   perf-F     perf record -F F -g -p PID (perf's per-thread, per-CPU events)
# for F in FREQS. The modes run interleaved: ROUNDS rounds, each running every
# mode once in a rotating order, TIME seconds of sysbench each, all against the
# same server in one run of this script. It prints every round, then for each
# mode the median QPS and the median over rounds of its QPS divided by the same
# round's unattached QPS, perfbench and perf side by side. Throughput drifts a
# lot on a shared or virtual machine, so it also prints what drifts much less:
# the CPU time the server and sysbench spent per query (from /proc and
# /usr/bin/time; the kernel charges the cost of taking a sample to the task it
# interrupts) divided by the same round's, and the sampler's own CPU time per
# second of sampling. Run as root.
# Environment: ROUNDS (default 5), TIME (default 8), THREADS (default 2),
# FREQS (default "99 999").
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
secs=${TIME:-8}
threads=${THREADS:-2}
freqs=${FREQS:-99 999}
modes=(none)
for f in $freqs; do modes+=("pb-$f" "perf-$f"); done

for tool in perf sysbench mariadbd mariadb-install-db /usr/bin/time; do
	command -v "$tool" >/dev/null || {
		echo "bench-profile: $tool is not installed: apt-get install linux-perf sysbench mariadb-server" >&2
		exit 1
	}
done
tmp=$(mktemp -d /tmp/pb-profile.XXXXXX)
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
sb=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=sbtest
	--mysql-password=sbtest --mysql-db=sbtest --tables=1 --table_size=100000)
"${sb[@]}" oltp_read_write prepare >/dev/null
"${sb[@]}" oltp_point_select --threads="$threads" --time=5 run >/dev/null # warm the buffer pool

# cpu PID: user+system CPU time of a process, in clock ticks.
cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
tick=$(getconf CLK_TCK)

# run MODE: one sysbench run with MODE attached; prints its QPS, the server's
# and sysbench's CPU µs per query, and the sampler's CPU ms per second.
run() {
	local mode=$1 cpid=
	local span=$((secs + 2))
	case $mode in
	pb-*)
		/usr/bin/time -f '%U %S' -o "$tmp/sampler.cpu" "$tmp/perfbench" profile --pid "$spid" \
			--freq "${mode#pb-}" --duration "${span}s" --output "$tmp/profile.pb.gz" >/dev/null 2>"$tmp/sampler.txt" &
		cpid=$!
		;;
	perf-*)
		/usr/bin/time -f '%U %S' -o "$tmp/sampler.cpu" perf record -q -F "${mode#perf-}" -g -p "$spid" \
			-o "$tmp/perf.data" -- sleep "$span" >/dev/null 2>"$tmp/sampler.txt" &
		cpid=$!
		;;
	esac
	[ -n "$cpid" ] && sleep 1 # sampling before the load starts
	local c0 c1
	c0=$(cpu "$spid")
	/usr/bin/time -f '%U %S' -o "$tmp/client.cpu" \
		"${sb[@]}" oltp_point_select --threads="$threads" --time="$secs" --events=0 run >"$tmp/sb.txt"
	c1=$(cpu "$spid")
	local sampler=0
	if [ -n "$cpid" ]; then
		if ! wait "$cpid"; then
			echo "bench-profile: $mode failed:" >&2
			cat "$tmp/sampler.txt" >&2
			exit 1
		fi
		sampler=$(awk -v s="$span" '{ printf "%.2f", ($1 + $2) * 1000 / s }' "$tmp/sampler.cpu")
	fi
	local q
	q=$(awk '/^ *queries:/ { print $2; exit }' "$tmp/sb.txt")
	awk -v q="$q" -v s="$secs" -v c0="$c0" -v c1="$c1" -v t="$tick" -v sampler="$sampler" -v client="$(cat "$tmp/client.cpu")" 'BEGIN {
		split(client, c, " ")
		printf "%.0f %.3f %.3f %s\n", q / s, (c1 - c0) / t * 1e6 / q, (c[1] + c[2]) * 1e6 / q, sampler
	}'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-profile: MariaDB $(mariadbd --version | awk '{print $3}'), $(nproc) CPUs, $threads sysbench threads, $rounds rounds of ${secs}s per mode"
for r in $(seq "$rounds"); do
	line="round=$r"
	declare -A res=()
	for i in "${!modes[@]}"; do
		mode=${modes[$(((i + r) % ${#modes[@]}))]}
		res[$mode]=$(run "$mode")
	done
	read -r nq ns nc _ <<<"${res[none]}"
	for mode in "${modes[@]}"; do
		read -r q s c sampler <<<"${res[$mode]}"
		line+=$(printf '  %s %.0f' "$mode" "$q")
		echo "$q" >>"$tmp/qps.$mode"
		awk -v a="$q" -v b="$nq" 'BEGIN { printf "%.5f\n", a / b }' >>"$tmp/ratio.$mode"
		awk -v a="$s" -v b="$c" -v na="$ns" -v nb="$nc" 'BEGIN { printf "%.5f\n", (a + b) / (na + nb) }' >>"$tmp/cpu.$mode"
		echo "$sampler" >>"$tmp/sampler.$mode"
	done
	echo "$line"
	unset res
done

echo
printf '%-6s %12s %12s %10s %10s %12s %12s %12s %12s\n' freq "pb QPS" "perf QPS" "pb QPS/" "perf QPS/" "pb CPU/q" "perf CPU/q" "pb own CPU" "perf own CPU"
printf '%-6s %12s %12s %10s %10s %12s %12s %12s %12s\n' "" median median none none "/ none" "/ none" "ms/s" "ms/s"
printf '%-6s %12.0f\n' none "$(median <"$tmp/qps.none")"
for f in $freqs; do
	printf '%-6s %12.0f %12.0f %10.3f %10.3f %12.3f %12.3f %12.1f %12.1f\n' "$f" \
		"$(median <"$tmp/qps.pb-$f")" "$(median <"$tmp/qps.perf-$f")" \
		"$(median <"$tmp/ratio.pb-$f")" "$(median <"$tmp/ratio.perf-$f")" \
		"$(median <"$tmp/cpu.pb-$f")" "$(median <"$tmp/cpu.perf-$f")" \
		"$(median <"$tmp/sampler.pb-$f")" "$(median <"$tmp/sampler.perf-$f")"
done
echo "(QPS / none: median over rounds of the mode's QPS divided by the same round's QPS with nothing attached;"
echo " CPU/q / none: the same for the server's plus sysbench's CPU time per query; own CPU: the sampler's"
echo " user+system CPU per second of sampling, including perfbench naming frames and writing the profile)"
