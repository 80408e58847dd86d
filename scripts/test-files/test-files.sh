#!/usr/bin/env bash
# scripts/test-files/test-files.sh FILES...      each test file, one after another
# scripts/test-files/test-files.sh --queue DIR   the files of a shared queue, until none is left
#
# Runs tap test files with node directly, in a sandbox guest or on the host,
# with the project's TypeScript served by ts-transpiled.mjs (the caller puts
# it in NODE_OPTIONS). tap's runner and ts-node cost each file seconds on
# the host (ts-node transpiles the library afresh in every file's process),
# more under user-mode-linux and minutes under emulation; a tap test file is itself a
# TAP producer, so this prints what the runner would: each file's tests
# indented under "ok N - FILE" (or "not ok"), then one summary of its files
# in tap's words, "# { total: T, pass: P, fail: F }", which scripts/test.sh
# counts. A file that prints no summary (a crash, a kill, its time limit)
# fails.
#
# The queue lets several sandbox boots share one list of files: DIR/files
# holds the list, longest first (queue.sh makes it); a file is taken by
# creating DIR/taken.N, which only one taker can do, so each file runs once
# whichever boot gets to it. N in "ok N - FILE" is the file's place in the
# list. Each file's time is added to DIR/seconds.
#
# TEST_FILES_EXEC, when set, is a command the node of each file runs under
# (words split on spaces): scripts/asan-test.sh puts its sanitizer runtime
# there, for node alone and not this script's own tools.
set -uo pipefail
# A test file's time limit, as tap's runner gives it (package.json
# "tap".timeout): tap itself reads it from TAP_TIMEOUT, whose default when no
# runner sets it is 30 s; `timeout` is the guard for a file tap cannot stop.
FILE_TIMEOUT=${TEST_FILE_TIMEOUT:-600}
export TAP_TIMEOUT=$FILE_TIMEOUT

total=0 pass=0 fail=0 status=0 ran=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_file() { # N FILE
	local n=$1 f=$2 start ms rc summary t p x
	start=$(date +%s%N)
	# shellcheck disable=SC2086 # a command and its arguments, split on purpose
	timeout --kill-after=10 "$FILE_TIMEOUT" ${TEST_FILES_EXEC:-} node "$f" >"$log" 2>&1 </dev/null
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	ran=$((ran + 1))
	sed 's/^/    /' "$log"
	summary=$(grep -E '^# \{ total: [0-9]+' "$log" | tail -n 1)
	t=$(sed -nE 's/.*total: ([0-9]+).*/\1/p' <<<"$summary")
	p=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
	x=$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")
	total=$((total + ${t:-0})) pass=$((pass + ${p:-0})) fail=$((fail + ${x:-0}))
	if [ "$rc" -eq 0 ] && [ -n "$summary" ] && [ "${x:-0}" -eq 0 ]; then
		echo "ok $n - $f # time=${ms}ms"
	else
		local why="exit $rc"
		[ "$rc" -eq 124 ] && why="stopped after its ${FILE_TIMEOUT} s limit"
		echo "not ok $n - $f # time=${ms}ms ($why${summary:+, }${summary#\# })"
		# Counted once more when the file failed without a failed assertion.
		[ "${x:-0}" -eq 0 ] && total=$((total + 1)) fail=$((fail + 1))
		status=1
	fi
	[ -n "${queue:-}" ] && echo "$((ms / 1000)) $f" >>"$queue/seconds"
}

queue=
if [ "${1:-}" = --queue ]; then
	queue=$2
	[ -f "$queue/files" ] || { echo "test-files: no queue at $queue" >&2; exit 2; }
	mapfile -t files <"$queue/files"
	for i in "${!files[@]}"; do
		mkdir "$queue/taken.$((i + 1))" 2>/dev/null || continue
		run_file $((i + 1)) "${files[$i]}"
	done
else
	n=0
	for f in "$@"; do
		n=$((n + 1))
		run_file "$n" "$f"
	done
fi

echo "1..$ran"
if [ "$fail" -gt 0 ]; then
	echo "# { total: $total, pass: $pass, fail: $fail }"
else
	echo "# { total: $total, pass: $pass }"
fi
exit $status
