#!/usr/bin/env bash
# scripts/sandbox/golden-cases.sh SUITE OUTDIR [CASE-NAME-FILTER]
#
# Runs the golden-bytes cases of SUITE (ipvsadm | ipset | nft) against the running
# kernel (call it through scripts/capture-golden.sh, which picks the kernel).
# CASE-NAME-FILTER: cases whose name contains it (several: comma-separated).
# Each case runs in a fresh network namespace (unshare -n): untraced setup
# commands first, then the traced case command under strace; the trace is
# turned into OUTDIR/<case>.json by strace-netlink.mjs.
set -euo pipefail
SUITE=${1:?suite}
OUT=${2:?outdir}
FILTER=${3:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PARSER=$HERE/strace-netlink.mjs
KERNEL=$(uname -r)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
n_ok=0
n_fail=0

# The set-up of the dummy link that routes 10.0.1.0/24 and fd00:1::/64.
LINK='ip link add d0 type dummy && ip link set d0 up && ip addr add 10.0.1.1/24 dev d0 && ip -6 addr add fd00:1::1/64 dev d0 nodad'

# gcase NAME SETUP TOOL ARGS...     (STDIN_FILE=... for the tool's stdin)
gcase() {
	local name=$1 setup=$2
	shift 2
	if [ -n "$FILTER" ]; then
		local f wanted=
		IFS=, read -ra f <<<"$FILTER"
		for f in "${f[@]}"; do [[ $name == *"$f"* ]] && wanted=1; done
		[ -n "$wanted" ] || return 0
	fi
	local trace=$WORK/$name.strace cmd rc=0 stdin=${STDIN_FILE:-/dev/null}
	cmd=$(printf '%q ' "$@")
	cmd=${cmd% }
	unshare -n bash -c '
		set -e
		ip link set lo up
		eval "$1"
		set +e
		strace -f -xx -s 65535 -e trace=socket,sendmsg,sendto,recvmsg,recvfrom \
			-e read=all -e write=all -o "$2" "${@:4}" <"$3" >"$2.stdout" 2>"$2.stderr"
		echo $? >"$2.rc"
	' _ "$setup" "$trace" "$stdin" "$@" || { echo "golden: $name: setup failed" >&2; n_fail=$((n_fail + 1)); return 0; }
	rc=$(cat "$trace.rc")
	local args=(--trace "$trace" --out "$OUT/$name.json" --command "$cmd" --tool "$TOOL_VERSION"
		--kernel "$KERNEL" --exit-status "$rc")
	[ -n "$setup" ] && args+=(--setup "$setup")
	[ -n "${STDIN_FILE:-}" ] && args+=(--stdin "$STDIN_FILE")
	# The fixture also keeps what the tool printed, so decoders can be
	# checked field by field against the tool's own reading of the replies.
	if node "$PARSER" "${args[@]}" && node -e '
		const fs = require("fs");
		const [file, out] = process.argv.slice(1);
		const j = JSON.parse(fs.readFileSync(file, "utf8"));
		j.stdout = fs.readFileSync(out, "utf8");
		fs.writeFileSync(file, JSON.stringify(j, null, 2) + "\n");
	' "$OUT/$name.json" "$trace.stdout"; then
		n_ok=$((n_ok + 1))
		[ "$rc" = 0 ] || echo "golden: $name: note: exit status $rc: $(head -c 200 "$trace.stderr")" >&2
	else
		n_fail=$((n_fail + 1))
		echo "golden: $name: failed (exit $rc): $(head -c 300 "$trace.stderr")" >&2
	fi
}

suite_ipvsadm() {
	TOOL_VERSION=$(ipvsadm -v 2>&1 | head -n1)
	local S='ipvsadm -A -t 10.0.0.1:80 -s rr'
	local S6='ipvsadm -A -t [fd00::1]:443 -s rr'
	local D="$S && ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2:8080 -m -w 3"
	local TWO="$LINK && ipvsadm -A -t 10.0.0.1:80 -s rr && ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 1 && ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.3:80 -m -w 2"
	TWO="$TWO && ipvsadm -A -u 10.0.0.2:53 -s wlc && ipvsadm -a -u 10.0.0.2:53 -r 10.0.1.4:53 -g && ipvsadm -a -u 10.0.0.2:53 -r 10.0.1.5:53 -i -x 10 -y 5"
	local MIX="$LINK && ipvsadm -A -f 42 -s rr && ipvsadm -a -f 42 -r 10.0.1.2 -g && $S6 -p 60 && ipvsadm -a -t [fd00::1]:443 -r [fd00:1::2]:443 -m"

	# services
	gcase svc-add-tcp "" ipvsadm -A -t 10.0.0.1:80 -s rr
	gcase svc-add-udp "" ipvsadm -A -u 10.0.0.1:53 -s wlc
	gcase svc-add-sctp "" ipvsadm -A --sctp-service 10.0.0.1:3868 -s rr
	gcase svc-add-fwmark "" ipvsadm -A -f 42 -s rr
	gcase svc-add-fwmark-ipv6 "" ipvsadm -A -f 43 -6 -s rr
	gcase svc-add-ipv6-sh-flags "" ipvsadm -A -t '[fd00::1]:443' -s sh -b sh-fallback,sh-port
	gcase svc-add-persistent "" ipvsadm -A -t 10.0.0.1:80 -s rr -p 300 -M 255.255.255.0
	gcase svc-add-persistent-ipv6 "" ipvsadm -A -t '[fd00::1]:80' -s rr -p 60 -M 64
	gcase svc-add-one-packet "" ipvsadm -A -u 10.0.0.1:53 -s rr -o
	gcase svc-add-mh "" ipvsadm -A -t 10.0.0.1:80 -s mh -b mh-fallback,mh-port
	if [ -e /sys/module/ip_vs_pe_sip ]; then
		gcase svc-add-pe-sip "" ipvsadm -A -u 10.0.0.1:5060 -s rr -p 60 --pe sip
	fi
	gcase svc-edit "$S" ipvsadm -E -t 10.0.0.1:80 -s wrr
	gcase svc-del "$S" ipvsadm -D -t 10.0.0.1:80
	# destinations
	gcase dest-add-masq "$LINK && $S" ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2:8080 -m -w 3
	gcase dest-add-route "$LINK && $S" ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2 -g
	gcase dest-add-tunnel "$LINK && $S" ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2 -i
	gcase dest-add-thresholds "$LINK && $S" ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2:8080 -m -x 100 -y 10
	gcase dest-add-tun-gue "$LINK && $S" ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2 -i --tun-type gue --tun-port 6080
	gcase dest-add-tun-gue-remcsum "$LINK && $S" ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2 -i --tun-type gue --tun-port 6080 --tun-remcsum
	gcase dest-add-tun-gre "$LINK && $S" ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2 -i --tun-type gre --tun-nocsum
	gcase dest-add-ipv6 "$LINK && $S6" ipvsadm -a -t '[fd00::1]:443' -r '[fd00:1::2]:8443' -m -w 2
	gcase dest-add-fwmark "$LINK && ipvsadm -A -f 42 -s rr" ipvsadm -a -f 42 -r 10.0.1.2 -g
	gcase dest-edit "$LINK && $D" ipvsadm -e -t 10.0.0.1:80 -r 10.0.1.2:8080 -m -w 5
	gcase dest-del "$LINK && $D" ipvsadm -d -t 10.0.0.1:80 -r 10.0.1.2:8080
	# listing / misc
	gcase list-empty "" ipvsadm -Ln
	gcase list-2svc-2dest "$TWO" ipvsadm -Ln
	# Connections through the services from inside the namespace (IPVS takes
	# locally sent packets too; the dummy link swallows them), then a wait for
	# the rate estimator's 2 s tick: counters and rates that are not all zero.
	local TRAFFIC="ip addr add 10.0.0.1/32 dev d0 && ip addr add 10.0.0.2/32 dev d0 && for i in 1 2 3; do { timeout 0.3 bash -c 'exec 3<>/dev/tcp/10.0.0.1/80' 2>/dev/null; echo x >/dev/udp/10.0.0.2/53; } || true; done && sleep 2.5"
	gcase list-stats-exact "$TWO && $TRAFFIC" ipvsadm -Ln --stats --exact
	gcase list-rate "$TWO && $TRAFFIC" ipvsadm -Ln --rate
	gcase list-persistent-conn "$TWO && ipvsadm -E -t 10.0.0.1:80 -s rr -p 300 && $TRAFFIC" ipvsadm -Ln --persistent-conn
	gcase list-one-service "$TWO" ipvsadm -Ln -t 10.0.0.1:80
	gcase list-fwmark-ipv6 "$MIX" ipvsadm -Ln
	gcase list-tun-info "$LINK && $S && ipvsadm -a -t 10.0.0.1:80 -r 10.0.1.2 -i --tun-type gue --tun-port 6080" ipvsadm -Ln --tun-info
	gcase save "$TWO" ipvsadm -Sn
	gcase timeout-get "" ipvsadm -L --timeout
	gcase timeout-set "" ipvsadm --set 900 120 300
	gcase zero-all "$TWO" ipvsadm -Z
	gcase zero-service "$TWO" ipvsadm -Z -t 10.0.0.1:80
	gcase clear "$TWO" ipvsadm -C
	gcase daemon-start "" ipvsadm --start-daemon master --mcast-interface lo --syncid 5
	gcase daemon-list "ipvsadm --start-daemon master --mcast-interface lo --syncid 5" ipvsadm -L --daemon
	gcase daemon-stop "ipvsadm --start-daemon master --mcast-interface lo --syncid 5" ipvsadm --stop-daemon master
}

suite_ipset() {
	TOOL_VERSION=$(ipset -v 2>&1 | head -n1)
	local R=$WORK/restore-300.txt i
	: >"$R"
	for i in $(seq 1 300); do echo "add r 10.1.$((i / 256)).$((i % 256))" >>"$R"; done
	local BIG='{ echo "create big hash:ip hashsize 4096"; for i in $(seq 1 2000); do echo "add big 10.2.$((i / 256)).$((i % 256))"; done; } | ipset restore'

	gcase version "" ipset -v
	gcase create-hash-ip "" ipset create s hash:ip
	gcase create-hash-ip-port-inet6-full "" ipset create s hash:ip,port family inet6 hashsize 4096 maxelem 100000 timeout 300 counters comment skbinfo
	gcase create-hash-ip-port-ip "" ipset create s hash:ip,port,ip
	gcase create-hash-ip-port-net "" ipset create s hash:ip,port,net
	gcase create-hash-net "" ipset create s hash:net
	gcase create-hash-net-port "" ipset create s hash:net,port
	gcase create-hash-net-iface "" ipset create s hash:net,iface
	gcase create-bitmap-port "" ipset create s bitmap:port range 0-65535
	gcase create-bitmap-ip "" ipset create s bitmap:ip range 10.0.0.0/16
	gcase create-list-set "" ipset create s list:set size 8
	# Every create option each kind takes (forceadd, bucketsize, initval too).
	gcase create-all-hash-ip "" ipset create s hash:ip family inet hashsize 2048 maxelem 5000 netmask 24 timeout 600 counters comment skbinfo forceadd bucketsize 8 initval 0x1234abcd
	gcase create-all-bitmap-ip "" ipset create s bitmap:ip range 10.0.0.0-10.0.255.255 netmask 24 timeout 5 counters comment skbinfo
	gcase create-all-bitmap-port "" ipset create s bitmap:port range 10-200 timeout 5 counters comment skbinfo
	gcase create-all-list-set "" ipset create s list:set size 12 timeout 5 counters comment skbinfo
	gcase add-ip "ipset create s hash:ip" ipset add s 10.0.0.1
	gcase add-ipv6 "ipset create s hash:ip family inet6" ipset add s fd00::1
	gcase add-ip-port-timeout-comment "ipset create s hash:ip,port timeout 300 comment" ipset add s 10.0.0.1,tcp:80 timeout 10 comment x
	gcase add-exist "ipset create s hash:ip,port timeout 300 comment && ipset add s 10.0.0.1,tcp:80" ipset add -exist s 10.0.0.1,tcp:80 timeout 10 comment x
	gcase add-dup-error "ipset create s hash:ip && ipset add s 10.0.0.1" ipset add s 10.0.0.1
	gcase add-net-nomatch "ipset create s hash:net" ipset add s 10.1.0.0/16 nomatch
	gcase add-ip-port-ip "ipset create s hash:ip,port,ip" ipset add s 10.0.0.1,udp:53,10.0.0.2
	gcase add-ip-port-net "ipset create s hash:ip,port,net" ipset add s 10.0.0.1,tcp:443,10.8.0.0/24
	gcase add-net-iface "ipset create s hash:net,iface" ipset add s 10.0.0.0/8,eth0
	gcase add-list-set "ipset create a hash:ip && ipset create s list:set size 8" ipset add s a
	gcase add-bitmap-port "ipset create s bitmap:port range 0-65535" ipset add s 8080
	gcase del "ipset create s hash:ip && ipset add s 10.0.0.1" ipset del s 10.0.0.1
	gcase test-present "ipset create s hash:ip && ipset add s 10.0.0.1" ipset test s 10.0.0.1
	gcase test-absent "ipset create s hash:ip" ipset test s 10.0.0.1
	gcase flush "ipset create s hash:ip && ipset add s 10.0.0.1 && ipset add s 10.0.0.2" ipset flush s
	gcase destroy "ipset create s hash:ip" ipset destroy s
	gcase rename "ipset create a hash:ip" ipset rename a b
	gcase swap "ipset create a hash:ip && ipset create b hash:ip && ipset add a 10.0.0.1" ipset swap a b
	gcase list-large "$BIG" ipset list big
	gcase list-extensions "ipset create s hash:ip,port timeout 300 counters comment skbinfo && ipset add s 10.0.0.1,tcp:80 timeout 100 packets 5 bytes 500 comment hello skbmark 0x10/0xff && ipset add s 10.0.0.2,udp:53" ipset list s
	gcase list-header "ipset create s hash:ip timeout 300 && ipset add s 10.0.0.1" ipset list -t s
	gcase list-names "ipset create a hash:ip && ipset create b hash:net" ipset list -n
	gcase save "ipset create a hash:ip && ipset add a 10.0.0.1 && ipset create b hash:net,port && ipset add b 10.1.0.0/16,tcp:80" ipset save
	STDIN_FILE=$R gcase restore-300 "ipset create r hash:ip" ipset restore

	# Types and options a kernel may lack (the host's and the sandbox's
	# differ): each case is recorded only where `ipset create` takes the set.
	kcase create-hash-net-net "hash:net,net" "" ipset create s hash:net,net family inet6 timeout 5
	kcase create-hash-net-port-net "hash:net,port,net" "" ipset create s hash:net,port,net counters
	kcase create-hash-ip-mark "hash:ip,mark" "" ipset create s hash:ip,mark markmask 0xffff00 skbinfo
	kcase create-hash-mac "hash:mac" "" ipset create s hash:mac hashsize 256 comment
	kcase create-hash-ip-mac "hash:ip,mac" "" ipset create s hash:ip,mac family inet6
	kcase create-bitmap-ip-mac "bitmap:ip,mac range 10.0.0.0/24" "" ipset create s bitmap:ip,mac range 10.0.0.0/24 timeout 5
	kcase create-hash-ip-bitmask "hash:ip bitmask 255.255.0.255" "" ipset create s hash:ip bitmask 255.255.0.255
	kcase create-hash-ip-port-netmask "hash:ip,port netmask 24" "" ipset create s hash:ip,port netmask 24
	kcase create-hash-ip-port-bitmask6 "hash:ip,port family inet6 bitmask ffff:ffff::ff00" "" ipset create s hash:ip,port family inet6 bitmask ffff:ffff::ff00
	kcase create-bitmap-ip-net0 "bitmap:ip range 0.0.0.0/0 netmask 16" "" ipset create s bitmap:ip range 0.0.0.0/0 netmask 16
	kcase add-net-net "hash:net,net" "ipset create s hash:net,net" ipset add s 10.0.0.0/24,10.1.0.0/16 nomatch
	kcase add-net-net-range "hash:net,net" "ipset create s hash:net,net" ipset add s 10.2.0.0-10.2.1.12,10.3.0.0/30
	kcase add-net-port-net "hash:net,port,net" "ipset create s hash:net,port,net" ipset add s 10.0.0.0/24,udp:53,10.1.0.0/16
	kcase add-net-port-net-zero "hash:net,port,net" "ipset create s hash:net,port,net" ipset add s 0.0.0.0/0,udp:53,10.1.0.0/16
	kcase add-net-port-net6-zero "hash:net,port,net family inet6" "ipset create s hash:net,port,net family inet6" ipset add s fd00::/64,tcp:80,::/0
	kcase add-ip-mark "hash:ip,mark" "ipset create s hash:ip,mark" ipset add s 10.0.0.1,0x12
	kcase add-mac "hash:mac" "ipset create s hash:mac" ipset add s 00:11:22:aa:bb:cc
	kcase add-ip-mac "hash:ip,mac" "ipset create s hash:ip,mac family inet6" ipset add s fd00::1,00:11:22:aa:bb:cc
	kcase add-bitmap-ip-mac "bitmap:ip,mac range 10.0.0.0/24" "ipset create s bitmap:ip,mac range 10.0.0.0/24" ipset add s 10.0.0.1,00:11:22:aa:bb:cc
	kcase add-bitmap-ip-mac-bare "bitmap:ip,mac range 10.0.0.0/24" "ipset create s bitmap:ip,mac range 10.0.0.0/24" ipset add s 10.0.0.2
	gcase add-net-iface-zero "ipset create s hash:net,iface" ipset add s 0/0,eth0
	gcase add-net-iface-wildcard "ipset create s hash:net,iface" ipset add s 10.0.0.0/8,eth wildcard
	local L="ipset create a hash:ip && ipset create b hash:ip && ipset create s list:set"
	gcase add-list-set-before "$L && ipset add s b" ipset add s a before b
	gcase add-list-set-after "$L && ipset add s b" ipset add s a after b
	gcase del-list-set-before "$L && ipset add s b && ipset add s a before b" ipset del s a before b
	gcase test-list-set-after "$L && ipset add s b && ipset add s a" ipset test s a after b
	gcase test-net-nomatch "ipset create s hash:net && ipset add s 10.1.0.0/16 nomatch" ipset test s 10.1.0.0/16 nomatch
	kcase list-header-bitmask "hash:ip bitmask 255.255.0.255" "ipset create s hash:ip bitmask 255.255.0.255" ipset list -t s
	local NEW='ipset create a hash:net,net && ipset add a 10.0.0.0/24,10.1.0.0/16 && ipset add a 10.0.0.1,10.1.0.1 nomatch'
	NEW="$NEW && ipset create b hash:net,port,net family inet6 && ipset add b fd00::/64,tcp:80,fd01::1"
	NEW="$NEW && ipset create c hash:ip,mark markmask 0xff00 && ipset add c 10.0.0.1,0x1200 && ipset add c 10.0.0.2,0"
	NEW="$NEW && ipset create d hash:mac timeout 100 && ipset add d 00:11:22:aa:bb:cc timeout 0"
	NEW="$NEW && ipset create e hash:ip,mac && ipset add e 10.0.0.1,0a:0b:0c:0d:0e:0f"
	NEW="$NEW && ipset create f bitmap:ip,mac range 10.0.0.0-10.0.0.255 counters && ipset add f 10.0.0.1,00:11:22:aa:bb:cc && ipset add f 10.0.0.2"
	NEW="$NEW && ipset create g hash:net,iface && ipset add g 0.0.0.0/0,eth0 && ipset add g 10.0.0.0/8,veth wildcard"
	NEW="$NEW && ipset create j list:set && ipset add j a && ipset add j b && ipset add j c before b"
	kcase list-new-types "hash:mac" "$NEW" ipset save
}

# kcase NAME "TYPE AND OPTIONS" SETUP TOOL ARGS...: gcase where this kernel
# creates such a set, else nothing (said on stderr).
kcase() {
	local name=$1 probe=$2
	shift 2
	# shellcheck disable=SC2086 # the probe is a word list
	if unshare -n ipset create probe $probe >/dev/null 2>&1; then
		gcase "$name" "$@"
	else
		echo "golden: $name: not on this kernel (no $probe)" >&2
	fi
}

suite_conntrack() {
	TOOL_VERSION=$(conntrack --version 2>&1 | head -n1)
	# Entries of each kind, written by the tool: UDP (assured, marked), TCP
	# in zone 3 (in zone 0 where the kernel has no zones: the sandbox's),
	# ICMP, IPv6, a DNATed UDP flow (reply source 10.244.1.10), SCTP with
	# its verification tags.
	local I='conntrack -I -t 300'
	local TCP="$I -p tcp -s 10.0.0.1 -d 10.0.0.2 --sport 1234 --dport 80 --state ESTABLISHED -u SEEN_REPLY"
	local E="$I -p udp -s 10.0.0.1 -d 10.0.0.2 --sport 1234 --dport 53 -u ASSURED,SEEN_REPLY -m 7"
	E="$E && { $TCP -w 3 || $TCP; }"
	E="$E && $I -p icmp -s 10.0.0.1 -d 10.0.0.2 --icmp-type 8 --icmp-code 0 --icmp-id 77"
	E="$E && $I -p udp -s fd00::1 -d fd00::2 --sport 1 --dport 2"
	E="$E && $I -p udp -s 10.0.0.3 -d 10.96.0.10 --sport 5 --dport 53 -r 10.244.1.10 -q 10.0.0.3 --reply-port-src 8080 --reply-port-dst 5"
	E="$E && $I -p sctp -s 10.0.0.1 -d 10.0.0.2 --sport 9 --dport 9 --state ESTABLISHED --orig-vtag 1 --reply-vtag 2"
	E="{ $E; } >/dev/null 2>&1"
	# Real packets with accounting and timestamps on: counters, a start time
	# (where the kernel has timestamps; the sandbox's does not).
	# (Any conntrack match makes the namespace track; the sandbox's kernel
	# has no nf_tables for IPv4, so its rule goes in with iptables-legacy.)
	local RULE='INPUT -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT'
	local TRAFFIC="sysctl -qw net.netfilter.nf_conntrack_acct=1 && { sysctl -qw net.netfilter.nf_conntrack_timestamp=1 2>/dev/null || true; } && { iptables -A $RULE 2>/dev/null || iptables-legacy -A $RULE; } && echo hi >/dev/udp/127.0.0.1/53 && echo hello >/dev/udp/127.0.0.1/53"

	gcase list-empty "" conntrack -L
	gcase list-all "$E" conntrack -L -o extended,id
	gcase list-inet "$E" conntrack -L -o extended,id -f ipv4
	gcase list-inet6 "$E" conntrack -L -o extended,id -f ipv6
	gcase list-mark "$E" conntrack -L -o extended,id -m 7
	gcase list-mark-mask "$E" conntrack -L -o extended,id -m 7/0xf
	gcase list-status "$E" conntrack -L -o extended,id -u ASSURED
	gcase list-counters "$TRAFFIC" conntrack -L -o extended,id
	# Filters the tool applies itself: the decoder's filtering is held against them.
	gcase list-udp-dport "$E" conntrack -L -o extended,id -p udp --dport 53
	gcase list-reply-src "$E" conntrack -L -o extended,id -p udp --reply-src 10.244.1.10
	gcase list-ipv6-src "$E" conntrack -L -o extended,id -f ipv6 -s fd00::1
	gcase list-icmp "$E" conntrack -L -o extended,id -p icmp
	gcase get-udp "$E" conntrack -G -o extended,id -p udp -s 10.0.0.1 -d 10.0.0.2 --sport 1234 --dport 53
	gcase get-icmp "$E" conntrack -G -o extended,id -p icmp -s 10.0.0.1 -d 10.0.0.2 --icmp-type 8 --icmp-code 0 --icmp-id 77
	gcase get-ipv6 "$E" conntrack -G -o extended,id -p udp -s fd00::1 -d fd00::2 --sport 1 --dport 2
	gcase get-missing "" conntrack -G -p udp -s 10.0.0.1 -d 10.0.0.2 --sport 1 --dport 2
	gcase delete-udp "$E" conntrack -D -o extended,id -p udp -s 10.0.0.1
	gcase flush "$E" conntrack -F
	gcase flush-inet6 "$E" conntrack -F -f ipv6
	gcase stats-cpu "$E" conntrack -S
	gcase count "$E" conntrack -C
}


# The nft suite, long enough for a file of its own.
# shellcheck source=golden-cases-nft.sh
. "$HERE/golden-cases-nft.sh"

case "$SUITE" in
ipvsadm) suite_ipvsadm ;;
ipset) suite_ipset ;;
conntrack) suite_conntrack ;;
nft) suite_nft ;;
*) echo "unknown suite $SUITE" >&2; exit 2 ;;
esac
echo "golden: $SUITE on $KERNEL: $n_ok cases written to $OUT, $n_fail failed" >&2
[ "$n_fail" = 0 ]
