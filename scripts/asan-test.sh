#!/usr/bin/env bash
# scripts/asan-test.sh [unit|host-ipset|kernel|all]...   (default: unit)
# scripts/asan-test.sh --exec CMD [ARGS...]
#
# Runs the tests against an AddressSanitizer + LeakSanitizer build of the
# addon. The build goes to .sandbox/asan/ (a copy of binding.gyp + native/),
# never to build/Release, which others keep using; tests load it through
# IPVS_NETLINK_ADDON (lib/netlink/binding.ts).
#   unit        tap test/unit
#   host-ipset  tap test/kernel/ipset-*.test.ts on this host (root)
#   kernel      tap test/kernel where IPVS exists (scripts/with-kernel.sh);
#               inside the sandbox this script runs again with --exec, since
#               run.sh passes only IPVS_NETLINK_* into the guest
# --exec sets up the sanitizer environment and runs CMD: LD_PRELOAD of the
# compiler's libasan (node is not instrumented, so the runtime must load
# first), leak checking on, Node's own leaks suppressed (scripts/asan-lsan.supp).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
ASAN_DIR=$ROOT/.sandbox/asan
ADDON=$ASAN_DIR/build/Release/ipvs_netlink.node
TAP=$ROOT/node_modules/.bin/tap

if [ "${1:-}" = --exec ]; then
	shift
	LIBASAN=$(${CXX:-g++} -print-file-name=libasan.so)
	[ -f "$LIBASAN" ] || { echo "asan-test: libasan not found (apt-get install -y libasan8)" >&2; exit 1; }
	# UML gives processes a user address space below ASan's fixed shadow
	# range (0x7fff8000..0x10007fff8000): every instrumented process aborts
	# with "Shadow memory range interleaves". Say so instead of that dump.
	if [ "${IPVS_NETLINK_KERNEL:-}" = sandbox ] && [ "$(hostname)" = sandbox ]; then
		echo "asan-test: ASan cannot run inside the user-mode-linux sandbox (address space too small for its shadow); kernel tests under ASan need a host kernel with IPVS" >&2
		exit 125
	fi
	export IPVS_NETLINK_ADDON=${IPVS_NETLINK_ADDON:-$ADDON}
	# halt_on_error: the first error fails the process (and so the test).
	# exitcode 23 marks sanitizer failures apart from ordinary ones.
	export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=23:abort_on_error=0:detect_odr_violation=0:${IPVS_NETLINK_ASAN_OPTIONS:-}
	export LSAN_OPTIONS=suppressions=$ROOT/scripts/asan-lsan.supp:print_suppressions=0:exitcode=23
	export LD_PRELOAD=$LIBASAN
	exec "$@"
fi

build() {
	# Rebuild when any native source or binding.gyp is newer than the addon.
	if [ -f "$ADDON" ] && [ -z "$(find native binding.gyp -newer "$ADDON" -print -quit)" ]; then return; fi
	echo "asan-test: building the ASan addon in $ASAN_DIR" >&2
	rm -rf "$ASAN_DIR/native"
	mkdir -p "$ASAN_DIR"
	cp -r native binding.gyp "$ASAN_DIR/"
	rm -rf "$ASAN_DIR/native/fuzz"
	# Use the headers next to this node when it has them (no download).
	local nodedir=() prefix
	prefix=$(dirname "$(dirname "$(node -p process.execPath)")")
	[ -f "$prefix/include/node/node_api.h" ] && nodedir=(--nodedir="$prefix")
	# node-addon-api resolves from the parent folders (the project's node_modules).
	(cd "$ASAN_DIR" &&
		CXXFLAGS="-fsanitize=address -fno-omit-frame-pointer -g -O1" LDFLAGS="-fsanitize=address" \
			node "$ROOT/node_modules/node-gyp/bin/node-gyp.js" rebuild "${nodedir[@]}" -j 2 >build.log 2>&1) ||
		{ tail -n 30 "$ASAN_DIR/build.log" >&2; echo "asan-test: build failed" >&2; exit 1; }
	# The build must really be instrumented, or the run proves nothing.
	nm -D "$ADDON" | grep -q __asan_report_ || { echo "asan-test: $ADDON is not instrumented" >&2; exit 1; }
}

# Kernel test files minus the RSS leak tests: ASan's allocator keeps freed
# memory in quarantine, so RSS says nothing there (LSan checks leaks instead).
kernel_tests() { ls test/kernel/${1:-}*.test.ts | grep -v leak; }

build
status=0
for what in "${@:-unit}"; do
	case "$what" in
	unit) cmd=("$0" --exec "$TAP" --reporter=base test/unit) ;;
	host-ipset) cmd=("$0" --exec "$TAP" --reporter=base $(kernel_tests ipset-)) ;;
	kernel) cmd=(bash scripts/with-kernel.sh "$0" --exec "$TAP" --reporter=base --jobs=1 $(kernel_tests)) ;;
	all) "$0" unit host-ipset kernel || status=1; continue ;;
	*) echo "usage: $0 [unit|host-ipset|kernel|all]... | --exec CMD" >&2; exit 2 ;;
	esac
	echo "== asan: $what ==" >&2
	"${cmd[@]}" || { echo "asan-test: $what FAILED" >&2; status=1; }
done
exit $status
