#!/usr/bin/env bash
# scripts/nightly.sh: the tests too long for CI's 2 cores, for a nightly
# run, ending with "N passed, N failed". In the QEMU kernel (node runs many
# times slower there, so a file takes minutes):
#  1. the nftables rules backend with real traffic (IPVS and nf_tables
#     together), each file run by node in one boot; CI runs the cheap part
#     of the same checks on the host kernel (kube-proxy-ipvs/test/host/)
#  2. the addon's threads under ThreadSanitizer for IPVS
#     (scripts/asan-test.sh qemu-tsan); CI runs the same program on the
#     host's kernel for the other families (host-tsan)
# and in the user-mode-linux kernel:
#  3. the ipset and conntrack kernel tests on its 6.1 kernel, an older one
#     than most hosts'; CI runs them on the host's kernel only
#  4. the soak tests: the IPVS leak test, and the proxy's churn for five
#     minutes (CHURN_SECONDS, which a caller may set)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0 failed=0 status=0

part() { # NAME WHAT CMD...: runs CMD, its TAP shown and counted
	local name=$1 rc summary p f
	echo "nightly: $2" >&2
	shift 2
	"$@" 2>&1 | tee "$logs/$name.log"
	rc=${PIPESTATUS[0]}
	summary=$(grep -E '^# \{ total: [0-9]+' "$logs/$name.log" | tail -n 1)
	p=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
	f=$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] || [ -z "$summary" ]; then
		status=1
		[ "${f:-0}" -eq 0 ] && failed=$((failed + 1))
	fi
}

# Node.js 24 from the registry where this machine's is older, and the test
# files' TypeScript transpiled once for node in the guests (as npm test does).
. scripts/node-runtime.sh
node_runtime_use || exit 1
node scripts/test-files/ts-transpile.mjs || exit 1

files=(kube-proxy-ipvs/test/qemu/*.test.ts)
part nft "${#files[@]} file(s) in the QEMU kernel: ${files[*]}" bash scripts/qemu/tap.sh --files "${files[@]}"
part tsan "IPVS under ThreadSanitizer in the QEMU kernel" env ASAN_TEST_REPORTER=tap bash scripts/asan-test.sh qemu-tsan
# (Not the ipset leak test: it measures the library's memory, which the
# kernel's version does not change, and CI runs it on the host's kernel.)
files=()
for f in test/kernel/ipset-*.test.ts; do [ "$f" = test/kernel/ipset-leak.test.ts ] || files+=("$f"); done
files+=(test/kernel/conntrack-*.test.ts test/kernel/ipvs-leak.test.ts kube-proxy-ipvs/test/kernel/proxy-churn.test.ts)
part uml "${#files[@]} file(s) in the user-mode-linux 6.1 kernel: ipset, conntrack, the soak tests" \
	env NODE_OPTIONS="--import=$PWD/scripts/test-files/ts-transpiled.mjs${NODE_OPTIONS:+ $NODE_OPTIONS}" \
	CHURN_SECONDS="${CHURN_SECONDS:-300}" SANDBOX_TIMEOUT="${SANDBOX_TIMEOUT:-7200}" \
	bash scripts/with-kernel.sh bash scripts/test-files/test-files.sh "${files[@]}"
echo "$passed passed, $failed failed"
exit $status
