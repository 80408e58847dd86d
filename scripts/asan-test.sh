#!/usr/bin/env bash
# scripts/asan-test.sh [unit|host-ipset|host-tsan|qemu-tsan|kernel|kernel-ubsan|all]...   (default: unit)
# scripts/asan-test.sh --exec asan|ubsan CMD [ARGS...]
# Env: ASAN_TEST_REPORTER (tap's reporter where tap's runner runs the files,
# default base), IPVS_NETLINK_ASAN_OPTIONS. unit and host-ipset run each file
# by node directly (files_under below) and print TAP.
#
# Runs the tests against sanitizer builds of the addon. Builds go to
# .sandbox/asan/ and .sandbox/ubsan/ (a copy of binding.gyp + native/), never
# to build/Release, which others keep using; tests load them through
# IPVS_NETLINK_ADDON (lib/netlink/binding.ts).
#   unit          test/unit (the library's, those that reach the addon), ASan + LSan + UBSan
#   host-ipset    test/kernel/ipset-*.test.ts on this host (root),
#                 conntrack-*.test.ts where it has conntrack netlink, and
#                 nft-events and nft-objects, ASan + LSan + UBSan
#   host-tsan     tap test/sanitizer/threads.test.ts on this host (root): a
#                 program that keeps using handles on the JavaScript thread
#                 while their jobs and a conntrack event stream's reader run
#                 on others, against an addon built with ThreadSanitizer (the
#                 test runs it under the sanitizer; tap itself runs without,
#                 as the whole suite under it is many times too slow, and
#                 without coverage, whose recorder tap would load into the
#                 program as well, in the QEMU guest too); on
#                 this host's kernel
#   qemu-tsan     the same for IPVS, in the QEMU sandbox kernel (TSan, like
#                 ASan, cannot start in user-mode-linux): minutes of
#                 emulation, so scripts/nightly.sh runs it, not CI
#                 (test/sanitizer/threads-ipvs-qemu.test.ts)
#   kernel        tap test/kernel and kube-proxy-ipvs/test/kernel, ASan + LSan + UBSan, where IPVS exists on
#                 the host kernel. In the user-mode-linux sandbox ASan and
#                 LSan cannot start (see below): exits 125 saying so.
#   kernel-ubsan  tap test/kernel in the sandbox (or on the host) with UBSan,
#                 the sanitizer that does run there
#   all           unit host-ipset host-tsan qemu-tsan kernel-ubsan, and kernel
#                 when the host has IPVS
# Inside the sandbox this script runs again with --exec, since run.sh
# passes only IPVS_NETLINK_* into the guest.
# --exec sets up the sanitizer environment and runs CMD: LD_PRELOAD of the
# compiler's runtime (node is not instrumented, so the runtime must load
# first), errors fatal with exit code 23, leak checking on for asan with
# scripts/asan-lsan.supp.
#
# Why not ASan/LSan in the sandbox: UML 6.1 on x86_64 is built with
# CONFIG_3_LEVEL_PGTABLES, so a guest process has 512 GiB of address space
# (TASK_SIZE 0x7fc0000000: the stack ends there, the vdso sits just
# below). The sanitizer runtimes hard-code x86_64 Linux's 47-bit layout:
# ASan's shadow must be [0x7fff8000, 0x10007fff8000) (16 TiB, and the
# guest maps programs at 0x5500000000, inside it) and both ASan's and
# standalone LSan's allocator reserve 4 TiB at 0x600000000000. Both abort
# at start ("Shadow memory range interleaves", "CHECK failed:
# sanitizer_allocator_primary64.h ... 0xfffffffffffffff4" = ENOMEM), for
# gcc's runtimes and clang's alike; -asan-mapping-offset changes only the
# instrumentation, not the prebuilt runtime. UBSan keeps no shadow and no
# allocator of its own, so it runs there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
TAP=$ROOT/node_modules/.bin/tap
REPORTER=${ASAN_TEST_REPORTER:-base}  # tap for scripts/test.sh (it counts the summary)
CXX_BIN=${CXX:-g++}

addon_of() { echo "$ROOT/.sandbox/$1/build/Release/ipvs_netlink.node"; }
in_sandbox() { [ "${IPVS_NETLINK_KERNEL:-}" = sandbox ] && [ "$(hostname)" = sandbox ]; }

if [ "${1:-}" = --exec ]; then
	kind=${2:-}
	shift 2
	case "$kind" in
	asan)
		if in_sandbox; then
			echo "asan-test: ASan/LSan cannot start in the user-mode-linux sandbox: its processes have 512 GiB of address space (TASK_SIZE 0x7fc0000000) and the runtimes need fixed ranges far above it (shadow up to 0x10007fff8000, allocator at 0x600000000000). Use kernel-ubsan here, or a host kernel with IPVS for ASan." >&2
			exit 125
		fi
		runtime=$($CXX_BIN -print-file-name=libasan.so)
		# halt_on_error: the first error fails the process (and so the test).
		# exitcode 23 marks sanitizer failures apart from ordinary ones.
		export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=23:abort_on_error=0:detect_odr_violation=0:${IPVS_NETLINK_ASAN_OPTIONS:-}
		export LSAN_OPTIONS=suppressions=$ROOT/scripts/asan-lsan.supp:print_suppressions=0:exitcode=23
		;;
	ubsan)
		runtime=$($CXX_BIN -print-file-name=libubsan.so)
		;;
	*) echo "usage: $0 --exec asan|ubsan CMD [ARGS...]" >&2; exit 2 ;;
	esac
	[ -f "$runtime" ] || { echo "asan-test: $runtime not found (apt-get install -y libasan8 libubsan1)" >&2; exit 1; }
	# The build has the UBSan checks compiled as non-recoverable: the first
	# report aborts; these make it print where.
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=23:report_error_type=1
	export IPVS_NETLINK_ADDON=${IPVS_NETLINK_ADDON:-$(addon_of "$kind")}
	export LD_PRELOAD=$runtime
	exec "$@"
fi

build() { # asan|ubsan|tsan
	local kind=$1 dir=$ROOT/.sandbox/$1 addon flags
	addon=$(addon_of "$kind")
	case "$kind" in
	# vptr needs RTTI, which node-gyp's flags turn off; everything else of
	# -fsanitize=undefined is on, and not recoverable (the first report aborts).
	asan) flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined" ;;
	ubsan) flags="-fsanitize=undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined" ;;
	tsan) flags="-fsanitize=thread" ;;
	esac
	# Rebuild when an addon source (not the fuzz targets), binding.gyp or this
	# script is newer than the addon.
	if [ -f "$addon" ] && [ -z "$(find native binding.gyp scripts/asan-test.sh -path native/fuzz -prune -o -newer "$addon" -print -quit)" ]; then return; fi
	echo "asan-test: building the $kind addon in $dir" >&2
	rm -rf "$dir/native"
	mkdir -p "$dir"
	cp -r native binding.gyp "$dir/"
	rm -rf "$dir/native/fuzz"
	# Use the headers next to this node when it has them (no download).
	local nodedir=() prefix
	prefix=$(dirname "$(dirname "$(node -p process.execPath)")")
	[ -f "$prefix/include/node/node_api.h" ] && nodedir=(--nodedir="$prefix")
	# node-addon-api resolves from the parent folders (the project's node_modules).
	(cd "$dir" &&
		CXXFLAGS="$flags -fno-omit-frame-pointer -g -O1" LDFLAGS="$flags" \
			node "$ROOT/node_modules/node-gyp/bin/node-gyp.js" rebuild "${nodedir[@]}" -j 2 >build.log 2>&1) ||
		{ tail -n 30 "$dir/build.log" >&2; echo "asan-test: $kind build failed" >&2; exit 1; }
	# The build must really be instrumented, or the run proves nothing.
	# (nm's output is read whole: grep -q closing the pipe early would fail
	# the pipeline under pipefail.)
	local syms
	syms=$(nm -D "$addon")
	case "$kind" in
	asan | ubsan) grep -q __ubsan_handle_ <<<"$syms" || { echo "asan-test: $addon has no UBSan checks" >&2; exit 1; } ;;
	tsan) grep -q __tsan_read <<<"$syms" || { echo "asan-test: $addon is not TSan-instrumented" >&2; exit 1; } ;;
	esac
	if [ "$kind" = asan ]; then
		grep -q __asan_report_ <<<"$syms" || { echo "asan-test: $addon is not ASan-instrumented" >&2; exit 1; }
	fi
}

# Kernel test files minus the RSS leak tests under ASan: its allocator keeps
# freed memory in quarantine, so RSS says nothing there (LSan checks leaks
# instead). UBSan leaves the allocator alone: they run in kernel-ubsan.
# The sandbox kernel has no nf_tables for ip/ip6/inet: nftables tests run on the host only.
# (A glob, not ls: ls of a pattern that matches nothing in one of the two
# folders exits 2, which under set -e and pipefail ended this script at once,
# silently.)
kernel_tests() { # PREFIX [no-leak]
	local f
	for f in test/kernel/${1:-}*.test.ts kube-proxy-ipvs/test/kernel/${1:-}*.test.ts; do
		[ -e "$f" ] || continue
		[[ $f == */nft-* ]] && continue
		[ "${2:-}" = no-leak ] && [[ $f == *leak* ]] && continue
		echo "$f"
	done
}
# The library's unit test files, minus those that read the resident set
# (*-rss.test.ts): under ASan it says nothing, for the same reason. Minus
# too those that never reach the addon, whose runs under the sanitizers'
# allocator are slow and check nothing the plain run does not:
# the files whose own imports are all of lib/util/ (plain JavaScript), and
# those that run the TypeScript compiler over the types and the README (the
# files test/package/support/library-suites.ts leaves out as typeOnly).
type_only_tests=(test/unit/ipset-types.test.ts test/unit/ipvs-rtnl-types.test.ts test/unit/readme-snippets.test.ts)
unit_tests() {
	local f
	for f in test/unit/*.test.ts; do
		[[ $f == *-rss.test.ts ]] && continue
		[[ " ${type_only_tests[*]} " == *" $f "* ]] && continue
		grep -oE "from '\.[^']*'" "$f" | grep -qv "/lib/util/" || continue
		echo "$f"
	done
}
# Test files run by node directly, each under the sanitizer (scripts/
# test-files/test-files.sh: TAP as tap's runner prints it, one summary), with the
# TypeScript transpiled once instead of by ts-node in every file's process,
# which under the sanitizer's allocator costs more than most files' tests.
files_under() { # asan|ubsan FILES...
	local kind=$1
	shift
	node scripts/test-files/ts-transpile.mjs >&2 &&
		NODE_OPTIONS="--import=$ROOT/scripts/test-files/ts-transpiled.mjs" TEST_FILES_EXEC="$0 --exec $kind" bash scripts/test-files/test-files.sh "$@"
}
# A ThreadSanitizer test file (test/sanitizer/): tap itself runs without
# the sanitizer, the file runs its program under it.
tsan_file() { # FILE
	local runtime
	runtime=$($CXX_BIN -print-file-name=libtsan.so)
	[ -f "$runtime" ] || { echo "asan-test: $runtime not found (apt-get install -y libtsan2)" >&2; return 1; }
	IPVS_NETLINK_TSAN_ADDON="$(addon_of tsan)" IPVS_NETLINK_TSAN_RUNTIME="$runtime" \
		"$TAP" --reporter="$REPORTER" --disable-coverage --allow-incomplete-coverage "$1"
}
host_has_ipvs() { [ -e /proc/net/ip_vs ] || { modprobe -q ip_vs 2>/dev/null && [ -e /proc/net/ip_vs ]; }; }

status=0
for what in "${@:-unit}"; do
	case "$what" in
	# The library's unit tests: they drive the addon. The proxy's run against
	# fakes of the kernel and reach no native code worth the sanitizers' time.
	unit) build asan; cmd=(files_under asan $(unit_tests)) ;;
	host-ipset)
		build asan
		cmd=(files_under asan $(kernel_tests ipset- no-leak))
		if conntrack -C >/dev/null 2>&1; then cmd+=($(kernel_tests conntrack-)); fi
		# nf_tables' event reader and object codec, on this host's nf_tables.
		cmd+=(test/kernel/nft-events.test.ts test/kernel/nft-objects.test.ts) ;;
	host-tsan) build tsan; cmd=(tsan_file test/sanitizer/threads.test.ts) ;;
	qemu-tsan) build tsan; cmd=(tsan_file test/sanitizer/threads-ipvs-qemu.test.ts) ;;
	kernel) build asan; cmd=(bash scripts/with-kernel.sh "$0" --exec asan "$TAP" --reporter="$REPORTER" --jobs=1 $(kernel_tests "" no-leak)) ;;
	kernel-ubsan) build ubsan; cmd=(bash scripts/with-kernel.sh "$0" --exec ubsan "$TAP" --reporter="$REPORTER" --jobs=1 $(kernel_tests)) ;;
	all)
		parts=(unit host-ipset host-tsan qemu-tsan kernel-ubsan)
		host_has_ipvs && parts+=(kernel)
		"$0" "${parts[@]}" || status=1
		continue ;;
	*) echo "usage: $0 [unit|host-ipset|host-tsan|qemu-tsan|kernel|kernel-ubsan|all]... | --exec asan|ubsan CMD" >&2; exit 2 ;;
	esac
	echo "== sanitizers: $what ==" >&2
	"${cmd[@]}" || { echo "asan-test: $what FAILED" >&2; status=1; }
done
exit $status
