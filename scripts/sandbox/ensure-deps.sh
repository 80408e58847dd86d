#!/usr/bin/env bash
# scripts/sandbox/ensure-deps.sh — make sure the system tools the IPVS sandbox,
# the kernel tests (ipset, nft) and the golden-bytes capture need are
# installed. Quiet and idempotent when everything is present. As root, installs what is missing with apt-get;
# otherwise prints the exact command to run and exits 1.
set -euo pipefail

missing=()
need() { # need PACKAGE PATH-OR-COMMAND...
	local pkg=$1 x
	shift
	for x in "$@"; do
		if [[ $x == /* ]]; then
			[ -e "$x" ] && continue
		else
			command -v "$x" >/dev/null 2>&1 && continue
			# sbin tools may be outside a non-root PATH
			[ -x "/usr/sbin/$x" ] || [ -x "/sbin/$x" ] && continue
		fi
		[[ " ${missing[*]-} " == *" $pkg "* ]] || missing+=("$pkg")
		return 0
	done
}

modules_present() { compgen -G "/usr/lib/uml/modules/*/kernel/net/netfilter/ipvs/ip_vs.ko*" >/dev/null; }

need user-mode-linux /usr/bin/linux.uml
modules_present || need user-mode-linux /nonexistent-uml-modules
need kmod modprobe
need ipvsadm ipvsadm
need ipset ipset
need conntrack conntrack
need nftables nft
need iproute2 ip
need iptables iptables iptables-restore iptables-save
need curl curl
need strace strace
need gcc cc         # builds scripts/sandbox/uml-xstate-shim.c
need libc6-dev /usr/include/dlfcn.h
need util-linux setsid unshare
need coreutils timeout tail

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "ensure-deps: installing ${missing[*]}" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
	exit 0
fi
echo "ensure-deps: missing packages: ${missing[*]}" >&2
echo "run: sudo apt-get install -y ${missing[*]}" >&2
exit 1
