#!/usr/bin/env bash
# scripts/test.sh — every test, on a fresh machine (this is `npm test`).
#
#  1. system packages (apt-get as root, else the exact command to run)
#  2. the addon and the TypeScript build (the library, then kube-proxy-ipvs)
# Then two lanes at once, each mostly one core's work (CI has two):
#  the kernel lane, its lines marked "[kernel]":
#  K1. the kernel tests the host kernel cannot run (IPVS, rtnetlink, the
#      controller and the proxy; conntrack too where the host has no
#      conntrack netlink), in a user-mode-linux sandbox boot (or directly
#      where the running kernel has IPVS; scripts/with-kernel.sh), taken one
#      at a time from a queue, longest first. Never skipped: if they cannot
#      run, this fails. scripts/nightly.sh runs the rest: the ipset and
#      conntrack files on the sandbox's 6.1 kernel, and the two soak tests
#      (the IPVS leak test, the proxy's churn).
#  K2. then the shared steps (below) the host lane has not started.
#  and the host lane:
#  H1. every test file's types under the strict settings (one result: the
#      test runs transpile TypeScript without type-checking it), then the
#      unit tests of both packages (no privileges)
#  H2. ipset, nftables and conntrack kernel tests on this host's kernel (the
#      proxy's nftables table too: kube-proxy-ipvs/test/host/)
#      (ipset and nf_tables are built in, conntrack netlink too where the
#      kernel has it; needs root)
#  H3. the shared steps, in order, each unless the kernel lane took it:
#      - both packages as users install them (scripts/package-test.sh)
#      - fuzzing: every decoder for 15 s, every saved failing input replayed
#      - sanitizers: the unit tests that reach the addon and the host's ipset
#        kernel tests again, against the addon built with ASan + LSan +
#        UBSan, and the addon's threads under ThreadSanitizer
#        (scripts/asan-test.sh)
#      - the benchmarks at their small size (they must run, not be fast)
#      - a chosen few kernel tests again in the second sandbox kernel,
#        Debian's own 6.1 under QEMU TCG (scripts/qemu/), which has nf_tables
#        for every family and distorts costs the other way from
#        user-mode-linux
#      - the addon under valgrind's memcheck on the real kernel paths, in a
#        sandbox boot of its own (there ASan cannot start)
#  H4. a second sandbox boot taking kernel tests from K1's queue, while any
#      are left
# Each step says how long it took. The last line is "N passed, N failed"
# over all steps of both lanes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

passed=0
failed=0
status=0
logdir=$(mktemp -d "${TMPDIR:-/tmp}/ipvs-netlink-test.XXXXXX")
# The kernel tests' queue, inside the project: sandbox guests see the host's
# files there at the same path (their /tmp may be their own).
mkdir -p .sandbox
queue=$(mktemp -d "$PWD/.sandbox/kernel-queue.XXXXXX")
# A stopped run stops the kernel lane too (its sandbox kernel goes with it).
trap 'pids=$(jobs -p); [ -n "$pids" ] && kill $pids 2>/dev/null; rm -rf "$logdir" "$queue"' EXIT

# A step's heading, and how long the one before it in the same lane took.
step_name=
step_start=
step() {
	step_done
	step_name=$*
	step_start=$SECONDS
	printf '\n== %s ==\n' "$step_name" >&2
}
step_done() {
	[ -n "$step_name" ] && printf '== %s: %d s ==\n' "$step_name" $((SECONDS - step_start)) >&2
	step_name=
}

# Every failure also gets one line in a list printed again just above the
# totals, so the end of a long log names what failed (both lanes write it).
failures="$logdir/failures"
: >"$failures"
note_failure() { # STEP WHAT
	printf '%s: %s\n' "$1" "$2" >>"$failures"
}

# Runs tap (through an optional wrapper) and adds its counts to the totals.
# tap's summary line looks like: # { total: 130, pass: 127, fail: 3 }
run_tap() {
	local name=$1
	shift
	local log="$logdir/$name.log" rc
	# The full TAP goes to a log; the screen shows one line per test file
	# and per top-level test as they finish, then any failure in full.
	"$@" 2>&1 | tee "$log" | grep --line-buffered -E '^ {0,4}(not )?ok |^sandbox:|^qemu:|^test:|^with-kernel:'
	rc=${PIPESTATUS[0]}
	if grep -qE '^ *not ok ' "$log"; then
		echo "--- failures in $name ---"
		grep -E -A40 '^ *not ok ' "$log" | head -n 400
		grep -E '^ *not ok ' "$log" | sed -E 's/^ +//' | head -n 20 | while IFS= read -r line; do note_failure "$name" "$line"; done
	fi
	local summary
	summary=$(grep -E '^# \{ total: [0-9]+' "$log" | tail -n 1)
	if [ -z "$summary" ]; then
		echo "test: $name produced no tap summary (exit $rc): counted as one failure" >&2
		note_failure "$name" "no tap summary (exit $rc)"
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
		if [ "${f:-0}" -eq 0 ]; then
			note_failure "$name" "exit $rc with no failed assertion"
			failed=$((failed + 1))
		fi
	fi
}

# Every test file named must have reported a result in the step's logs
# (NAME, or NAMES separated by commas): a file tap never ran (a CI run once
# lost one, with no error anywhere) is a failure, not a silent skip.
expect_files() {
	local names=$1 f n found
	shift
	for f in "$@"; do
		found=
		for n in ${names//,/ }; do
			[ -f "$logdir/$n.log" ] && grep -qE "^(not )?ok [0-9]+ - ${f//./\\.}( |$)" "$logdir/$n.log" && found=1
		done
		if [ -z "$found" ]; then
			echo "test: $names: $f never reported a result: counted as one failure" >&2
			note_failure "$names" "$f never reported a result"
			failed=$((failed + 1))
			status=1
		fi
	done
}

# A step that is one result: passes or fails as a whole, its output kept
# in a log and shown (the end of it) on failure.
run_one() {
	local name=$1
	shift
	if "$@" >"$logdir/$name.log" 2>&1; then
		echo "ok - $*"
		passed=$((passed + 1))
	else
		echo "not ok - $*"
		tail -n 60 "$logdir/$name.log"
		note_failure "$name" "not ok - $*"
		failed=$((failed + 1))
		status=1
	fi
}

step "system packages"
if ! bash scripts/sandbox/ensure-deps.sh uml qemu; then
	echo "0 passed, 1 failed"
	exit 1
fi
# Every step, the sandbox guests' too, on a Node.js that meets the
# packages' engines: Node.js 24 from the registry when this machine's is older.
. scripts/node-runtime.sh
if ! node_runtime_use; then
	echo "0 passed, 1 failed"
	exit 1
fi

step "build"
if ! { [ -f build/Release/ipvs_netlink.node ] || npx --no-install node-gyp rebuild -j max; } || ! npx --no-install tsc -p tsconfig.json || ! npx --no-install tsc -p kube-proxy-ipvs/tsconfig.json; then
	echo "test: the build failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
# The kernel tests run in sandbox guests by node itself, their TypeScript
# transpiled here once (scripts/test-files/test-files.sh says why).
if ! node scripts/test-files/ts-transpile.mjs; then
	echo "test: transpiling the tests' TypeScript failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
# What each test file's node is given to load that TypeScript (run_files, the kernel lanes).
transpiled_node_options="--import=$PWD/scripts/test-files/ts-transpiled.mjs${NODE_OPTIONS:+ $NODE_OPTIONS}"
# Where this host's kernel has conntrack netlink, its tests run here (H2);
# the sandbox runs them otherwise.
host_conntrack=
if conntrack -C >/dev/null 2>&1; then host_conntrack=1; fi
# The sandbox runs what only it can: not nftables' (its kernel has no
# nf_tables for ip/ip6/inet), and not ipset's or (where H2 runs them)
# conntrack's, which the host lane runs on this host's kernel. The sandbox's
# system calls cost tens of times the host's, so those files there took a
# tenth of the kernel lane's time for what the host's run already checks;
# their run on the sandbox's older kernel (6.1) is scripts/nightly.sh's.
# So are the soak tests, minutes of the same work over and over to show that
# nothing grows: the IPVS leak test and the proxy's churn.
soak_tests=(test/kernel/ipvs-leak.test.ts kube-proxy-ipvs/test/kernel/proxy-churn.test.ts)
kernel_tests=()
for f in test/kernel/*.test.ts kube-proxy-ipvs/test/kernel/*.test.ts; do
	case " ${soak_tests[*]} " in *" $f "*) continue ;; esac
	case $f in
	test/kernel/nft-* | test/kernel/ipset-*) ;;
	test/kernel/conntrack-*) [ -n "$host_conntrack" ] || kernel_tests+=("$f") ;;
	*) kernel_tests+=("$f") ;;
	esac
done
bash scripts/test-files/queue.sh "$queue" "${kernel_tests[@]}"
# Runs the kernel tests of the queue in a sandbox boot until none is left.
kernel_tests_from_queue() { # LOG NAME
	# One boot may take long beside the other lane; the limit is a guard
	# against a hung guest, not a budget.
	NODE_OPTIONS="$transpiled_node_options" SANDBOX_TIMEOUT=${SANDBOX_TIMEOUT:-5000} \
		run_tap "$1" bash scripts/with-kernel.sh bash scripts/test-files/test-files.sh --queue "$queue"
}

# The steps after the host lane's first two, each taken by whichever lane
# gets to it first (by creating its step.NAME folder in the queue), longest
# first: the host lane goes through them in order, and the kernel lane,
# once no kernel test is left, takes those not yet started, so neither core
# idles while the other has work queued.
shared_steps=(packages fuzz sanitizers bench qemu valgrind)
take_shared_steps() {
	local s
	for s in "${shared_steps[@]}"; do
		if mkdir "$queue/step.$s" 2>/dev/null; then "step_$s"; fi
	done
}

# Both packages packed and installed as users get them (no compiler on
# PATH), the consumers (ESM, CommonJS, strict TypeScript), and the library's
# unit tests against the installed copy on Node.js 22 and 24, arm64 under
# qemu-user and Bun, with the host ipset tests on 22, 24 and Bun.
step_packages() {
	step "packages: prebuilds, tarballs, installs, Node.js 22 and 24, arm64, Bun"
	run_tap package bash scripts/package-test.sh
}

step_sanitizers() {
	step "sanitizers: unit and host ipset tests against an ASan + LSan + UBSan addon, the addon's threads under TSan"
	ASAN_TEST_REPORTER=tap run_tap asan-unit bash scripts/asan-test.sh unit
	if [ "$(id -u)" -eq 0 ]; then
		ASAN_TEST_REPORTER=tap run_tap asan-host-ipset bash scripts/asan-test.sh host-ipset
		ASAN_TEST_REPORTER=tap run_tap tsan-host bash scripts/asan-test.sh host-tsan
	fi
}

# Every decoder under libFuzzer + ASan + UBSan for 15 s each, after
# replaying every input that ever failed (native/fuzz/corpus/regressions).
step_fuzz() {
	step "fuzzing, 15 s per target"
	run_one fuzz bash scripts/fuzz.sh --ci
}

# Every file here costs QEMU's emulation several times its time in
# user-mode-linux (node's JIT-compiled code runs many times slower), so CI runs
# the few that exercise what differs between the two kernels' builds;
# scripts/qemu/README.md has each file's time there. Add or drop files here.
step_qemu() {
	step "kernel tests in the QEMU sandbox kernel (a subset)"
	local qemu_tests=(
		test/kernel/ipvs-batch.test.ts
		test/kernel/ipvs-module-reload.test.ts
		test/kernel/rtnl-links.test.ts
	)
	run_tap qemu bash scripts/qemu/tap.sh --files "${qemu_tests[@]}"
	expect_files qemu "${qemu_tests[@]}"
}

# A sandbox boot of its own, beside the kernel lane's.
step_valgrind() {
	step "valgrind memcheck on the real kernel paths"
	run_one valgrind bash scripts/valgrind-kernel.sh
}

# The benchmarks are scripts, not tests: CI runs their small size so they
# cannot rot (they must run and read back what they programmed; their
# targets are judged at full size, in BENCHMARKS.md). The small size runs
# IPVS in both sandbox kernels (QEMU-TCG's pass, 100 x 10, about two
# minutes with its boot) and the proxy in user-mode-linux. One result.
step_bench() {
	step "benchmarks, small size"
	run_one bench node bench/run.mjs --size small --results bench/.build/ci
}

# The kernel lane's counts come back through a file (it runs in a subshell).
kernel_lane() {
	passed=0 failed=0 status=0
	step "kernel tests where IPVS exists"
	kernel_tests_from_queue kernel
	take_shared_steps
	step_done
	echo "$passed $failed $status" >"$logdir/kernel-lane.counts"
}
step_done
kernel_lane 2>&1 | sed -u 's/^/[kernel] /' &
kernel_lane_pid=$!

step "type check of the tests"
run_one typecheck npx --no-install tsc -p tsconfig.tests.json

# Test files run by node one at a time with the TypeScript transpiled once
# (above), not by tap's runner, which loads ts-node into every file's
# process to transpile the library again: seconds a file, most of the time
# of a unit test file. The same TAP, one summary.
run_files() { # NAME FILES...
	local name=$1
	shift
	NODE_OPTIONS="$transpiled_node_options" \
		run_tap "$name" bash scripts/test-files/test-files.sh "$@"
	expect_files "$name" "$@"
}

step "unit tests"
run_files unit test/unit/*.test.ts kube-proxy-ipvs/test/unit/*.test.ts

step "ipset, nftables and conntrack kernel tests on the host kernel ($(uname -r))"
host_tests=(test/kernel/ipset-*.test.ts test/kernel/nft-*.test.ts kube-proxy-ipvs/test/host/*.test.ts)
# Conntrack where this kernel has its netlink interface (else the sandbox runs them).
if [ -n "$host_conntrack" ]; then host_tests+=(test/kernel/conntrack-*.test.ts); fi
if [ "$(id -u)" -ne 0 ]; then
	echo "test: kernel tests need root (network namespaces, netlink admin); run: sudo npm test" >&2
	note_failure host "not run: needs root"
	failed=$((failed + 1))
	status=1
else
	run_files host "${host_tests[@]}"
fi

take_shared_steps

# The host lane's steps are done: a second boot takes kernel tests from
# the kernel lane's queue, while any are left.
if [ "$(find "$queue" -maxdepth 1 -name 'taken.*' | wc -l)" -lt "$(wc -l <"$queue/files")" ]; then
	step "kernel tests where IPVS exists, a second sandbox boot on the same queue"
	kernel_tests_from_queue kernel-2
fi

step_done
echo "test: the host lane is done; waiting for the kernel lane" >&2
wait "$kernel_lane_pid"
if read -r p f s <"$logdir/kernel-lane.counts" 2>/dev/null; then
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$s" -eq 0 ] || status=1
else
	echo "test: the kernel lane ended without its counts: counted as one failure" >&2
	note_failure kernel "the lane ended without its counts"
	failed=$((failed + 1))
	status=1
fi
# Every kernel test file ran in one of the two boots.
expect_files kernel,kernel-2 "${kernel_tests[@]}"
# Each kernel test file's time in this run, in the form of
# scripts/test-files/test-seconds, which orders the queue: the figures to
# put there when a machine's speed or the files change.
if [ -s "$queue/seconds" ]; then
	printf '\n== the kernel tests'"'"' seconds in this run (scripts/test-files/test-seconds) ==\n'
	sort -k1,1nr -k2,2 "$queue/seconds"
fi
if [ -s "$failures" ]; then
	printf '\n== what failed (the step, then the line) ==\n'
	cat "$failures"
fi
echo
echo "$passed passed, $failed failed"
exit $status
