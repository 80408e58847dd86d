#!/usr/bin/env bash
# scripts/sandbox/run.sh CMD [ARGS...]
#
# Boot a real Linux 6.1 kernel (Debian user-mode-linux, /usr/bin/linux.uml) as
# a process, with the host's / as its root filesystem (hostfs), load the IPVS /
# ipset / netfilter / tunnel modules, and run CMD [ARGS...] inside it as root,
# in the caller's current directory. CMD's stdout+stderr are streamed to this
# script's stdout; this script exits with CMD's exit status.
#
# Environment:
#   SANDBOX_TIMEOUT  seconds before the guest is killed (default 3000)
#   SANDBOX_MEM      guest memory (default 1G)
#   SANDBOX_KEEP=1   keep the per-run dir (.sandbox/run-XXXX) for debugging
#   SANDBOX_QUIET=1  no progress lines on stderr
#   SANDBOX_CPU      the host processor the kernel runs on: N, or none;
#                    unset: one no other sandbox boot holds (guest.sh)
# Passed into the guest: CI, NODE_OPTIONS, DEBUG, TAP*, IPVS_NETLINK_*, CHURN_*, BENCH_*.
# Exit status: CMD's status; 124 if the guest timed out; 125 for sandbox
# failures (kernel crashed, no status written, ...).
set -euo pipefail

[ "$#" -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SAY_PREFIX=sandbox
# shellcheck source=guest.sh
. "$SCRIPT_DIR/guest.sh"
UML=${SANDBOX_UML:-/usr/bin/linux.uml}
MODBASE=/usr/lib/uml/modules
MEM=${SANDBOX_MEM:-1G}

[ -x "$UML" ] || die "$UML not found (run scripts/sandbox/ensure-deps.sh)"
KVER=$(ls -1 "$MODBASE" 2>/dev/null | head -n1)
[ -n "$KVER" ] && [ -d "$MODBASE/$KVER" ] || die "no UML modules under $MODBASE"

guest_mount_plan

# --- LD_PRELOAD shim that makes UML 6.1 work on hosts with big XSAVE areas ---
SHIM_SRC=$SCRIPT_DIR/uml-xstate-shim.c
mkdir -p "$PROJECT/.sandbox"
SHIM_SUM=$(cksum <"$SHIM_SRC" | cut -d' ' -f1)
SHIM=$PROJECT/.sandbox/uml-xstate-shim-$SHIM_SUM.so
if [ ! -f "$SHIM" ]; then
	command -v cc >/dev/null || die "cc not found (needed to build $SHIM_SRC); run scripts/sandbox/ensure-deps.sh"
	cc -O2 -shared -fPIC -o "$SHIM.tmp.$$" "$SHIM_SRC" -ldl || die "building $SHIM_SRC failed"
	mv -f "$SHIM.tmp.$$" "$SHIM"
fi

RUN=$(mktemp -d "$PROJECT/.sandbox/run-XXXXXX")
UMLPID=
WATCHDOG=
TAILPID=

# Kill what is left of the guest: every process of linux.uml's process group
# (its userspace helpers) — by pid, only processes that are linux.uml.
kill_guest() {
	local sig=$1 p
	[ -n "$UMLPID" ] || return 0
	for p in $(ps -o pid= -g "$UMLPID" 2>/dev/null || true); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = linux.uml ]; then
			kill "-$sig" "$p" 2>/dev/null || true
		fi
	done
}
stop_guest() {
	[ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null || true
	[ -n "$TAILPID" ] && kill "$TAILPID" 2>/dev/null || true
	kill_guest KILL
}
guest_on_exit stop_guest

guest_env_file
guest_write_init uml "$MODBASE" "$(guest_modules "$MODBASE/$KVER")" "$@"
mkdir -p "$RUN/uml"

guest_cpu_pin
say "booting linux.uml $KVER (mem=$MEM, timeout ${TIMEOUT}s) ..."
START=$(date +%s.%N)

# setsid: linux.uml and all helper processes it forks share one new process
# group, so they can all be found and killed.
LD_PRELOAD=$SHIM setsid "${PIN[@]}" "$UML" mem="$MEM" root=/dev/root rootfstype=hostfs rootflags=/ rw \
	init="$RUN/init.sh" uml_dir="$RUN/uml" umid=sandbox \
	con=null con0=null,fd:1 ssl=null quiet \
	</dev/null >"$RUN/console.log" 2>&1 &
UMLPID=$!
guest_cpu_release

( sleep "$TIMEOUT" && touch "$RUN/timedout" && kill_guest TERM && sleep 5 && kill_guest KILL ) \
	</dev/null >/dev/null 2>&1 &
WATCHDOG=$!

guest_follow "$UMLPID"
UMLRC=$KERNEL_RC
kill "$WATCHDOG" 2>/dev/null || true
wait "$WATCHDOG" 2>/dev/null || true
WATCHDOG=
kill_guest KILL

if [ -e "$RUN/timedout" ]; then
	echo "$SAY_PREFIX: sandbox kernel did not finish within ${TIMEOUT}s (SANDBOX_TIMEOUT); killed" >&2
	exit 124
fi
guest_status "$UMLRC"
