#!/usr/bin/env bash
# scripts/test-files/queue.sh DIR FILES...: makes DIR/files, the shared list
# test-files.sh --queue takes test files from, longest first, so that the
# boots sharing it end close together (the longest files are not left for
# last). The order comes from test-seconds (one "SECONDS FILE" a line, the
# times of an earlier run: a queue's DIR/seconds, sorted, is the same
# format); a file not listed there counts as a minute.
set -euo pipefail
[ "$#" -ge 2 ] || { echo "usage: $0 DIR FILES..." >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$1
shift
mkdir -p "$dir"
for f in "$@"; do
	s=$(awk -v f="$f" '$2 == f { print $1; exit }' "$HERE/test-seconds")
	echo "${s:-60} $f"
done | sort -k1,1nr -k2,2 | cut -d' ' -f2- >"$dir/files"
