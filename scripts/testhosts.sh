#!/usr/bin/env bash
# Test hosts on this machine for perfbench's remote layer: each host is a
# network namespace joined to the root namespace by a veth pair (private
# addresses in 10.213.0.0/16, nothing leaves the machine), with its own
# OpenSSH server on port 22, its own host key, its own host name (UTS
# namespace) and its own working directory. The namespaces share everything
# else with this machine: the filesystem (but for the login user's home
# folder: each host has its own), the process IDs, the users, the installed
# programs.
#
#   scripts/testhosts.sh up N [DIR]   create hosts h1..hN (N <= 63); state in DIR
#                                     (default: a new temporary directory); prints DIR
#   scripts/testhosts.sh down DIR     kill every process in the hosts' namespaces,
#                                     delete the namespaces and veths, remove DIR
#                                     when up created it
#   scripts/testhosts.sh stop DIR NAME    stop host NAME's sshd (open sessions stay)
#   scripts/testhosts.sh start DIR NAME   start it again
#
# DIR holds:
#   hosts.toml      a perfbench hosts file for all hosts (with the client key
#                   and the known_hosts file below)
#   hosts.txt       one line per host: name namespace address home
#   client_key      the client's key (authorized on every host)
#   known_hosts     every host's key
#   hN/             host N: sshd_config, host key, sshd.pid, sshd.log, home/ (what
#                   the login user's home folder is on that host)
#
# Run as root; needs ip (iproute2), sshd and ssh-keygen (openssh-server,
# openssh-client) and unshare (util-linux). Several sets can exist at once
# (concurrent test binaries): each takes a free 10.213.K.0/24 under a lock.
set -euo pipefail

die() { echo "testhosts: $*" >&2; exit 1; }
sshd=/usr/sbin/sshd

need_tools() {
	[ "$(id -u)" = 0 ] || die "run as root (network namespaces need it)"
	command -v ip >/dev/null || die "ip not found; install it: apt-get install iproute2"
	[ -x "$sshd" ] || die "$sshd not found; install it: apt-get install openssh-server"
	command -v ssh-keygen >/dev/null || die "ssh-keygen not found; install it: apt-get install openssh-client"
	command -v unshare >/dev/null || die "unshare not found; install it: apt-get install util-linux"
}

# hosts DIR: prints "name namespace address workdir" per host.
hosts() { cat "$1/hosts.txt"; }

start_sshd() { # DIR NAME NS
	local dir=$1 name=$2 ns=$3
	rm -f "$dir/$name/sshd.pid"
	# A UTS namespace for the host's own name, a mount namespace for its own
	# home folder (the login user's, bind-mounted from DIR/NAME/home: its own
	# authorized_keys, shell startup files and default perfbench folder).
	# sshd binds its address, then daemonizes: listening when this returns.
	ip netns exec "$ns" unshare --uts --mount --propagation private sh -c \
		'hostname "$1" && mount --bind "$2" "$3" && exec "$4" -f "$5" -E "$6"' \
		sh "$name" "$dir/$name/home" "$(getent passwd "$(id -un)" | cut -d: -f6)" \
		"$sshd" "$dir/$name/sshd_config" "$dir/$name/sshd.log"
}

stop_sshd() { # DIR NAME
	local pidfile=$1/$2/sshd.pid i
	for i in $(seq 50); do [ -s "$pidfile" ] && break; sleep 0.02; done
	[ -s "$pidfile" ] || die "host $2: no sshd pid file $pidfile"
	kill "$(cat "$pidfile")" 2>/dev/null || true
	rm -f "$pidfile"
}

up() {
	local n=$1 dir=${2:-} owned=0 k i name ns vr vn base
	[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 63 ] || die "up: N must be 1 to 63, not $n"
	need_tools
	if [ -z "$dir" ]; then
		dir=$(mktemp -d /tmp/pbhosts.XXXXXX)
		owned=1
	fi
	mkdir -p "$dir" /run/sshd
	dir=$(cd "$dir" && pwd)

	# Take a free /24 and create the namespaces under the lock, so that a
	# concurrent up sees them.
	exec 9>/tmp/pb-testhosts.lock
	flock 9
	k=
	for i in $(seq 0 255); do
		if ! ip netns list | grep -q "^pbt${i}h"; then k=$i; break; fi
	done
	[ -n "$k" ] || die "no free set: 256 sets of test hosts exist (ip netns list)"
	printf 'set=%s\nn=%s\nowned=%s\n' "$k" "$n" "$owned" >"$dir/state"
	trap 'down "$dir" >/dev/null 2>&1 || true' ERR
	for i in $(seq "$n"); do
		ip netns add "pbt${k}h${i}"
	done
	flock -u 9
	exec 9>&-

	ssh-keygen -q -t ed25519 -N '' -C "perfbench test client" -f "$dir/client_key"
	: >"$dir/known_hosts"
	: >"$dir/hosts.txt"
	echo "# perfbench test hosts (scripts/testhosts.sh); remove with: scripts/testhosts.sh down $dir" >"$dir/hosts.toml"
	for i in $(seq "$n"); do
		name=h$i ns=pbt${k}h${i} vr=pbt${k}h${i} vn=pbt${k}h${i}n
		base=$(( (i - 1) * 4 ))
		local root_addr=10.213.$k.$((base + 1)) addr=10.213.$k.$((base + 2))
		ip link add "$vr" type veth peer name "$vn"
		ip link set "$vn" netns "$ns"
		ip -n "$ns" link set "$vn" name eth0
		ip addr add "$root_addr/30" dev "$vr"
		ip link set "$vr" up
		ip -n "$ns" addr add "$addr/30" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up

		mkdir -p "$dir/$name/home/.ssh"
		chmod 700 "$dir/$name/home"
		cp "$dir/client_key.pub" "$dir/$name/home/.ssh/authorized_keys"
		ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$dir/$name/ssh_host_ed25519_key"
		cat >"$dir/$name/sshd_config" <<-EOF
			Port 22
			ListenAddress $addr
			HostKey $dir/$name/ssh_host_ed25519_key
			PidFile $dir/$name/sshd.pid
			PermitRootLogin prohibit-password
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			UsePAM no
			PrintMotd no
			PrintLastLog no
			LogLevel INFO
		EOF
		echo "$addr $(cut -d' ' -f1,2 "$dir/$name/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
		echo "$name $ns $addr $dir/$name/home" >>"$dir/hosts.txt"
		cat >>"$dir/hosts.toml" <<-EOF

			[[host]]
			name = "$name"
			destination = "root@$addr"
			identity = "$dir/client_key"
			ssh_options = ["UserKnownHostsFile=$dir/known_hosts", "GlobalKnownHostsFile=/dev/null", "IdentitiesOnly=yes"]
		EOF
		start_sshd "$dir" "$name" "$ns"
	done
	trap - ERR
	echo "$dir"
}

down() {
	local dir=$1 k n owned name ns addr wd pids i
	[ -f "$dir/state" ] || die "down: $dir/state not found: not a directory made by testhosts.sh up"
	k=$(sed -n 's/^set=//p' "$dir/state")
	n=$(sed -n 's/^n=//p' "$dir/state")
	owned=$(sed -n 's/^owned=//p' "$dir/state")
	for i in $(seq "$n"); do
		ns=pbt${k}h${i}
		ip netns list | awk '{ print $1 }' | grep -qx "$ns" || continue
		# Everything in the namespace was started there by these hosts:
		# sshd, its sessions and what they run.
		pids=$(ip netns pids "$ns")
		[ -z "$pids" ] || kill -TERM $pids 2>/dev/null || true
		for _ in $(seq 50); do
			pids=$(ip netns pids "$ns")
			[ -z "$pids" ] && break
			sleep 0.02
		done
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
		# Deleting the namespace deletes its end of the veth, and so the pair.
		ip netns del "$ns"
	done
	if [ "$owned" = 1 ]; then
		rm -rf "$dir"
	else
		rm -f "$dir/state"
	fi
}

case "${1:-}" in
up) [ $# -ge 2 ] || die "usage: testhosts.sh up N [DIR]"; up "$2" "${3:-}" ;;
down) [ $# -eq 2 ] || die "usage: testhosts.sh down DIR"; down "$2" ;;
stop) [ $# -eq 3 ] || die "usage: testhosts.sh stop DIR NAME"; stop_sshd "$2" "$3" ;;
start)
	[ $# -eq 3 ] || die "usage: testhosts.sh start DIR NAME"
	ns=$(awk -v h="$3" '$1 == h { print $2 }' "$2/hosts.txt")
	[ -n "$ns" ] || die "start: no host $3 in $2/hosts.txt"
	start_sshd "$2" "$3" "$ns"
	;;
*) die "usage: testhosts.sh up N [DIR] | down DIR | stop DIR NAME | start DIR NAME" ;;
esac
