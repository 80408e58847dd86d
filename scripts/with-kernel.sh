#!/usr/bin/env bash
# scripts/with-kernel.sh CMD [ARGS...]
#
# Run CMD where IPVS is available:
#  - directly, if the running kernel has IPVS (/proc/net/ip_vs, or it can be
#    loaded with modprobe) and we have CAP_NET_ADMIN  -> IPVS_NETLINK_KERNEL=host
#  - otherwise inside the user-mode-linux sandbox (scripts/sandbox/run.sh)
#                                                     -> IPVS_NETLINK_KERNEL=sandbox
#  - with WITH_KERNEL=qemu, inside Debian's own kernel under QEMU
#    (scripts/qemu/run.sh)   -> IPVS_NETLINK_KERNEL=sandbox
# Force one with WITH_KERNEL=host|sandbox|qemu (uml is sandbox's other name).
# In a sandbox guest IPVS_NETLINK_SANDBOX says which (uml, qemu). Inside a
# sandbox (where its run.sh has set IPVS_NETLINK_KERNEL=sandbox) CMD runs
# directly. Never skips: if the kernel asked for cannot be had, exits
# non-zero with a message.
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

has_cap_net_admin() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
	(( (16#$eff >> 12) & 1 ))
}
host_has_ipvs() {
	[ -e /proc/net/ip_vs ] && return 0
	modprobe -q ip_vs 2>/dev/null && [ -e /proc/net/ip_vs ]
}

# Already inside the sandbox guest: run directly.
if [ "${IPVS_NETLINK_KERNEL:-}" = sandbox ] && [ -e /proc/net/ip_vs ] && [ "$(hostname)" = sandbox ]; then
	exec "$@"
fi
mode=${WITH_KERNEL:-}
if [ -z "$mode" ]; then
	if has_cap_net_admin && host_has_ipvs; then mode=host; else mode=sandbox; fi
fi

case "$mode" in
host)
	has_cap_net_admin || { echo "with-kernel: CAP_NET_ADMIN is required" >&2; exit 1; }
	host_has_ipvs || { echo "with-kernel: the host kernel has no IPVS" >&2; exit 1; }
	export IPVS_NETLINK_KERNEL=host
	exec "$@" ;;
sandbox | uml)
	"$HERE/sandbox/ensure-deps.sh" uml || { echo "with-kernel: sandbox dependencies missing" >&2; exit 1; }
	export IPVS_NETLINK_KERNEL=sandbox
	exec "$HERE/sandbox/run.sh" "$@" ;;
qemu)
	"$HERE/sandbox/ensure-deps.sh" qemu || { echo "with-kernel: QEMU sandbox dependencies missing" >&2; exit 1; }
	export IPVS_NETLINK_KERNEL=sandbox
	exec "$HERE/qemu/run.sh" "$@" ;;
*)
	echo "with-kernel: WITH_KERNEL must be host, sandbox (or uml) or qemu, not '$mode'" >&2
	exit 2 ;;
esac
