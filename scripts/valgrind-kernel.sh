#!/usr/bin/env bash
# scripts/valgrind-kernel.sh [--plain]
#
# The addon under valgrind's memcheck against a kernel with IPVS: in the
# user-mode-linux sandbox, where ASan and LSan cannot start (see
# scripts/asan-test.sh), this is what checks the addon's memory on the real
# kernel paths: invalid reads and writes, uses of uninitialised values,
# mismatched frees and definite leaks. scripts/valgrind-exercise.mjs drives
# IPVS (batches with failures in the middle, dumps, gets, config), ipset and
# rtnetlink, in a network namespace of its own.
#
# Node is not the subject: only reports whose stack passes through
# ipvs_netlink.node count, and any one of them fails the run (exit 1). The
# whole valgrind log is kept in .sandbox/valgrind/ for reading.
# --plain runs the exercise without valgrind (to check the script itself).
# Env: VALGRIND_ROUNDS (default 3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
inside() { [ -e /proc/net/ip_vs ] || { modprobe -q ip_vs 2>/dev/null && [ -e /proc/net/ip_vs ]; }; }
# The sandbox guest runs the host's own files (hostfs): install on the host.
if ! command -v valgrind >/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null && [ "$(hostname)" != sandbox ]; then
	echo "valgrind-kernel: installing valgrind (apt-get)" >&2
	apt-get install -y -q valgrind >&2 || { apt-get update -q >&2 && apt-get install -y -q valgrind >&2; } || true
fi
if ! inside; then
	exec bash scripts/with-kernel.sh bash "$ROOT/scripts/valgrind-kernel.sh" "$@"
fi
[ -f dist/lib/index.js ] || { echo "valgrind-kernel: build the TypeScript first (npx tsc -p tsconfig.json)" >&2; exit 1; }
# A namespace with routes to the addresses the exercise uses (the kernel
# refuses a masq destination it cannot route to).
NETNS_SETUP='ip link set lo up && ip link add vg0 type dummy && ip link set vg0 up &&
	ip addr add 10.0.0.254/8 dev vg0 && ip -6 addr add fd00::fe/16 dev vg0 nodad && exec "$@"'
if [ "${1:-}" = --plain ]; then
	exec unshare -n sh -c "$NETNS_SETUP" sh node scripts/valgrind-exercise.mjs
fi
command -v valgrind >/dev/null || { echo "valgrind-kernel: FAILED: valgrind is missing; as root: apt-get install -y valgrind" >&2; exit 1; }
LOGDIR=$ROOT/.sandbox/valgrind
mkdir -p "$LOGDIR"
LOG=$LOGDIR/memcheck.log
rm -f "$LOG"
echo "valgrind-kernel: memcheck on scripts/valgrind-exercise.mjs (minutes: valgrind runs node ~50x slower)" >&2
set +e
unshare -n sh -c "$NETNS_SETUP" sh valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
	--num-callers=40 --trace-children=no --log-file="$LOG" node scripts/valgrind-exercise.mjs
rc=$?
set -e
[ -s "$LOG" ] || { echo "valgrind-kernel: no valgrind log" >&2; exit 1; }
# Each report is a block of "==PID== " lines ending with an empty one; keep
# the blocks that name the addon.
ours=$(awk '
	/^==[0-9]+== $/ { if (block ~ /ipvs_netlink\.node/) { print block; n++ } block = ""; next }
	/^==[0-9]+== / { block = block $0 "\n" }
	END { if (block ~ /ipvs_netlink\.node/) { print block; n++ } }' "$LOG")
grep -E '^==[0-9]+== (ERROR SUMMARY|   definitely lost|   indirectly lost|   possibly lost)' "$LOG" | sed 's/^==[0-9]*== /valgrind-kernel: node total: /' >&2 || true
if [ -n "$ours" ]; then
	echo "valgrind-kernel: FAILED: reports in the addon (full log: $LOG):" >&2
	echo "$ours" >&2
	exit 1
fi
if [ "$rc" -ne 0 ]; then
	echo "valgrind-kernel: FAILED: the exercise exited $rc (log: $LOG)" >&2
	exit 1
fi
echo "valgrind-kernel: no report in ipvs_netlink.node (log: $LOG)" >&2
