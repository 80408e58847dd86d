#!/usr/bin/env bash
# scripts/capture-golden.sh [SUITE...] [--only NAME-SUBSTRING]
#
# Record the netlink bytes the real tools send and receive, as fixtures for the
# encoder/decoder unit tests:
#   ipvsadm    -> test/fixtures/ipvsadm/*.json    (inside the UML 6.1 sandbox)
#   ipset      -> test/fixtures/ipset/*.json      (host kernel, fresh netns per case)
#   ipset-6.1  -> test/fixtures/ipset-6.1/*.json  (inside the UML 6.1 sandbox)
#   conntrack  -> test/fixtures/conntrack/*.json  (host kernel, fresh netns per case)
#   conntrack-6.1 -> test/fixtures/conntrack-6.1/*.json (inside the UML 6.1 sandbox)
#   nft        -> test/fixtures/nft/*.json        (host kernel, fresh netns per case)
# Default: all six. Needs root (netns, strace). Each suite's directory is
# emptied first unless --only is given. See test/fixtures/README.md.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJECT=$(cd "$HERE/.." && pwd)
FIX=$PROJECT/test/fixtures
ONLY=
suites=()
while [ $# -gt 0 ]; do
	case "$1" in
	--only) ONLY=${2:?}; shift 2 ;;
	ipvsadm | ipset | ipset-6.1 | conntrack | conntrack-6.1 | nft) suites+=("$1"); shift ;;
	*) echo "usage: $0 [ipvsadm] [ipset] [ipset-6.1] [conntrack] [conntrack-6.1] [nft] [--only NAME-SUBSTRING]" >&2; exit 2 ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=(ipset nft ipvsadm ipset-6.1 conntrack conntrack-6.1)
[ "$(id -u)" = 0 ] || { echo "capture-golden: needs root" >&2; exit 1; }
"$HERE/sandbox/ensure-deps.sh"

prep() { mkdir -p "$FIX/$1"; [ -n "$ONLY" ] || rm -f "$FIX/$1"/*.json; }

in_sandbox=()
for s in "${suites[@]}"; do
	case "$s" in
	ipset)
		prep ipset
		"$HERE/sandbox/golden-cases.sh" ipset "$FIX/ipset" "$ONLY" ;;
	nft)
		prep nft
		"$HERE/sandbox/golden-cases.sh" nft "$FIX/nft" "$ONLY" ;;
	ipvsadm)
		prep ipvsadm
		in_sandbox+=("scripts/sandbox/golden-cases.sh ipvsadm test/fixtures/ipvsadm '$ONLY'") ;;
	ipset-6.1)
		prep ipset-6.1
		in_sandbox+=("scripts/sandbox/golden-cases.sh ipset test/fixtures/ipset-6.1 '$ONLY'") ;;
	conntrack)
		prep conntrack
		"$HERE/sandbox/golden-cases.sh" conntrack "$FIX/conntrack" "$ONLY" ;;
	conntrack-6.1)
		prep conntrack-6.1
		in_sandbox+=("scripts/sandbox/golden-cases.sh conntrack test/fixtures/conntrack-6.1 '$ONLY'") ;;
	esac
done
if [ ${#in_sandbox[@]} -gt 0 ]; then
	script="set -e"
	for c in "${in_sandbox[@]}"; do script="$script; $c"; done
	cd "$PROJECT"
	"$HERE/sandbox/run.sh" bash -c "$script"
fi
du -sh "$FIX" >&2
