#!/usr/bin/env bash
# scripts/qemu/tap.sh [TAP ARGS...] FILES...: tap, one file at a time, in the
# QEMU sandbox (WITH_KERNEL=qemu scripts/with-kernel.sh), with the project's
# TypeScript transpiled on the host first (ts-transpile.mjs) and served in
# the guest by ts-transpiled.mjs instead of ts-node: under emulation ts-node
# costs each test file's process minutes.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
node scripts/qemu/ts-transpile.mjs
export NODE_OPTIONS="--import=$ROOT/scripts/qemu/ts-transpiled.mjs${NODE_OPTIONS:+ $NODE_OPTIONS}"
# tap itself, not through npx: npm's own start costs a minute there.
WITH_KERNEL=qemu exec bash scripts/with-kernel.sh "$ROOT/node_modules/.bin/tap" --jobs=1 "$@"
