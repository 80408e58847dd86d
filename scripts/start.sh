#!/usr/bin/env bash
# scripts/start.sh — the main job (`npm start`): kube-proxy-ipvs on the
# embedded default (the examples/ manifests, no cluster needed). Boots the
# sandbox kernel when this one has no IPVS (scripts/with-kernel.sh), builds
# a small node with pods in network namespaces, starts the proxy, shows the
# IPVS table and requests answered through a ClusterIP and a NodePort, and
# keeps running, watching the manifests, until Ctrl-C.
#
#   npm start                          run until Ctrl-C
#   npm start -- --demo-duration 20    stop by itself after 20 s (CI smoke test)
#   DEMO_DURATION=20 npm start         the same
#
# Ctrl-C: the sandbox kernel runs in its own process group, so the signal
# reaches only this script, which asks the guest to stop (a stop file the
# guest polls, visible to it through hostfs) and waits up to 30 s for a
# clean exit before killing the guest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DURATION=${DEMO_DURATION:-0}
while [ $# -gt 0 ]; do
	case "$1" in
	--demo-duration) DURATION=${2:?--demo-duration needs a number of seconds}; shift 2 ;;
	--demo-duration=*) DURATION=${1#*=}; shift ;;
	*) echo "start.sh: unknown argument '$1' (use --demo-duration SECONDS)" >&2; exit 2 ;;
	esac
done
case "$DURATION" in '' | *[!0-9]*) echo "start.sh: --demo-duration must be a whole number of seconds" >&2; exit 2 ;; esac

bash scripts/sandbox/ensure-deps.sh
# A Node.js that meets the packages' engines, for the build and the demo's
# guest: Node.js 24 from the registry when this machine's is older.
. scripts/node-runtime.sh
node_runtime_use
[ -f build/Release/ipvs_netlink.node ] || npx --no-install node-gyp rebuild
# Always compile (the library, then the proxy): a stale dist/ would run yesterday's proxy.
npx --no-install tsc -p tsconfig.json
npx --no-install tsc -p kube-proxy-ipvs/tsconfig.json

mkdir -p .sandbox
STOPFILE=$(pwd -P)/.sandbox/demo-stop-$$
rm -f "$STOPFILE"
export IPVS_NETLINK_DEMO_STOPFILE=$STOPFILE IPVS_NETLINK_DEMO_DURATION=$DURATION
# The sandbox may not finish in less than the demo: give it room.
if [ "$DURATION" != 0 ]; then export SANDBOX_TIMEOUT=${SANDBOX_TIMEOUT:-$((DURATION + 300))}; else export SANDBOX_TIMEOUT=${SANDBOX_TIMEOUT:-86400}; fi

setsid bash scripts/with-kernel.sh bash scripts/demo/guest.sh &
CHILD=$!
stop() {
	trap - INT TERM
	echo "start.sh: stopping (up to 30 s) ..." >&2
	touch "$STOPFILE"
	for _ in $(seq 1 300); do kill -0 "$CHILD" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$CHILD" 2>/dev/null; then
		echo "start.sh: the demo did not stop in time; killing the sandbox" >&2
		kill -TERM -- "-$CHILD" 2>/dev/null || true
	fi
}
trap stop INT TERM
set +e
wait "$CHILD"; RC=$?
# wait returns early when a trapped signal arrives: wait for the real exit.
# After Ctrl-C the status is then 130 (128+SIGINT), as for any interrupted command.
while kill -0 "$CHILD" 2>/dev/null; do wait "$CHILD"; RC=$?; done
rm -f "$STOPFILE"
exit "$RC"
