#!/usr/bin/env bash
# The A/A spread of the three ways perfbench compares versions, measured side
# by side in one run: examples/plans/aa.toml (one build under the labels a
# and a2; point-query and read-only_range=100 at 1 and 2 client threads; 4
# repeats of 5 s) under compare = "windows", "slices" and "auto" (duet where
# every version can have CPUs of its own, slices elsewhere), one after the
# other, ROUNDS times; then the same with a busy loop pinned to CPU 0 for the
# whole run (BUSY=0 leaves that half out, BUSY=only runs it alone). For every
# run it prints each cell's A/A rQPS (a2 against a), its 95% interval, the
# pairs, the ratio of every repeat and their coefficient of variation
# (scripts/aaspread). Run as root; about 4 to 5 minutes a run.
#
#   scripts/bench-compare.sh OUT [ROUNDS]
#
# PERFBENCH names a perfbench binary to use (default: built from the tree).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/bench-compare.sh OUT [ROUNDS]}
rounds=${2:-1}
busy=${BUSY:-1}
mkdir -p "$out"
tmp=$(mktemp -d)
loop=
cleanup() {
	[ -n "$loop" ] && kill "$loop" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "${PERFBENCH:-}" ]; then
	cp "$PERFBENCH" "$tmp/perfbench"
else
	go build -o "$tmp/perfbench" ./cmd/perfbench
fi
go build -o "$tmp/aaspread" ./scripts/aaspread

# plan MODE: aa.toml with compare = MODE.
plan() {
	sed "s/^\[run\]$/[run]\ncompare = \"$1\"/" examples/plans/aa.toml >"$tmp/aa-$1.toml"
	echo "$tmp/aa-$1.toml"
}

# one CONDITION: every mode once per round, each into a folder of its own.
one() {
	local cond=$1
	for r in $(seq 1 "$rounds"); do
		for mode in windows slices auto; do
			dir="$out/$cond-$mode-$r"
			rm -rf "$dir"
			start=$(date +%s)
			if ! "$tmp/perfbench" run "$(plan "$mode")" --out "$dir" >"$dir.log" 2>&1; then
				echo "bench-compare: $cond $mode round $r: perfbench run failed (see $dir.log)" >&2
			fi
			echo "== $cond, compare = $mode, round $r ($(($(date +%s) - start)) s; $(grep -o '[0-9]* ok, [0-9]* failed, [0-9]* partial' "$dir.log" | tail -1))"
			"$tmp/aaspread" -base a -other a2 "$dir/records"
		done
	done
}

if [ "$busy" != only ]; then
	one quiet
fi
if [ "$busy" != 0 ]; then
	taskset -c 0 sh -c 'while :; do :; done' &
	loop=$!
	one busy
fi
