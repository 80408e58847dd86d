#!/usr/bin/env bash
# scripts/package-test.sh — the two packages as users install them (`npm run
# test:package`; a step of scripts/test.sh). Prints TAP; its parts' times go
# to stderr as "test: package: ..." lines.
#
#  1. the runtimes (scripts/runtimes.sh: Node.js 22 and 24, 24 on arm64, Bun)
#     and the prebuilds (scripts/prebuild.sh: x64 and arm64; incremental)
#  2. `npm pack` of both packages; their prepack scripts compile the
#     JavaScript afresh, without source maps
#  3. fresh projects under .sandbox/package-test/ install the tarballs with
#     npm run by Node.js 24 and a PATH holding node, npm and sh only: no
#     compiler, make or python3, so a package that needed one fails here.
#       esm/    "type": "module"        cjs/   "type": "commonjs"
#       types/  a strict TypeScript consumer (typescript and @types/node too)
#       proxy/  kube-proxy-ipvs with the library
#       tests/  the library's unit tests and host ipset tests, compiled to
#               JavaScript, whose imports of lib/ reach the installed copy
#  4. tap test/package/*.test.ts reads what 2 and 3 left and checks it:
#     each tarball's file list, the dependency count, the consumers, the
#     library's tests on each runtime (arm64 under qemu-user).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
W=$ROOT/.sandbox/package-test

say() { echo "test: package: $*" >&2; }
fail() { say "$*"; exit 1; }
timed() { # LABEL CMD...: runs CMD, its output to $W/LABEL.log, and says how long it took
	local label=$1 started=$SECONDS
	shift
	if ! "$@" >"$W/$label.log" 2>&1; then
		tail -n 40 "$W/$label.log" >&2
		fail "$label failed (log: .sandbox/package-test/$label.log)"
	fi
	say "$label: $((SECONDS - started)) s"
}

rm -rf "$W"
mkdir -p "$W/tarballs" "$W/bin"

# 1. Runtimes and prebuilds.
timed runtimes bash scripts/runtimes.sh fetch
timed prebuilds bash scripts/prebuild.sh x64 arm64

# 2. The tarballs, packed from a copy of the sources: each package's prepack
# removes and recompiles its dist/, and this tree's dist/ is what the kernel
# tests running beside this step (scripts/test.sh's kernel lane) load; a
# pack in place once pulled a module from under a starting proxy. The copy
# shares node_modules and the runtimes cache, and keeps the sources' times,
# so the prebuilds made in step 1 count as current there.
copy_sources() {
	mkdir -p "$W/src" &&
		tar -C "$ROOT" -cf - --exclude=./.git --exclude=./node_modules --exclude=./.sandbox --exclude=./.cache \
			--exclude=./build --exclude=./dist --exclude=./kube-proxy-ipvs/dist --exclude=./bench/.build . |
		tar -C "$W/src" -xf - &&
		ln -s "$ROOT/node_modules" "$W/src/node_modules" &&
		ln -s "$ROOT/.cache" "$W/src/.cache"
}
timed copy-sources copy_sources
pack() { (cd "$W/src" && npm pack --pack-destination "$W/tarballs" "$@"); }
timed pack-library pack
timed pack-proxy pack -w kube-proxy-ipvs

# 3. Fresh projects, installed with no compiler on PATH.
node24=$(bash scripts/runtimes.sh bin node24)
npm_cli=$(readlink -f "$(command -v npm)")
ln -s "$node24" "$W/bin/node"
ln -s "$(command -v dash || command -v sh)" "$W/bin/sh"
printf '#!/bin/sh\nexec node %q "$@"\n' "$npm_cli" >"$W/bin/npm"
chmod +x "$W/bin/npm"
for tool in cc c++ gcc g++ make python3; do
	PATH=$W/bin command -v "$tool" >/dev/null 2>&1 && fail "$tool is on the install PATH"
done
library=$(ls "$W"/tarballs/ipvs-netlink-*.tgz)
proxy=$(ls "$W"/tarballs/kube-proxy-ipvs-*.tgz)
project() { # DIR TYPE PACKAGE...: a new project that installs PACKAGEs
	local dir=$W/$1 type=$2
	shift 2
	mkdir -p "$dir"
	printf '{ "name": "consumer-%s", "private": true, "type": "%s" }\n' "$(basename "$dir")" "$type" >"$dir/package.json"
	(cd "$dir" && PATH="$W/bin" npm install --no-audit --no-fund --prefer-offline \
		--foreground-scripts --loglevel=warn "$@")
}
timed install-esm project esm module "$library"
timed install-cjs project cjs commonjs "$library"
# The compiler and Node's types at the versions this repository builds with.
ts_version=$(node -p 'require("./node_modules/typescript/package.json").version')
types_node=$(node -p 'require("./node_modules/@types/node/package.json").version')
timed install-types project types module "$library" "typescript@$ts_version" "@types/node@$types_node"
timed install-proxy project proxy module "$library" "$proxy"
timed install-tests project tests module "$library"

# The library's own tests, compiled; their "../../lib/X.js" imports resolve
# through tests/lib to the installed package's dist/lib, tap to this
# repository's (a test tool, not the library's dependency).
compile_tests() {
	npx --no-install tsc -p test/package/tsconfig.library-tests.json --outDir "$W/tests" &&
		rm -rf "$W/tests/lib" &&
		ln -s node_modules/ipvs-netlink/dist/lib "$W/tests/lib" &&
		ln -s "$ROOT/test/fixtures" "$W/tests/test/fixtures" &&
		ln -s "$ROOT/node_modules/tap" "$W/tests/node_modules/tap"
}
timed compile-tests compile_tests

# 4. The checks.
export PACKAGE_TEST_DIR=$W
exec npx --no-install tap --reporter=tap --jobs=1 test/package/*.test.ts
