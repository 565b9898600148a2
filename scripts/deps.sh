#!/usr/bin/env bash
# Installs the Debian packages perfbench's tests and demo use, when missing:
# linux-perf (the reference peer), mariadb-server and mariadb-client (real
# servers started in temporary folders), mariadb-plugin-rocksdb (MyRocks, for
# plans and tests with engine = "rocksdb"), sysbench (the load), gcc, g++ and
# binutils (small programs the symbol tests build and read), strace (the
# counting engine's race tests delay perf_event_open with its fault
# injection), openssh-client and openssh-server (the remote layer talks to
# test hosts with the system's ssh; tests run one sshd per network namespace,
# started by the test itself, never the system's service).
set -euo pipefail
need=()
command -v perf >/dev/null 2>&1 || need+=(linux-perf)
command -v mariadbd >/dev/null 2>&1 || need+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
[ -e /usr/lib/mysql/plugin/ha_rocksdb.so ] || need+=(mariadb-plugin-rocksdb)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v readelf >/dev/null 2>&1 || need+=(binutils)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "perfbench: missing ${need[*]}; install them as root: apt-get install ${need[*]}" >&2
	exit 1
fi
echo "installing ${need[*]} ..." >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
