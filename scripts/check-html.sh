#!/usr/bin/env bash
# Opens a perfbench HTML report in a headless browser and takes a screenshot,
# to check that the page renders (it is self-contained: no scripts, no
# external resources).
#
#   scripts/check-html.sh OUTDIR [SCREENSHOT.png]
#
# OUTDIR is a `perfbench demo` output folder (its report.html is opened) or an
# HTML file. The screenshot goes to OUTDIR/report.png unless given. Chromium
# (Debian's chromium package) is installed when missing and running as root.
# Fails when the browser fails or the screenshot is missing or blank.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 OUTDIR|REPORT.html [SCREENSHOT.png]" >&2
	exit 2
fi
html=$1
[ -d "$html" ] && html=$html/report.html
if [ ! -f "$html" ]; then
	echo "check-html: no $html" >&2
	exit 1
fi
html=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
png=${2:-$(dirname "$html")/report.png}

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "check-html: no chromium; install it as root: apt-get install -y chromium" >&2
		exit 1
	fi
	echo "check-html: installing chromium: apt-get install -y --no-install-recommends chromium" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
	browser=$(command -v chromium)
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -f "$png"
# --no-sandbox: Chromium refuses to run as root with its sandbox.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
	--disable-background-networking --disable-component-update --disable-sync \
	--no-first-run --user-data-dir="$profile" \
	--window-size=1400,2000 --screenshot="$png" "file://$html" >"$profile/browser.log" 2>&1 || {
	echo "check-html: $browser failed; its output:" >&2
	tail -20 "$profile/browser.log" >&2
	exit 1
}
if [ ! -s "$png" ]; then
	echo "check-html: $browser wrote no screenshot; its output:" >&2
	tail -20 "$profile/browser.log" >&2
	exit 1
fi
# A page that did not render is one colour: its PNG compresses to almost
# nothing. A page of tables is tens of KB at this size.
size=$(stat -c %s "$png")
if [ "$size" -lt 20000 ]; then
	echo "check-html: the screenshot $png is $size bytes: the page looks blank" >&2
	exit 1
fi
echo "check-html: $html renders; screenshot in $png ($size bytes)"
