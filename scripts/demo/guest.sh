#!/usr/bin/env bash
# scripts/demo/guest.sh — runs where IPVS is (the sandbox kernel, or a host
# with IPVS): builds a small "node" in network namespaces, starts
# kube-proxy-ipvs on the examples/ manifests, shows the IPVS table and
# requests answered through a ClusterIP and a NodePort, then keeps running
# (watching the manifests) until asked to stop.
#
#   kpdemo-node    the node: 192.168.56.10 (demo-node.yaml's InternalIP); the proxy programs it (--netns)
#   kpdemo-client  an outside client 192.168.56.100, for the NodePort
#   kpdemo-pods-a  10.244.1.10 (api), 10.244.1.20 (web)   (node-a's pods)
#   kpdemo-pods-b  10.244.2.11 (api), 10.244.2.21 (web)   (node-b's pods, routed through the node too)
#
# Stops when IPVS_NETLINK_DEMO_STOPFILE appears (start.sh creates it on
# Ctrl-C), after IPVS_NETLINK_DEMO_DURATION seconds if set, or on SIGINT/SIGTERM.
# Everything is created in fresh namespaces: nothing outside them is touched.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$(pwd)
NS_NODE=kpdemo-node NS_CLIENT=kpdemo-client NS_A=kpdemo-pods-a NS_B=kpdemo-pods-b
STOPFILE=${IPVS_NETLINK_DEMO_STOPFILE:-}
DURATION=${IPVS_NETLINK_DEMO_DURATION:-0}
LOG=${IPVS_NETLINK_DEMO_LOG:-$ROOT/.sandbox/kube-proxy-ipvs-demo.log}
mkdir -p "$(dirname "$LOG")"
PIDS=()
PROXY_PID=

say() { printf '\n== %s\n' "$*"; }
inns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

teardown() {
	trap - EXIT INT TERM
	if [ -n "$PROXY_PID" ] && kill -0 "$PROXY_PID" 2>/dev/null; then
		kill -TERM "$PROXY_PID"
		# The proxy stops within 10 s by itself; do not wait longer than that.
		for _ in $(seq 1 100); do kill -0 "$PROXY_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$PROXY_PID" 2>/dev/null || true
	fi
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for ns in $NS_CLIENT $NS_A $NS_B $NS_NODE; do ip netns delete "$ns" 2>/dev/null || true; done
	echo "demo: stopped; namespaces removed (proxy log: $LOG)"
}
trap teardown EXIT
trap 'exit 0' INT TERM

for ns in $NS_NODE $NS_CLIENT $NS_A $NS_B; do
	ip netns delete "$ns" 2>/dev/null || true
	ip netns add "$ns"
	inns "$ns" ip link set lo up
done

# node <-> client (the node's InternalIP from examples/demo-node.yaml)
ip link add eth0 netns $NS_NODE type veth peer name eth0 netns $NS_CLIENT
inns $NS_NODE ip addr add 192.168.56.10/24 dev eth0
inns $NS_NODE ip link set eth0 up
inns $NS_CLIENT ip addr add 192.168.56.100/24 dev eth0
inns $NS_CLIENT ip link set eth0 up
# node <-> pods; the pods route everything back through the node (as a CNI would)
for side in a:1 b:2; do
	ns=kpdemo-pods-${side%%:*} n=${side##*:}
	ip link add pods-$n netns $NS_NODE type veth peer name eth0 netns "$ns"
	inns $NS_NODE ip addr add 10.244.$n.1/24 dev pods-$n
	inns $NS_NODE ip link set pods-$n up
	inns "$ns" ip link set eth0 up
	inns "$ns" ip route add default via 10.244.$n.1 2>/dev/null || true
done
inns $NS_A ip addr add 10.244.1.10/24 dev eth0
inns $NS_A ip addr add 10.244.1.20/24 dev eth0
inns $NS_B ip addr add 10.244.2.11/24 dev eth0
inns $NS_B ip addr add 10.244.2.21/24 dev eth0
inns $NS_A ip route replace default via 10.244.1.1
inns $NS_B ip route replace default via 10.244.2.1

# One small HTTP server per endpoint address, answering who it is.
SERVER='const [ip, name] = process.argv.slice(1);
require("http").createServer((q, s) => s.end(`${name} ${ip}\n`)).listen(8080, ip, () => console.log("listening"));'
backend() {
	local ns=$1 ip=$2 name=$3
	ip netns exec "$ns" node -e "$SERVER" "$ip" "$name" >/dev/null 2>&1 &
	PIDS+=($!)
}
backend $NS_A 10.244.1.10 api-pod-1
backend $NS_A 10.244.1.20 web-pod-1
backend $NS_B 10.244.2.11 api-pod-2
backend $NS_B 10.244.2.21 web-pod-2

say "starting kube-proxy-ipvs on examples/ (logs: $LOG)"
# NodePorts listen on the node's network (192.168.56.0/24), not on its
# pod-side interfaces, as operators usually set --nodeport-addresses.
echo "node kube-proxy-ipvs/dist/lib/cli/main.js --manifests examples --hostname-override node-a --netns /run/netns/$NS_NODE --nodeport-addresses 192.168.56.0/24 --healthz-bind-address 127.0.0.1:10256 --metrics-bind-address 127.0.0.1:10249"
node kube-proxy-ipvs/dist/lib/cli/main.js --manifests examples --hostname-override node-a --netns /run/netns/$NS_NODE \
	--nodeport-addresses 192.168.56.0/24 \
	--healthz-bind-address 127.0.0.1:10256 --metrics-bind-address 127.0.0.1:10249 -v 2 >"$LOG" 2>&1 &
PROXY_PID=$!

ok=
for _ in $(seq 1 150); do
	if ! kill -0 "$PROXY_PID" 2>/dev/null; then
		echo "demo: kube-proxy-ipvs exited:"; tail -n 20 "$LOG"; exit 1
	fi
	if curl -fsS -m 1 http://127.0.0.1:10256/healthz 2>/dev/null | grep -q lastUpdated &&
		[ "$(curl -fsS -m 1 http://127.0.0.1:10249/metrics 2>/dev/null | awk '/^kubeproxy_sync_proxy_rules_duration_seconds_count/ { print $2 }')" != "" ] &&
		[ "$(curl -fsS -m 1 http://127.0.0.1:10249/metrics | awk '/^kubeproxy_sync_proxy_rules_duration_seconds_count/ { print $2 }')" != 0 ]; then
		ok=1; break
	fi
	sleep 0.2
done
[ -n "$ok" ] || { echo "demo: no sync completed; log:"; tail -n 30 "$LOG"; exit 1; }

say "IPVS table in the node (ipvsadm -Ln)"
inns $NS_NODE ipvsadm -Ln
say "addresses on kube-ipvs0"
inns $NS_NODE ip -brief addr show kube-ipvs0

say "requests from the node to the api ClusterIP 10.96.100.10:80 (round robin over both api pods)"
for _ in 1 2 3 4; do inns $NS_NODE curl -sS -m 3 http://10.96.100.10/ || echo "(no answer)"; done
say "requests from an outside client to the web NodePort 192.168.56.10:30080"
for _ in 1 2 3 4; do inns $NS_CLIENT curl -sS -m 3 http://192.168.56.10:30080/ || echo "(no answer)"; done
say "healthz and a few metrics"
curl -sS -m 2 http://127.0.0.1:10256/healthz; echo
# Histograms by their count and sum: their buckets would fill the screen.
curl -sS -m 2 http://127.0.0.1:10249/metrics | grep -E '^kubeproxy_(ipvs_|ipset_entries|sync_proxy_rules_(duration_seconds_count|last_timestamp))' | grep -v '_bucket{'

if [ "$DURATION" != 0 ]; then
	say "running for ${DURATION}s (IPVS_NETLINK_DEMO_DURATION)"
else
	say "running; edit examples/demo-*.yaml to see the table follow; Ctrl-C to stop"
fi
START=$(date +%s)
# Compare the rules only (-Sn), not -Ln, whose connection counters move by themselves.
LAST=$(inns $NS_NODE ipvsadm -Sn 2>/dev/null)
while :; do
	[ -n "$STOPFILE" ] && [ -e "$STOPFILE" ] && break
	[ "$DURATION" != 0 ] && [ $(( $(date +%s) - START )) -ge "$DURATION" ] && break
	kill -0 "$PROXY_PID" 2>/dev/null || { echo "demo: kube-proxy-ipvs exited:"; tail -n 20 "$LOG"; exit 1; }
	NOW=$(inns $NS_NODE ipvsadm -Sn 2>/dev/null)
	if [ "$NOW" != "$LAST" ]; then
		say "the manifests changed; IPVS table now:"
		inns $NS_NODE ipvsadm -Ln
		LAST=$NOW
	fi
	sleep 1
done
say "stopping"
exit 0
