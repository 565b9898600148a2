#!/usr/bin/env bash
# Runs every perfbench test on this machine, installing what the tests need
# first. Integration tests (real MariaDB, sysbench, perf) run rather than skip:
# PERFBENCH_REQUIRE_INTEGRATION=1 (the default here; set it to 0 to allow
# skips) turns every skip into a failure, and the run fails when any test was
# skipped. Arguments are passed to go test (scripts/test.sh -run TestStat).
# The output is go test's, followed by the skipped tests and their reasons
# ("skipped: N"), then the reports of scripts/exports, scripts/funclen,
# scripts/layout and scripts/docnames.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export PERFBENCH_REQUIRE_INTEGRATION=${PERFBENCH_REQUIRE_INTEGRATION:-1}
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on: $unformatted" >&2
	exit 1
fi
go vet ./...
# perfbench measures on Linux, but reports and imports are read anywhere:
# every package builds for the other systems and architectures too.
for target in darwin/arm64 windows/amd64 linux/arm64; do
	GOOS=${target%/*} GOARCH=${target#*/} go build ./... || { echo "perfbench does not build for $target" >&2; exit 1; }
done
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin" ./scripts/testsum ./scripts/exports ./scripts/funclen ./scripts/layout ./scripts/docnames
# testsum prints what go test would, the skip count, and fails the run on a
# failure (or a skip, when integration tests are required).
go test -json -count=1 "$@" ./... | "$bin/testsum"
# An exported name no other package uses (outside the public record
# package; go run ./scripts/unexport -w unexports them), a function over 120
# lines, a package missing from the README's layout table or a doc comment
# naming an identifier that does not exist fails the run.
"$bin/exports" -fail
"$bin/funclen" -fail
"$bin/layout" -fail
"$bin/docnames" -fail
