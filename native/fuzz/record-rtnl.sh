#!/usr/bin/env bash
# native/fuzz/record-rtnl.sh — record rtnetlink replies from this host's
# kernel as seeds for the rtnl_reply and netlink_error fuzzers: link and
# address dumps, acks, and errors with extended-ack text. Each case runs
# `ip` under strace in a fresh network namespace; the bytes are extracted by
# scripts/sandbox/strace-netlink.mjs into native/fuzz/fixtures/rtnl/*.json
# (same format as test/fixtures). Needs root, strace and iproute2.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PARSER=$HERE/../../scripts/sandbox/strace-netlink.mjs
OUT=$HERE/fixtures/rtnl
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

# A link with IPv4 and IPv6 addresses, like the proxy's kube-ipvs0 (a
# bridge: hosts may lack the dummy module; its IFLA_INFO_DATA is rich), and
# a veth pair for IFLA_LINK / peer attributes.
SETUP='ip link set lo up; ip link add d0 type bridge; ip link set d0 up;
ip link add v0 type veth peer name v1;
ip addr add 10.0.1.1/24 dev d0; ip addr add 10.96.0.10/32 dev d0 label d0:svc;
ip addr add fd00:1::1/64 dev d0 nodad'

case_() {
	local name=$1 cmd=$2 trace=$WORK/$1.strace status
	status=$(unshare -n bash -c "$SETUP"'
		strace -f -xx -s 65535 -e trace=socket,sendmsg,sendto,recvmsg,recvfrom \
			-e read=all -e write=all -o "$1" '"$cmd"' >/dev/null 2>&1 && echo 0 || echo $?' _ "$trace")
	node "$PARSER" --trace "$trace" --out "$OUT/$name.json" --command "$cmd" \
		--tool "$(ip -V)" --kernel "$(uname -r)" --setup "$SETUP" --exit-status "$status"
}

case_ link-show-detail 'ip -d link show'
case_ link-show-one 'ip -d link show dev d0'
case_ addr-show 'ip addr show'
case_ addr-show-inet6 'ip -6 addr show dev d0'
case_ addr-add-ack 'ip addr add 10.0.2.1/24 dev d0'
case_ link-add-exists 'ip link add d0 type bridge'
case_ link-mtu-extack 'ip link set d0 mtu 40000000'
case_ addr-del-missing 'ip addr del 192.0.2.1/24 dev d0'
case_ link-unknown-kind 'ip link add x0 type nosuchkind'
