#!/usr/bin/env bash
# What perfbench stat's per-interval reads cost the measured server, the
# figure behind the floor on --interval: on an idle sandbox MariaDB, ROUNDS
# runs each of
#   perfbench stat -e task-clock --duration D                  (no intervals)
#   perfbench stat -e task-clock --duration D --interval 1s
#   perfbench stat -e task-clock --duration D --interval 100ms (the floor)
# and prints the server's CPU time in each window (its task-clock), the
# server CPU each interval's reads cost (SHOW GLOBAL STATUS above all: the
# difference between the 100ms and 1s runs over the difference in points),
# and what that cost is per second of window at the floor. Run as root.
# Environment: ROUNDS (default 3), DURATION (default 4s).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
duration=${DURATION:-4s}
for tool in mariadbd mariadb-install-db mariadb-admin python3; do
	command -v "$tool" >/dev/null || {
		echo "bench-interval: $tool is not installed: apt-get install mariadb-server mariadb-client python3" >&2
		exit 1
	}
done
tmp=$(mktemp -d)
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

sock=$tmp/mysqld.sock
mariadb-install-db --no-defaults --datadir="$tmp/data" --user=root \
	--auth-root-authentication-method=normal --skip-test-db >"$tmp/install.log" 2>&1
mariadbd --no-defaults --datadir="$tmp/data" --socket="$sock" --skip-networking --user=root \
	--pid-file="$tmp/mariadbd.pid" --log-error="$tmp/error.log" --innodb-buffer-pool-size=128M >/dev/null 2>&1 &
spid=$!
for _ in $(seq 300); do
	mariadb-admin --no-defaults -uroot --socket="$sock" ping >/dev/null 2>&1 && break
	sleep 0.1
done
printf '[client]\nuser=root\nsocket=%s\n' "$sock" >"$tmp/my.cnf"

# run INTERVAL: prints "points server-CPU-ms"
run() {
	local args=()
	[ "$1" != none ] && args=(--interval "$1")
	"$tmp/perfbench" stat --defaults-file "$tmp/my.cnf" --socket "$sock" -e task-clock \
		--duration "$duration" "${args[@]}" --format json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
c = [c for c in r["counters"] if c["event"] == "task-clock"][0]
print(len(r.get("series") or []), c.get("value", 0) / 1e6)'
}

echo "bench-interval: MariaDB $(mariadbd --version | awk '{print $3}'), idle, $rounds rounds of $duration per mode"
printf '%-8s %-10s %8s %18s\n' round interval points "server CPU ms"
declare -a per_read
for round in $(seq "$rounds"); do
	declare -A pts cpu
	for iv in none 1s 100ms; do
		read -r p c < <(run "$iv")
		pts[$iv]=$p
		cpu[$iv]=$c
		printf '%-8s %-10s %8s %18.2f\n' "$round" "$iv" "$p" "$c"
	done
	per_read+=("$(python3 -c "print((${cpu[100ms]} - ${cpu[1s]}) / (${pts[100ms]} - ${pts[1s]}))")")
done
python3 - "${per_read[@]}" <<'EOF'
import statistics, sys
v = sorted(float(x) for x in sys.argv[1:])
m = statistics.median(v)
print(f"server CPU per interval's reads: median {m:.2f} ms ({v[0]:.2f}..{v[-1]:.2f})")
print(f"at --interval 100ms: {m * 10:.1f} ms of server CPU per second ({m:.1f}% of one CPU); at 10ms it would be {m * 100:.0f} ms/s")
EOF
