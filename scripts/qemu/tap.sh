#!/usr/bin/env bash
# scripts/qemu/tap.sh [--files] [TAP ARGS...] FILES...: tap, one file at a
# time, in the QEMU sandbox (WITH_KERNEL=qemu scripts/with-kernel.sh), with
# the project's TypeScript transpiled on the host first
# (../test-files/ts-transpile.mjs) and served in the guest by
# ../test-files/ts-transpiled.mjs instead of ts-node: under emulation ts-node
# costs each test file's process minutes. --files runs the files with node
# directly instead of tap's runner (../test-files/test-files.sh: the same TAP,
# minutes sooner; what scripts/test.sh uses).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
node scripts/test-files/ts-transpile.mjs
export NODE_OPTIONS="--import=$ROOT/scripts/test-files/ts-transpiled.mjs${NODE_OPTIONS:+ $NODE_OPTIONS}"
if [ "${1:-}" = --files ]; then
	shift
	WITH_KERNEL=qemu exec bash scripts/with-kernel.sh bash scripts/test-files/test-files.sh "$@"
fi
# tap itself, not through npx: npm's own start costs a minute there.
WITH_KERNEL=qemu exec bash scripts/with-kernel.sh "$ROOT/node_modules/.bin/tap" --jobs=1 "$@"
