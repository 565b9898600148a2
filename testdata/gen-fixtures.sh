#!/usr/bin/env bash
# Regenerates the perf stat and sysbench fixtures under testdata/perfstat/ and
# testdata/sysbench/ (and the sample tree under testdata/import-dir/) with the
# real tools of this machine: perf 6.1 (Debian linux-perf) and sysbench 1.0.20,
# against a throwaway MariaDB started in a temporary folder.
#
#   testdata/gen-fixtures.sh          # as root, from the repository root
#
# The values in the committed files differ on every run: tests read the values
# typed from the committed files, so after regenerating, update the expected
# values in perfstat/, sysbench/ and importer/ tests by hand (see the README of
# each fixture folder). Hand-made fixtures (multiplexed "(xx.xx%)" output, which
# needs a hardware PMU) are not touched by this script.
set -euo pipefail
cd "$(dirname "$0")/.."
for b in perf sysbench mariadbd mariadb-install-db mariadb mariadb-admin localedef; do
	command -v $b >/dev/null || { echo "missing $b: apt-get install linux-perf sysbench mariadb-server mariadb-client" >&2; exit 1; }
done

PS=testdata/perfstat
SBD=testdata/sysbench
DIRD=testdata/import-dir
mkdir -p $PS $SBD

D=$(mktemp -d)
SOCK=$D/mysqld.sock
PORT=${PORT:-33391}
cleanup() {
	mariadb-admin --no-defaults -uroot --socket=$SOCK shutdown >/dev/null 2>&1 || true
	[ -n "${LOADPID:-}" ] && kill $LOADPID 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT

mariadb-install-db --no-defaults --datadir=$D/data --user=root \
	--auth-root-authentication-method=normal --skip-test-db >$D/install.log 2>&1
mariadbd --no-defaults --datadir=$D/data --socket=$SOCK --port=$PORT --bind-address=127.0.0.1 \
	--user=root --pid-file=$D/mariadbd.pid --log-error=$D/error.log --skip-name-resolve \
	--innodb-buffer-pool-size=128M --max-connections=100 >/dev/null 2>&1 &
until mariadb-admin --no-defaults -uroot --socket=$SOCK ping >/dev/null 2>&1; do sleep 0.05; done
mariadb --no-defaults -uroot --socket=$SOCK -e "CREATE DATABASE sbtest;
  CREATE USER sbtest@'%' IDENTIFIED BY 'sbtest'; GRANT ALL ON sbtest.* TO sbtest@'%';"
PID=$(cat $D/mariadbd.pid)
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=sbtest
  --mysql-password=sbtest --mysql-db=sbtest --tables=1 --table_size=10000"
$SB oltp_read_write prepare >/dev/null

# --- sysbench 1.0.20 reports ---
$SB --threads=2 --time=3 --report-interval=1 --histogram oltp_read_write run >$SBD/oltp_read_write.t2.histogram.txt
$SB --threads=1 --time=2 --report-interval=1 --percentile=99 oltp_point_select run >$SBD/oltp_point_select.t1.p99.txt
$SB --threads=1 --time=2 --percentile=0 oltp_read_only run >$SBD/oltp_read_only.t1.nopct.txt
# A Lua script of the project's kind that prints its own lines around the run.
cat >$D/noisy.lua <<'EOF2'
function thread_init()
	print("noisy: thread " .. sysbench.tid .. " ready")
	drv = sysbench.sql.driver()
	con = drv:connect()
end
function event()
	con:query("SELECT c FROM sbtest1 WHERE id=" .. sysbench.rand.uniform(1, 10000))
end
function thread_done()
	print("noisy: thread " .. sysbench.tid .. " done")
	con:disconnect()
end
EOF2
(cd $D && $SB --threads=2 --time=2 --report-interval=1 ./noisy.lua run) >$SBD/lua-extra-lines.txt
# A Lua script that fails in thread_init (exit status 1, no report).
cat >$D/broken.lua <<'EOF2'
function thread_init() print("broken: thread " .. sysbench.tid); local x = nil; x.y = 1 end
function event() end
EOF2
(cd $D && $SB --threads=2 --time=2 ./broken.lua run) >$SBD/lua-fatal.txt 2>&1 || true
# Interrupted: SIGTERM after 2.5 s of a 20 s run (sysbench prints no final
# report; a background job of a script ignores SIGINT, so TERM stands in for
# Ctrl-C here).
$SB --threads=2 --time=20 --report-interval=1 oltp_point_select run >$SBD/interrupted.txt &
SBPID=$!
sleep 2.5
kill -TERM $SBPID
wait $SBPID || true

# --- perf stat on the server under load ---
$SB --threads=2 --time=300 oltp_point_select run >/dev/null &
LOADPID=$!
sleep 1
E=task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions
PERF="perf stat -p $PID"
$PERF -e $E,duration_time -- sleep 1 2>$PS/default.txt
$PERF -x, -e $E,duration_time -- sleep 1 2>$PS/csv.txt
$PERF -x, --per-thread -e task-clock,context-switches,cycles -- sleep 1 2>$PS/csv-per-thread.txt
$PERF --per-thread -e task-clock,context-switches,cycles -- sleep 1 2>$PS/per-thread.txt
$PERF -I 1000 -e $E -- sleep 3 2>$PS/interval.txt
$PERF -I 1000 -x, -e $E -- sleep 3 2>$PS/interval-csv.txt
$PERF -j -e $E -- sleep 1 2>$PS/json.txt
$PERF -I 1000 -j -e $E -- sleep 2 2>$PS/interval-json.txt
rm -f $PS/append3.txt $PS/append3-csv.txt
for i in 1 2 3; do
	$PERF -o $PS/append3.txt --append -e $E -- sleep 1
done
for i in 1 2 3; do
	$PERF -o $PS/append3-csv.txt --append -x, -e $E -- sleep 1
done
perf stat -r 3 -e $E -- sleep 0.2 2>$PS/repeat.txt
perf stat -r 3 -x, -e $E -- sleep 0.2 2>$PS/repeat-csv.txt
perf stat -a -A -x, -e task-clock,context-switches,cycles -- sleep 1 2>$PS/per-cpu-csv.txt
# Runs whose events differ, appended to one file.
rm -f $PS/append-events-differ.txt
$PERF -o $PS/append-events-differ.txt --append -e task-clock,context-switches -- sleep 1
$PERF -o $PS/append-events-differ.txt --append -e task-clock,page-faults -- sleep 1
# Locale grouping and decimal separators: real locales compiled into a
# temporary folder (the machine has only C installed).
mkdir -p $D/loc
localedef -i de_DE -f UTF-8 $D/loc/de_DE.UTF-8 >/dev/null 2>&1 || true
localedef -i en_US -f UTF-8 $D/loc/en_US.UTF-8 >/dev/null 2>&1 || true
LOCPATH=$D/loc LC_ALL=de_DE.UTF-8 $PERF -e $E,duration_time -- sleep 1 2>$PS/locale-de_DE.txt
LOCPATH=$D/loc LC_ALL=en_US.UTF-8 $PERF -e $E,duration_time -- sleep 1 2>$PS/locale-en_US.txt
LOCPATH=$D/loc LC_ALL=de_DE.UTF-8 $PERF -x';' -e $E -- sleep 1 2>$PS/locale-de_DE-csv.txt

kill $LOADPID
wait $LOADPID 2>/dev/null || true
LOADPID=

# --- a results folder in the naming scheme of the legacy scripts ---
# Two "versions" (the same server measured twice), one step, perf stat
# windows appended per sample, and the step's sysbench output.
rm -rf $DIRD
for v in base new; do
	mkdir -p $DIRD/$v
	$SB --threads=1 --time=3 oltp_point_select run >$DIRD/$v/sb.o.point-query.range100.pk1 &
	S=$!
	sleep 0.5
	for sample in 1 2; do
		$PERF -o $DIRD/$v/sb.perf.hw.point-query.range100.pk1.$sample -e $E -- sleep 1
	done
	wait $S
done

echo "fixtures written; update the typed expectations in the tests" >&2
