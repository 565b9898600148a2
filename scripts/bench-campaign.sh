#!/usr/bin/env bash
# How perfbench report scales to a real campaign: a generated campaign of
# 42 steps × 10 versions × 4 hosts × 5 repeats = 8,400 Records of about
# 37 KB each, as perfbench run writes them (internal/report/internal/campaign), and
# in the same run, on the same files from the page cache:
#   floor      reading every file's bytes (Python, open and read)
#   python     Python's json.load of every file, one after the other
#   text       perfbench report DIR --format text (every table)
#   summary    perfbench report DIR --tables summary
# Each line gives the wall time and the peak resident memory (GNU time);
# the last lines each perfbench time as a ratio of python's (the goals:
# text at most 0.5, summary at most 0.25).
# Usage: scripts/bench-campaign.sh [DIR]; DIR is kept when given (made
# when missing), else a temporary folder is made and removed.
# Environment: PERFBENCH (a perfbench binary; default: built from the tree).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=${1:-$tmp/campaign}
if [ ! -d "$dir" ]; then
	go run ./internal/report/internal/campaign/gencampaign "$dir"
fi
pb=${PERFBENCH:-}
if [ -z "$pb" ]; then
	pb=$tmp/perfbench
	go build -o "$pb" ./cmd/perfbench
fi
files=$(find "$dir" -name '*.json' | wc -l)
mb=$(du -sm "$dir" | cut -f1)
echo "campaign: $files Records, $mb MB in $dir"
# Warm the page cache, so every line reads the same cached files.
find "$dir" -name '*.json' -print0 | xargs -0 cat >/dev/null

declare -A wall
measure() {
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "$name failed:" >&2
		cat "$tmp/err" >&2
		exit 1
	}
	read -r secs kb <"$tmp/time"
	wall[$name]=$secs
	printf '%-8s %6.2f s %6d MB peak RSS  %s\n' "$name" "$secs" $((kb / 1024)) "$(wc -l <"$tmp/out") lines out"
}

# Both Python lines walk the folder alike; floor reads the bytes, python
# decodes them as well.
py='
import json, os, sys
n = 0
for root, _, names in os.walk(sys.argv[2]):
    for name in names:
        if name.endswith(".json"):
            with open(os.path.join(root, name), "rb") as f:
                if sys.argv[1] == "json":
                    json.load(f)
                else:
                    f.read()
            n += 1
print(n)
'
measure floor python3 -c "$py" bytes "$dir"
measure python python3 -c "$py" json "$dir"
measure text "$pb" report "$dir" --format text
# (grep -q would end the pipe early, and pipefail fail the test.)
help=$("$pb" report --help 2>&1 || true)
if [[ $help == *summary* ]]; then
	measure summary "$pb" report "$dir" --tables summary
fi
for name in text summary; do
	if [ -n "${wall[$name]:-}" ]; then
		awk -v n="$name" -v a="${wall[$name]}" -v b="${wall[python]}" 'BEGIN { printf "%s/python %.2f\n", n, a / b }'
	fi
done
