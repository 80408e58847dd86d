#!/usr/bin/env bash
# scripts/nightly.sh: the tests too long for CI's 2 cores, for a nightly
# run, both in the QEMU kernel (node runs many times slower there, so a file takes
# minutes), ending with "N passed, N failed":
#  1. the nftables rules backend with real traffic (IPVS and nf_tables
#     together), each file run by node in one boot; CI runs the cheap part
#     of the same checks on the host kernel (kube-proxy-ipvs/test/host/)
#  2. the addon's threads under ThreadSanitizer for IPVS
#     (scripts/asan-test.sh qemu-tsan); CI runs the same program on the
#     host's kernel for the other families (host-tsan)
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

files=(kube-proxy-ipvs/test/qemu/*.test.ts)
part nft "${#files[@]} file(s) in the QEMU kernel: ${files[*]}" bash scripts/qemu/tap.sh --files "${files[@]}"
part tsan "IPVS under ThreadSanitizer in the QEMU kernel" env ASAN_TEST_REPORTER=tap bash scripts/asan-test.sh qemu-tsan
echo "$passed passed, $failed failed"
exit $status
