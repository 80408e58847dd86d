#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
# scripts/fuzz.sh --ci                   (15 s per target: npm test / CI)
#
# libFuzzer + ASan + UBSan over every decoder of the addon and the code that
# feeds them, built without Node from the addon's own sources (the list in
# binding.gyp, minus the module registration) and native/fuzz/*_fuzzer.cc:
#   ipvs_batch    IPVS jobs (execute, dump) over the real Channel/socket
#                 against a scripted kernel: Transaction::OnMessage ->
#                 RecordBatch -> ipvs::Decode -> reply records, family
#                 lookups, ENOENT re-send
#   ipvs_message  ipvs::Decode of one reply + ReplyWriter records
#   ipvs_records  request records: ReadRequest on arbitrary bytes, and
#                 WriteRequest -> ReadRequest -> Encode round trips
#   genl_family   CTRL_CMD_GETFAMILY replies (ResolveIpvs) through the socket
#   ipset_reply   ipset replies through the socket: PROTOCOL/TYPE/LIST
#                 decoders (+ save text), echo LINENO
#   ipset_entry   the entry text parser (user input), with round-trip checks
#   rtnl_reply    rtnetlink replies through the socket: DecodeLink/Address
#   conntrack_reply  conntrack replies through the socket: DecodeEntry,
#                 Matches, records, the delete built from each entry, stats
#   netlink_error SplitMessages + ParseError (echo, ext-ack TLVs)
#   nftables_reply nf_tables messages: DecodeMessage, encode-back round
#                 trips, the extended-ack attribute path
# The "scripted kernel" (native/fuzz/fake_kernel.h) stands in for the
# socket syscalls, so native/netlink runs unchanged on fuzzed datagrams.
#
# Every run: regenerate the seeds from the recorded kernel replies, replay
# every saved crash (native/fuzz/corpus/regressions/<target>/), then fuzz
# each target FUZZ_JOBS (default 2) at a time. A new crash is copied into
# regressions/ and the script exits non-zero; commit it once fixed.
# Build and the growing working corpus live in .sandbox/fuzz/ (ignored).
# Env: FUZZ_TARGETS="a b" to run some, FUZZ_JOBS, CXX, FUZZ_NO_INSTALL=1,
# FUZZ_KEEP_GOING=1 (long runs: libFuzzer's fork mode goes on after a
# crash, so one known failure does not end the run; every one is kept).
# Exit: 0 clean; 1 a crash, a failing regression or a broken run; 2 no
# clang with libFuzzer (and not root to install it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = --ci ]; then SECS=15; else SECS=${1:-60}; fi
JOBS=${FUZZ_JOBS:-2}
ALL_TARGETS="ipvs_batch ipvs_message ipvs_records genl_family ipset_reply ipset_entry rtnl_reply netlink_error conntrack_reply nftables_reply"
TARGETS=(${FUZZ_TARGETS:-$ALL_TARGETS})
WORK=.sandbox/fuzz
SEEDS=native/fuzz/corpus
REGRESS=$SEEDS/regressions
for t in "${TARGETS[@]}"; do
	[ -f "native/fuzz/${t}_fuzzer.cc" ] || { echo "fuzz: no target $t (have: $ALL_TARGETS)" >&2; exit 2; }
done

# --- compiler: clang with the libFuzzer runtime ---
find_cxx() {
	for c in ${CXX:-} clang++ clang++-14 clang++-15 clang++-16; do
		command -v "$c" >/dev/null 2>&1 || continue
		# -print-file-name echoes the bare name when the runtime is missing.
		[ "$("$c" -print-file-name=libclang_rt.fuzzer-x86_64.a)" != libclang_rt.fuzzer-x86_64.a ] && { echo "$c"; return; }
	done
}
CXX_BIN=$(find_cxx)
if [ -z "$CXX_BIN" ]; then
	if [ "$(id -u)" -eq 0 ] && [ -z "${FUZZ_NO_INSTALL:-}" ] && command -v apt-get >/dev/null; then
		echo "fuzz: installing clang-14 and its runtimes (apt-get)" >&2
		apt-get install -y -q clang-14 libclang-rt-14-dev >&2 ||
			{ apt-get update -q >&2 && apt-get install -y -q clang-14 libclang-rt-14-dev >&2; } || true
		CXX_BIN=$(find_cxx)
	fi
	if [ -z "$CXX_BIN" ]; then
		echo "fuzz: FAILED: no clang with libFuzzer (libclang_rt.fuzzer). Install it: apt-get install -y clang-14 libclang-rt-14-dev (as root), or set CXX" >&2
		exit 2
	fi
fi
CC_BIN=${CXX_BIN/clang++/clang}

# --- build ---
# The addon's sources as binding.gyp lists them, so a new file is never
# missed; addon.cc only registers the module with Node. N-API headers come
# from node-addon-api and Node's own include dir, because handle.cc and
# records.cc (whose batch classes the targets run) include them.
mapfile -t LIB_SRCS < <(node -e '
	const g = JSON.parse(require("fs").readFileSync("binding.gyp", "utf8"));
	for (const s of g.targets[0].sources) if (!s.endsWith("/addon.cc")) console.log(s);')
NAPI_INC=$(node -p 'require("node-addon-api").include_dir')
NODE_INC=
for d in "$(dirname "$(dirname "$(command -v node)")")/include/node" "$HOME/.cache/node-gyp/$(node -p process.versions.node)/include/node"; do
	[ -f "$d/node_api.h" ] && { NODE_INC=$d; break; }
done
[ -n "$NODE_INC" ] || { echo "fuzz: FAILED: node_api.h not found (run npm ci first: node-gyp fetches the headers)" >&2; exit 2; }
# binding.gyp's defines; node_addon_api_except means C++ exceptions on.
DEFS=(-DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS -D_GNU_SOURCE)
FLAGS=(-std=c++17 -g -O1 -fno-omit-frame-pointer "${DEFS[@]}" -I"$NAPI_INC" -I"$NODE_INC"
	-fsanitize=address,undefined -fno-sanitize-recover=all)
mkdir -p "$WORK/obj" "$WORK/bin"
echo "fuzz: building with $CXX_BIN (${#LIB_SRCS[@]} addon sources)" >&2
newest_header=$(find native -name '*.h' -newer "$WORK/obj/.stamp" -print -quit 2>/dev/null || true)
[ -f "$WORK/obj/.stamp" ] || newest_header=all
compile() { # src obj [extra flags]
	local s=$1 o=$2
	shift 2
	if [ -z "$newest_header" ] && [ -f "$o" ] && [ "$o" -nt "$s" ] && [ "$o" -nt scripts/fuzz.sh ]; then return; fi
	"$CXX_BIN" "${FLAGS[@]}" "$@" -c "$s" -o "$o"
}
pids=()
objs=()
build_queue=()
for s in "${LIB_SRCS[@]}"; do build_queue+=("$s|$WORK/obj/$(echo "${s#native/}" | tr / _).o|-fsanitize=fuzzer-no-link"); done
build_queue+=("native/fuzz/fake_kernel.cc|$WORK/obj/fuzz_fake_kernel.o|-fsanitize=fuzzer-no-link")
for t in "${TARGETS[@]}"; do build_queue+=("native/fuzz/${t}_fuzzer.cc|$WORK/obj/target_$t.o|-fsanitize=fuzzer"); done
fail=0
for item in "${build_queue[@]}"; do
	IFS='|' read -r s o f <<<"$item"
	[[ $o == */target_* ]] || [[ $o == */fuzz_* ]] || objs+=("$o")
	compile "$s" "$o" "$f" &
	pids+=($!)
	if [ "${#pids[@]}" -ge "$JOBS" ]; then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" -eq 0 ] || { echo "fuzz: FAILED to build" >&2; exit 1; }
touch "$WORK/obj/.stamp"
rm -f "$WORK/libaddon.a"
ar rcs "$WORK/libaddon.a" "${objs[@]}"
# N-API entry points are referenced by the JavaScript-facing halves of the
# files the targets link, and never called off the JavaScript thread. They
# resolve to stubs that abort loudly, so calling one cannot pass unseen.
{
	echo '#include <stdio.h>'
	echo '#include <stdlib.h>'
	echo 'static void napi_called(const char* f) { fprintf(stderr, "fuzz: N-API %s called outside Node\n", f); abort(); }'
	nm -u --format=just-symbols "${objs[@]}" "$WORK"/obj/target_*.o 2>/dev/null | grep -E '^(napi_|node_api_)' | sort -u |
		while read -r f; do echo "void $f(void) { napi_called(\"$f\"); }"; done
} >"$WORK/napi_stubs.c"
"$CC_BIN" -c -O1 "$WORK/napi_stubs.c" -o "$WORK/obj/napi_stubs.o"
for t in "${TARGETS[@]}"; do
	"$CXX_BIN" "${FLAGS[@]}" -fsanitize=fuzzer "$WORK/obj/target_$t.o" "$WORK/obj/fuzz_fake_kernel.o" \
		"$WORK/obj/napi_stubs.o" "$WORK/libaddon.a" -ldl -o "$WORK/bin/$t"
done

node native/fuzz/seeds.mjs >&2

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0

# --- replay saved crashes: each must now run clean ---
for t in "${TARGETS[@]}"; do
	shopt -s nullglob
	files=("$REGRESS/$t"/*)
	shopt -u nullglob
	[ "${#files[@]}" -eq 0 ] && continue
	if "$WORK/bin/$t" "${files[@]}" >"$WORK/$t.replay.log" 2>&1; then
		echo "fuzz: $t: ${#files[@]} regression inputs replayed clean" >&2
	else
		echo "fuzz: $t: a regression input fails again; see $WORK/$t.replay.log" >&2
		tail -n 30 "$WORK/$t.replay.log" >&2
		status=1
	fi
done

# --- fuzz ---
run_target() {
	local t=$1 corpus=$WORK/corpus/$1 crashes=$WORK/crashes/$1
	# Only this run's failing inputs count: an earlier, interrupted run's stay out.
	rm -rf "$crashes"
	mkdir -p "$corpus" "$crashes"
	local keep_going=()
	[ -n "${FUZZ_KEEP_GOING:-}" ] && keep_going=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
	# The first corpus dir collects new inputs; the seeds dir is read only.
	"$WORK/bin/$t" "${keep_going[@]}" -max_total_time="$SECS" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$corpus" "$SEEDS/$t" >"$WORK/$t.log" 2>&1
}
declare -A running=()
for t in "${TARGETS[@]}"; do
	while [ "${#running[@]}" -ge "$JOBS" ]; do
		wait -n || true
		for p in "${!running[@]}"; do kill -0 "$p" 2>/dev/null || unset "running[$p]"; done
	done
	run_target "$t" &
	running[$!]=$t
	echo "fuzz: $t for ${SECS}s" >&2
done
wait || true

# What a failing input breaks: the invariant's name, or the sanitizer's
# report and the first frame in the project's code. Inputs with the same
# signature are one finding (fork mode finds one bug many times).
signature() { # target input
	"$WORK/bin/$1" -timeout=25 -rss_limit_mb=2048 "$2" 2>&1 | awk '
		/invariant broken: / { sub(/.*invariant broken: /, ""); sub(/:.*/, ""); print "invariant: " $0; exit }
		/ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|ERROR: libFuzzer: (timeout|out-of-memory)/ && !what { what = $0; sub(/^==[0-9]+==/, "", what); sub(/0x[0-9a-f]+/, "", what) }
		what && /#[0-9]+ .* in .*native\// { sub(/.* in /, ""); sub(/ \/.*\/native\//, " native/"); print what " at " $0; exit }
		END { if (what) print what }' | head -n1 || true
}

for t in "${TARGETS[@]}"; do
	shopt -s nullglob
	# slow-unit-*: an input that once took over 10 s; on a shared machine a
	# stall is enough, so it is said, not counted (a real hang is a timeout-*).
	for f in "$WORK/crashes/$t"/slow-unit-*; do
		echo "fuzz: $t: an input ran slowly once ($(basename "$f")); not a failure" >&2
		rm -f "$f"
	done
	found=("$WORK/crashes/$t"/*)
	shopt -u nullglob
	execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$WORK/$t.log" | tail -n1 || true)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+(/[0-9]+[a-zA-Z]*)?' "$WORK/$t.log" | tail -n1 || true)
	[ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+: cov' "$WORK/$t.log" | tail -n1 | tr -dc 0-9 || true)
	if [ "${#found[@]}" -gt 0 ]; then
		mkdir -p "$REGRESS/$t"
		declare -A seen=()
		kept=0
		for f in "${found[@]}"; do
			sig=$(signature "$t" "$f")
			sig=${sig:-(no sanitizer report when run again)}
			if [ -z "${seen[$sig]:-}" ]; then
				seen[$sig]=1
				cp "$f" "$REGRESS/$t/"
				kept=$((kept + 1))
				echo "fuzz: $t FOUND: $sig; input $REGRESS/$t/$(basename "$f")" >&2
			fi
			rm -f "$f"
		done
		unset seen
		echo "fuzz: $t: ${#found[@]} failing input(s), $kept distinct, kept in $REGRESS/$t/ (${execs:-?} runs; ${cov:-?}); log: $WORK/$t.log" >&2
		status=1
	elif ! grep -qE '^Done |INFO: exiting: 0' "$WORK/$t.log"; then
		echo "fuzz: $t did not finish cleanly; log: $WORK/$t.log" >&2
		tail -n 20 "$WORK/$t.log" >&2
		status=1
	else
		echo "fuzz: $t clean (${execs:-?} runs; ${cov:-?})" >&2
	fi
done
exit $status
