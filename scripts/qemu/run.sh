#!/usr/bin/env bash
# scripts/qemu/run.sh CMD [ARGS...]
#
# Boot Debian's own Linux 6.1 kernel (its generic amd64 package) under QEMU in
# pure emulation (TCG: no hardware virtualisation needed), with the host's /
# as its root filesystem over virtio-9p, load the IPVS / ipset / nf_tables /
# netfilter / tunnel modules, and run CMD [ARGS...] inside it as root, in the
# caller's current directory: the same guest as ../sandbox/run.sh gives in
# user-mode-linux (../sandbox/guest.sh makes it for both), on a kernel that
# distorts the other way (see README.md here). CMD's stdout+stderr are
# streamed to this script's stdout; this script exits with CMD's status.
#
# Environment (as ../sandbox/run.sh):
#   SANDBOX_TIMEOUT  seconds before the guest is killed (default 3000)
#   SANDBOX_MEM      guest memory (default 2G)
#   SANDBOX_CPUS     guest processors (default 2)
#   SANDBOX_BOOT_TIMEOUT  seconds for the guest to reach its init (default
#                    300; a boot that hangs is tried once more)
#   SANDBOX_KEEP=1   keep the per-run dir (.sandbox/qemu-run-XXXX) for debugging
#   SANDBOX_QUIET=1  no progress lines on stderr
#   QEMU_KERNEL_PACKAGE  which linux-image package to boot (boot-files.sh)
# Passed into the guest: CI, NODE_OPTIONS, DEBUG, TAP*, IPVS_NETLINK_*, CHURN_*, BENCH_*.
# Exit status: CMD's status; 124 if the guest timed out; 125 for sandbox
# failures (no boot files, kernel crashed, no status written, ...).
set -euo pipefail

[ "$#" -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SAY_PREFIX=qemu
# shellcheck source=../sandbox/guest.sh
. "$SCRIPT_DIR/../sandbox/guest.sh"
MEM=${SANDBOX_MEM:-2G}
CPUS=${SANDBOX_CPUS:-2}
BOOT_TIMEOUT=${SANDBOX_BOOT_TIMEOUT:-300}

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found (run scripts/sandbox/ensure-deps.sh qemu)"
guest_mount_plan
# QEMU's option syntax splits at commas, the kernel's command line at spaces.
case "$PROJECT" in *[,\ ]*) die "the project's path '$PROJECT' has a comma or a space, which QEMU's options cannot carry" ;; esac

BOOT=$(bash "$SCRIPT_DIR/boot-files.sh") || die "the boot files could not be made (see above)"
read -r PKG VERSION <"$BOOT/package"
KVER=$(ls -1 "$BOOT/lib/modules")

RUN=$(mktemp -d "$PROJECT/.sandbox/qemu-run-XXXXXX")
QPID=
TAILPID=
WATCHDOG=
stop_guest() {
	[ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null || true
	[ -n "$TAILPID" ] && kill "$TAILPID" 2>/dev/null || true
	# timeout passes the signal on to QEMU.
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null || true
}
guest_on_exit stop_guest

guest_env_file
guest_write_init qemu "$BOOT/lib/modules" "$(guest_modules "$BOOT/lib/modules/$KVER" nft)" "$@"

# tsc=reliable: else the guest's clock falls back to the slow HPET.
# cryptomgr.notests: the crypto self-tests cost seconds under emulation.
# Not quiet: the kernel's messages in console.log are what shows where a
# boot stopped.
APPEND="console=ttyS0 rdinit=/init panic=-1 tsc=reliable cryptomgr.notests sandbox_init=$RUN/init.sh"

# One boot; sets QRC. A guest that has not reached its init.sh (which
# creates init.log first thing) within BOOT_TIMEOUT is stopped and its
# console kept as console-hung.log.
boot() {
	rm -f "$RUN/boot-hung" "$RUN/init.log"
	: >"$RUN/console.log"
	# timeout --foreground: QEMU stays in the caller's process group, so a
	# signal to the group reaches it; timeout passes its own on.
	# --pdeathsig: if this script is killed outright, timeout and then QEMU
	# go with it.
	setpriv --pdeathsig KILL timeout --foreground --kill-after=10 "$TIMEOUT" \
		setpriv --pdeathsig KILL qemu-system-x86_64 \
		-accel tcg,thread=multi -cpu max -m "$MEM" -smp "$CPUS" \
		-kernel "$BOOT/vmlinux" -initrd "$BOOT/initrd.cpio" -append "$APPEND" \
		-nodefaults -no-user-config -display none -vga none -nic none -no-reboot -monitor none \
		-serial "file:$RUN/console.log" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap \
		</dev/null >"$RUN/qemu.log" 2>&1 &
	QPID=$!
	(
		for ((i = 0; i < BOOT_TIMEOUT; i++)); do
			[ -e "$RUN/init.log" ] && exit 0
			kill -0 "$QPID" 2>/dev/null || exit 0
			sleep 1
		done
		cp "$RUN/console.log" "$RUN/console-hung.log"
		touch "$RUN/boot-hung"
		kill "$QPID"
	) </dev/null >/dev/null 2>&1 &
	WATCHDOG=$!
	guest_follow "$QPID"
	QRC=$KERNEL_RC
	kill "$WATCHDOG" 2>/dev/null || true
	wait "$WATCHDOG" 2>/dev/null || true
	QPID= WATCHDOG=
}

START=$(date +%s.%N)
for attempt in 1 2; do
	say "booting $PKG $VERSION under QEMU TCG (mem=$MEM, cpus=$CPUS, timeout ${TIMEOUT}s) ..."
	boot
	[ -e "$RUN/boot-hung" ] || break
	echo "$SAY_PREFIX: the guest did not reach its init within ${BOOT_TIMEOUT}s (SANDBOX_BOOT_TIMEOUT); its console ended with:" >&2
	tail -n 5 "$RUN/console-hung.log" >&2
	[ "$attempt" = 2 ] && die "the guest hung at boot twice"
done

if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
	echo "$SAY_PREFIX: sandbox kernel did not finish within ${TIMEOUT}s (SANDBOX_TIMEOUT); killed" >&2
	exit 124
fi
if [ "$QRC" != 0 ] && [ -s "$RUN/qemu.log" ]; then
	echo "$SAY_PREFIX: qemu-system-x86_64 exited $QRC:" >&2
	tail -n 10 "$RUN/qemu.log" >&2
fi
guest_status "$QRC"
