# scripts/node-runtime.sh — sourced by scripts/test.sh and scripts/start.sh
# (from the project's root): every later `node` is one the packages support.
#
# When the machine's node is older than the packages' "engines" minimum
# (package.json), this fetches the registry's Node.js 24 (scripts/runtimes.sh
# node24, the line the proxy's image runs) and puts its bin/ first on PATH.
# Everything after then runs on it: npx, tap and node-gyp start through
# `#!/usr/bin/env node`, tap's test processes are that node's children, and
# the sandbox guests take node from the caller's PATH
# (scripts/sandbox/guest.sh). npm itself stays the machine's, run by the
# new node.
#
# node-gyp builds the addon against the headers of the node it runs on, and
# would download them; the runtime package carries them (include/node, with
# the common.gypi and config.gypi of that build), so npm_config_nodedir
# points node-gyp there: no second download, and the compiler sees the
# headers of the node that loads the addon. Node-API 8 keeps the binary the
# same for every line (the packages' prebuilds use 22's headers,
# scripts/prebuild.sh), so an addon built earlier against another node's
# headers still loads and is kept.
#
# One line says which node runs. Set IPVS_NETLINK_NODE=machine to keep the
# machine's node regardless (it must still meet the minimum).

node_runtime_check() { # -> 0 when node meets the engines minimum, 1 when older; prints the minimum
	node -e '
		const want = require("./package.json").engines.node;
		const m = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(want);
		if (!m) { console.error(`node-runtime: package.json engines.node "${want}" is not ">=X.Y.Z"`); process.exit(2); }
		const have = process.versions.node.split(".").map(Number);
		const min = m.slice(1).map(Number);
		const diff = have.map((v, i) => v - min[i]).find((d) => d !== 0) ?? 0;
		console.log(want);
		process.exit(diff < 0 ? 1 : 0);'
}

node_runtime_use() {
	local want rc bin
	command -v node >/dev/null || { echo "node-runtime: no node on PATH: install Node.js 22.12 or newer" >&2; return 1; }
	# (written so that set -e in the caller does not stop at an old node)
	want=$(node_runtime_check) && rc=0 || rc=$?
	[ "$rc" -le 1 ] || return 1
	if [ "$rc" -eq 0 ]; then
		echo "node: Node.js $(node --version) ($(command -v node)), which meets engines $want" >&2
		return 0
	fi
	if [ "${IPVS_NETLINK_NODE:-}" = machine ]; then
		echo "node-runtime: IPVS_NETLINK_NODE=machine, but this machine's node $(node --version) is older than engines $want" >&2
		return 1
	fi
	local old
	old=$(node --version)
	bin=$(bash scripts/runtimes.sh bin node24) || { echo "node-runtime: fetching Node.js 24 failed (scripts/runtimes.sh fetch node24 says why)" >&2; return 1; }
	export PATH=$(dirname "$bin"):$PATH
	export npm_config_nodedir=$(dirname "$(dirname "$bin")")
	echo "node: this machine's node $old is older than engines $want: every step runs on Node.js $(node --version) (scripts/runtimes.sh node24, in .cache/runtimes/), the addon built against its headers" >&2
}
