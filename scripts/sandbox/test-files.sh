#!/usr/bin/env bash
# scripts/qemu/tap-files.sh FILES...: each test file run by node directly, one
# after another, in the guest (tap.sh starts it there). Under emulation tap's
# runner alone takes minutes to start; a tap test file is itself a TAP
# producer, so this prints what the runner would: each file's tests
# indented under "ok N - FILE" (or "not ok"), then one summary of all files
# in tap's words, "# { total: T, pass: P, fail: F }", which scripts/test.sh
# counts. A file that prints no summary (a crash, a kill) fails.
set -uo pipefail
n=0 total=0 pass=0 fail=0 status=0
log=$(mktemp)
for f in "$@"; do
	n=$((n + 1))
	start=$(date +%s%N)
	node "$f" >"$log" 2>&1 </dev/null
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	sed 's/^/    /' "$log"
	summary=$(grep -E '^# \{ total: [0-9]+' "$log" | tail -n 1)
	t=$(sed -nE 's/.*total: ([0-9]+).*/\1/p' <<<"$summary")
	p=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
	x=$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")
	total=$((total + ${t:-0})) pass=$((pass + ${p:-0})) fail=$((fail + ${x:-0}))
	if [ "$rc" -eq 0 ] && [ -n "$summary" ] && [ "${x:-0}" -eq 0 ]; then
		echo "ok $n - $f # time=${ms}ms"
	else
		echo "not ok $n - $f # time=${ms}ms (exit $rc${summary:+, }${summary#\# })"
		# Counted once more when the file failed without a failed assertion.
		[ "${x:-0}" -eq 0 ] && total=$((total + 1)) fail=$((fail + 1))
		status=1
	fi
done
rm -f "$log"
echo "1..$n"
if [ "$fail" -gt 0 ]; then
	echo "# { total: $total, pass: $pass, fail: $fail }"
else
	echo "# { total: $total, pass: $pass }"
fi
exit $status
