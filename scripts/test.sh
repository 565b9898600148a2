#!/usr/bin/env bash
# Runs every perfbench test on this machine, installing what the tests need
# first. Integration tests (real MariaDB, sysbench, perf) run rather than skip:
# PERFBENCH_REQUIRE_INTEGRATION=1 turns a missing binary into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export PERFBENCH_REQUIRE_INTEGRATION=1
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on: $unformatted" >&2
	exit 1
fi
go vet ./...
go test -count=1 ./...
