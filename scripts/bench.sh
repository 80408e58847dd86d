#!/usr/bin/env bash
# scripts/bench.sh [bench/run.mjs's flags] — `npm run bench`: the benchmarks
# on a Node.js that meets the packages' engines (Node.js 24 from the registry
# when this machine's node is older, as `npm test` and `npm start` run), so
# the figures are those of the runtime the packages support and the proxy's
# image runs. The sandbox guests take node from this PATH.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/node-runtime.sh
node_runtime_use
exec node bench/run.mjs "$@"
