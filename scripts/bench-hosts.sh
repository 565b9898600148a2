#!/usr/bin/env bash
# Times how long perfbench takes to make test servers ready to run (connect
# over ssh, copy perfbench, run perfbench doctor there), for 1 host and for
# 3 hosts at once, on test hosts made on this machine (scripts/testhosts.sh):
# ROUNDS interleaved rounds of
#   perfbench hosts check ONE.toml     (h1)
#   perfbench hosts check THREE.toml   (h1 h2 h3)
# each once with a fresh copy (the hosts' perfbench folders removed first)
# and once with perfbench there already. Prints every run (the command's wall
# time, the CPU time the whole machine spent meanwhile, from /proc/stat, and
# each host's "ready in"), then the medians and the 3-to-1 ratios. The test
# hosts run on this machine's CPUs: their sshd, copy and doctor compete with
# the controller, which separate servers would not.
# Run as root. Environment: ROUNDS (default 5), PERFBENCH (a binary to use
# instead of building one).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}

tmp=$(mktemp -d)
hosts=
cleanup() {
	[ -z "$hosts" ] || scripts/testhosts.sh down "$hosts" >/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ -n "${PERFBENCH:-}" ]; then
	cp "$PERFBENCH" "$tmp/perfbench"
else
	go build -o "$tmp/perfbench" ./cmd/perfbench
fi
hosts=$(scripts/testhosts.sh up 3 "$tmp/hosts")
awk '/^\[\[host\]\]/ { n++ } n == 1' "$hosts/hosts.toml" >"$tmp/one.toml"
cp "$hosts/hosts.toml" "$tmp/three.toml"

# busy: CPU seconds the machine has spent (user, nice, system, irq, softirq).
busy() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { print ($2 + $3 + $4 + $7 + $8) / hz }' /proc/stat; }

# run KIND FILE COPY: one timed check; prints "KIND COPY WALL CPU READY..."
run() {
	local kind=$1 file=$2 copy=$3 start end cpu0 cpu1
	if [ "$copy" = fresh ]; then rm -rf "$hosts"/h*/home/perfbench; fi
	cpu0=$(busy)
	start=$(date +%s.%N)
	"$tmp/perfbench" hosts check "$file" >"$tmp/out"
	end=$(date +%s.%N)
	cpu1=$(busy)
	printf '%-7s %-6s %6.2f %6.2f   %s\n' "$kind" "$copy" "$(echo "$end - $start" | bc)" "$(echo "$cpu1 - $cpu0" | bc)" \
		"$(sed -n 's/.*ready in \([0-9.]*\) s.*/\1/p' "$tmp/out" | tr '\n' ' ')"
}

echo "hosts   copy     wall    cpu   each host ready in (s)"
for _ in $(seq "$rounds"); do
	for copy in fresh there; do
		run 1-host "$tmp/one.toml" "$copy"
		run 3-hosts "$tmp/three.toml" "$copy"
	done
done | tee "$tmp/runs"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for copy in fresh there; do
	for col in 3 4; do
		one=$(awk -v c="$copy" -v k="$col" '$1 == "1-host" && $2 == c { print $k }' "$tmp/runs" | median)
		three=$(awk -v c="$copy" -v k="$col" '$1 == "3-hosts" && $2 == c { print $k }' "$tmp/runs" | median)
		printf 'median %s, %s: 1 host %.2f s, 3 hosts %.2f s, ratio %.2f\n' \
			"$([ "$col" = 3 ] && echo "wall" || echo "machine CPU")" \
			"$([ "$copy" = fresh ] && echo "perfbench copied" || echo "perfbench there already")" \
			"$one" "$three" "$(echo "$three / $one" | bc -l)"
	done
done
