#!/usr/bin/env bash
# scripts/test.sh — every test, on a fresh machine (this is `npm test`).
#
#  1. system packages (apt-get as root, else the exact command to run)
#  2. the addon and the TypeScript build
#  3. unit tests (no privileges)
#  4. ipset kernel tests on this host's kernel (ipset is built in; needs root)
#  5. every kernel test (IPVS, and ipset again on 6.1) where IPVS exists:
#     directly when the running kernel has it, else in the user-mode-linux
#     sandbox (scripts/with-kernel.sh). Never skipped: if they cannot run,
#     this fails.
# The last line is "N passed, N failed" over all stages.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

passed=0
failed=0
status=0
logdir=$(mktemp -d "${TMPDIR:-/tmp}/ipvs-netlink-test.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

step() { printf '\n== %s ==\n' "$*" >&2; }

# Runs tap (through an optional wrapper) and adds its counts to the totals.
# tap's summary line looks like: # { total: 130, pass: 127, fail: 3 }
run_tap() {
	local name=$1
	shift
	local log="$logdir/$name.log" rc
	# The full TAP goes to a log; the screen shows one line per test file
	# and per top-level test as they finish, then any failure in full.
	"$@" 2>&1 | tee "$log" | grep --line-buffered -E '^ {0,4}(not )?ok |^sandbox:|^test:|^with-kernel:'
	rc=${PIPESTATUS[0]}
	if grep -qE '^ *not ok ' "$log"; then
		echo "--- failures in $name ---"
		grep -E -A40 '^ *not ok ' "$log" | head -n 400
	fi
	local summary
	summary=$(grep -E '^# \{ total: [0-9]+' "$log" | tail -n 1)
	if [ -z "$summary" ]; then
		echo "test: $name produced no tap summary (exit $rc): counted as one failure" >&2
		failed=$((failed + 1))
		status=1
		return
	fi
	local p f
	p=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
	f=$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ]; then
		status=1
		# A non-zero exit with no failed assertion (a crash, a timeout) still fails.
		[ "${f:-0}" -eq 0 ] && failed=$((failed + 1))
	fi
}

step "system packages"
if ! bash scripts/sandbox/ensure-deps.sh; then
	echo "0 passed, 1 failed"
	exit 1
fi

step "build"
if ! { [ -f build/Release/ipvs_netlink.node ] || npx --no-install node-gyp rebuild; } || ! npx --no-install tsc -p tsconfig.json; then
	echo "test: the build failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

step "unit tests"
run_tap unit npx --no-install tap --reporter=tap test/unit

step "ipset kernel tests on the host kernel ($(uname -r))"
if [ "$(id -u)" -ne 0 ]; then
	echo "test: kernel tests need root (network namespaces, netlink admin); run: sudo npm test" >&2
	failed=$((failed + 1))
	status=1
elif compgen -G 'test/kernel/ipset-*.test.ts' >/dev/null; then
	run_tap host-ipset npx --no-install tap --reporter=tap test/kernel/ipset-*.test.ts
fi

step "kernel tests where IPVS exists"
run_tap kernel bash scripts/with-kernel.sh npx --no-install tap --reporter=tap --jobs=1 test/kernel

# The benchmarks are scripts, not tests: CI runs their small size so they
# cannot rot (they must run and read back what they programmed; their
# targets are judged at full size, in BENCHMARKS.md). One result.
step "benchmarks, small size"
if node bench/run.mjs --size small --results bench/.build/ci >"$logdir/bench.log" 2>&1; then
	echo "ok - bench/run.mjs --size small"
	passed=$((passed + 1))
else
	echo "not ok - bench/run.mjs --size small"
	tail -n 60 "$logdir/bench.log"
	failed=$((failed + 1))
	status=1
fi

echo
echo "$passed passed, $failed failed"
exit $status
