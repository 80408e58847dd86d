#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60; CI runs ~10)
#
# libFuzzer + ASan + UBSan over every decoder of the addon, built without
# Node from the plain C++ codec sources (native/fuzz/*_fuzzer.cc):
#   ipvs_message   ipvs::Decode of one reply
#   ipvs_datagram  datagrams -> SplitMessages -> ParseError / ipvs::Decode
#   ipset_reply    datagrams -> PROTOCOL/TYPE/LIST decoders (+ save text), echo LINENO
#   ipset_entry    the entry text parser (user input), with round-trip checks
#   rtnl_reply     datagrams -> DecodeLink / DecodeAddress
#   netlink_error  SplitMessages + ParseError (echo, ext-ack TLVs)
# Every run: regenerate the seeds from the recorded kernel replies, replay
# every saved crash (native/fuzz/corpus/regressions/<target>/), then fuzz
# each target FUZZ_JOBS (default 2) at a time. A new crash is copied into
# regressions/ and the script exits non-zero; commit it once fixed.
# Build and the growing working corpus live in .sandbox/fuzz/ (ignored).
# Env: FUZZ_TARGETS="a b" to run some, FUZZ_JOBS, CXX.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECS=${1:-60}
JOBS=${FUZZ_JOBS:-2}
TARGETS=(${FUZZ_TARGETS:-ipvs_message ipvs_datagram ipset_reply ipset_entry rtnl_reply netlink_error})
WORK=.sandbox/fuzz
SEEDS=native/fuzz/corpus
REGRESS=$SEEDS/regressions

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
	if [ "$(id -u)" -eq 0 ]; then
		echo "fuzz: installing clang-14 and its runtimes" >&2
		apt-get install -y clang-14 libclang-rt-14-dev >&2 || { apt-get update >&2 && apt-get install -y clang-14 libclang-rt-14-dev >&2; }
		CXX_BIN=$(find_cxx)
	fi
	[ -n "$CXX_BIN" ] || { echo "fuzz: clang with libFuzzer is missing; run: sudo apt-get install -y clang-14 libclang-rt-14-dev" >&2; exit 1; }
fi

# --- build ---
# The codec sources only: no napi, no addon glue (socket.cc comes along
# because genl/family.cc resolves families over a socket; it is not called).
LIB_SRCS=(native/netlink/attribute.cc native/netlink/message.cc native/netlink/socket.cc
	native/genl/family.cc native/ipvs/codec.cc native/rtnl/codec.cc
	native/ipset/set_types.cc native/ipset/names.cc native/ipset/entry_parse.cc
	native/ipset/entry_format.cc native/ipset/codec.cc)
FLAGS=(-std=c++17 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE
	-fsanitize=address,undefined -fno-sanitize-recover=all)
mkdir -p "$WORK/obj" "$WORK/bin"
echo "fuzz: building with $CXX_BIN" >&2
pids=()
objs=()
for s in "${LIB_SRCS[@]}"; do
	o=$WORK/obj/$(echo "${s#native/}" | tr / _).o
	objs+=("$o")
	"$CXX_BIN" "${FLAGS[@]}" -fsanitize=fuzzer-no-link -c "$s" -o "$o" &
	pids+=($!)
	if [ "${#pids[@]}" -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
for t in "${TARGETS[@]}"; do
	"$CXX_BIN" "${FLAGS[@]}" -fsanitize=fuzzer "native/fuzz/${t}_fuzzer.cc" "${objs[@]}" -o "$WORK/bin/$t"
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
	mkdir -p "$corpus" "$crashes"
	# The first corpus dir collects new inputs; the seeds dir is read only.
	"$WORK/bin/$t" -max_total_time="$SECS" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
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

for t in "${TARGETS[@]}"; do
	shopt -s nullglob
	found=("$WORK/crashes/$t"/*)
	shopt -u nullglob
	execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$WORK/$t.log" | tail -n1)
	if [ "${#found[@]}" -gt 0 ]; then
		mkdir -p "$REGRESS/$t"
		cp "${found[@]}" "$REGRESS/$t/"
		rm -f "${found[@]}"
		echo "fuzz: $t FOUND ${#found[@]} failing input(s), kept in $REGRESS/$t/; log: $WORK/$t.log" >&2
		grep -m1 -E 'ERROR: |runtime error|invariant broken|round trip broken' "$WORK/$t.log" >&2 || true
		status=1
	elif ! grep -q '^Done ' "$WORK/$t.log"; then
		echo "fuzz: $t did not finish cleanly; log: $WORK/$t.log" >&2
		tail -n 20 "$WORK/$t.log" >&2
		status=1
	else
		echo "fuzz: $t clean (${execs:-?} runs)" >&2
	fi
done
exit $status
