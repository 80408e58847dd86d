#!/usr/bin/env bash
# scripts/sandbox/ensure-deps.sh [uml] [qemu] — make sure the system tools the
# IPVS sandboxes, the kernel tests (ipset, nftables, conntrack) and the
# golden-bytes capture need are installed: those of the user-mode-linux
# sandbox (uml, the default), of the QEMU one (scripts/qemu/run.sh), or both.
# Quiet and idempotent when everything is present. As root, installs what is
# missing with apt-get; otherwise prints the exact command to run and exits 1.
set -euo pipefail

uml=0 qemu=0
[ "$#" -gt 0 ] || set -- uml
for k in "$@"; do
	case "$k" in
	uml) uml=1 ;;
	qemu) qemu=1 ;;
	*) echo "usage: $0 [uml] [qemu]" >&2; exit 2 ;;
	esac
done

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

if [ $uml = 1 ]; then
	need user-mode-linux /usr/bin/linux.uml
	modules_present || need user-mode-linux /nonexistent-uml-modules
	need gcc cc         # builds scripts/sandbox/uml-xstate-shim.c
	need libc6-dev /usr/include/dlfcn.h
fi
if [ $qemu = 1 ]; then
	# The kernel itself is Debian's linux-image package, fetched with
	# apt-get download by scripts/qemu/boot-files.sh, never installed.
	need qemu-system-x86 qemu-system-x86_64
	need busybox-static /bin/busybox
	need cpio cpio
	need xz-utils xz
fi
need kmod modprobe depmod
need ipvsadm ipvsadm
need ipset ipset
need iproute2 ip
need iptables iptables iptables-restore iptables-save
need curl curl
need strace strace
need util-linux setsid unshare setpriv
need conntrack conntrack
need nftables nft
need coreutils timeout tail
# The packages step (scripts/package-test.sh): the arm64 prebuild's cross
# compiler, and qemu-user to run the tests with it on the arm64 node.
need g++-aarch64-linux-gnu aarch64-linux-gnu-g++
need qemu-user qemu-aarch64
need file file

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "ensure-deps: installing ${missing[*]}" >&2
	apt-get update -qq >&2
	# Only what is named: qemu-system-x86's recommendations alone are a
	# desktop's worth of libraries (GTK, PulseAudio, GStreamer).
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
	exit 0
fi
echo "ensure-deps: missing packages: ${missing[*]}" >&2
echo "run: sudo apt-get install -y ${missing[*]}" >&2
exit 1
