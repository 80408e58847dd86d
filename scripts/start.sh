#!/usr/bin/env bash
# scripts/start.sh — the main job (`npm start`): program IPVS through the
# library and print the table as ipvsadm -Ln would. Runs on this kernel when
# it has IPVS, else boots the user-mode-linux 6.1 sandbox kernel for it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/sandbox/ensure-deps.sh
[ -f build/Release/ipvs_netlink.node ] || npx --no-install node-gyp rebuild
[ -f dist/lib/index.js ] || npx --no-install tsc -p tsconfig.json
exec bash scripts/with-kernel.sh node examples/ipvs-demo.mjs
