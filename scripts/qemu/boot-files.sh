#!/usr/bin/env bash
# scripts/qemu/boot-files.sh — the QEMU sandbox's boot files, made once and
# kept under .sandbox/qemu/: Debian's generic amd64 kernel package (fetched
# with apt-get download and unpacked with dpkg -x, never installed), its
# module tree indexed with depmod, the uncompressed vmlinux (QEMU enters it
# directly, PVH, instead of decompressing bzImage under emulation: ~10 s
# saved), and a small initramfs: static busybox, the modules that mount the
# host's root over virtio-9p, and initramfs-init.
#
# Prints the folder holding vmlinux, initrd.cpio, lib/modules/VERSION and
# package (the Debian package and version) on stdout; progress on stderr.
# The vmlinux and initramfs are remade only when their inputs change (the
# package, busybox, initramfs-init, this script).
#
# Which kernel: the one recorded in .sandbox/qemu/package by an earlier run,
# else QEMU_KERNEL_PACKAGE (a linux-image-* package name) if set, else the
# linux-image-*-amd64 built from the same kernel release as Debian's
# user-mode-linux (its Built-Using field), so both sandboxes run the same
# IPVS code, else the one linux-image-amd64 depends on now. Remove
# .sandbox/qemu (or set QEMU_KERNEL_PACKAGE) to choose again.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJECT=$(cd "$HERE/../.." && pwd)
CACHE=$PROJECT/.sandbox/qemu
BUSYBOX=/bin/busybox

say() { [ "${SANDBOX_QUIET:-}" = 1 ] || echo "qemu: $*" >&2; }
die() { echo "qemu: error: $*" >&2; exit 1; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one run prepares, any other waits for it

# The version apt would install of a package, empty if none.
candidate_version() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '^(none)$' || true; }

# The linux-image-VERSION-amd64 built from Debian kernel release $1, if the
# registry offers the linux-image-amd64 of that release.
image_of_release() {
	apt-cache show "linux-image-amd64=$1" 2>/dev/null |
		sed -n 's/^Depends:.*\(linux-image-[0-9][^ ]*-amd64\) (= .*/\1/p' | head -n1
}

choose_package() {
	local name= release
	if [ -n "${QEMU_KERNEL_PACKAGE:-}" ]; then
		name=$QEMU_KERNEL_PACKAGE
	else
		release=$(apt-cache show user-mode-linux 2>/dev/null | sed -n 's/^Built-Using:.*linux (= \([^)]*\)).*/\1/p' | head -n1)
		[ -n "$release" ] && name=$(image_of_release "$release")
		[ -n "$name" ] || name=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
	fi
	[ -n "$name" ] || return 1
	case "$name" in *-cloud-amd64) die "$name is the cloud flavour, which has no 9p: use the generic one" ;; esac
	local version
	version=$(candidate_version "$name")
	[ -n "$version" ] || return 1
	echo "$name $version"
}

recorded=$(cat "$CACHE/package" 2>/dev/null || true)
if [ -n "${QEMU_KERNEL_PACKAGE:-}" ] && [ "${recorded%% *}" != "$QEMU_KERNEL_PACKAGE" ]; then
	recorded=
fi
if [ -z "$recorded" ] || [ ! -d "$CACHE/${recorded/ /_}/boot" ]; then
	if ! recorded=$(choose_package); then
		say "updating the package lists (apt-get update)"
		apt-get update -qq >&2 || die "apt-get update failed"
		recorded=$(choose_package) || die "the package registry offers no linux-image-*-amd64 kernel${QEMU_KERNEL_PACKAGE:+ named $QEMU_KERNEL_PACKAGE}"
	fi
fi
PKG=${recorded% *}
VERSION=${recorded#* }
DIR=$CACHE/${PKG}_$VERSION

if [ ! -d "$DIR/boot" ]; then
	say "fetching $PKG $VERSION (Debian's kernel package, ~70 MB; unpacked into $DIR, not installed)"
	dl=$(mktemp -d "$CACHE/download.XXXXXX")
	# As root apt drops to its _apt user for downloads, which cannot write
	# into the project; root fetching into its own folder is safe.
	(cd "$dl" && apt-get -q -o APT::Sandbox::User=root download "$PKG=$VERSION" >&2) || { rm -rf "$dl"; die "apt-get download $PKG=$VERSION failed"; }
	rm -rf "$DIR.tmp"
	dpkg -x "$dl"/*.deb "$DIR.tmp" || { rm -rf "$dl"; die "unpacking $PKG failed"; }
	rm -rf "$dl"
	kver=$(ls -1 "$DIR.tmp/lib/modules")
	depmod -b "$DIR.tmp" "$kver" || die "depmod for $kver failed"
	mv "$DIR.tmp" "$DIR"
fi
echo "$PKG $VERSION" >"$CACHE/package"
echo "$PKG $VERSION" >"$DIR/package"
KVER=$(ls -1 "$DIR/lib/modules")
MODDIR=$DIR/lib/modules/$KVER

[ -x "$BUSYBOX" ] || die "$BUSYBOX not found (scripts/sandbox/ensure-deps.sh qemu installs busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
	die "$BUSYBOX is dynamically linked; the initramfs needs busybox-static"
fi
inputs="$PKG $VERSION $(cksum <"$BUSYBOX") $(cksum <"$HERE/initramfs-init") $(cksum <"$HERE/boot-files.sh")"
if [ "$(cat "$DIR/inputs" 2>/dev/null)" = "$inputs" ] && [ -f "$DIR/vmlinux" ] && [ -f "$DIR/initrd.cpio" ]; then
	echo "$DIR"
	exit 0
fi

say "making vmlinux and the initramfs for $KVER"
rm -f "$DIR/inputs"
# The bzImage carries the kernel as an XZ stream after its set-up code.
vmlinuz=$DIR/boot/vmlinuz-$KVER
offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n1 | cut -d: -f1)
[ -n "$offset" ] || die "no XZ stream in $vmlinuz (not an XZ-compressed kernel?)"
# (xz stops at the stream's end; tail, cut short, is not asked how it ended.)
xz -dc --single-stream < <(tail -c +"$((offset + 1))" "$vmlinuz") >"$DIR/vmlinux.tmp" || die "decompressing $vmlinuz failed"
[ "$(head -c 4 "$DIR/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || die "what $vmlinuz holds is not an ELF kernel"
mv "$DIR/vmlinux.tmp" "$DIR/vmlinux"

# The initramfs: the modules 9p over virtio needs, in load order.
root=$(mktemp -d "$CACHE/initramfs.XXXXXX")
mkdir -p "$root/bin" "$root/lib/modules"
cp "$BUSYBOX" "$root/bin/busybox"
cp "$HERE/initramfs-init" "$root/init"
chmod 755 "$root/init"
: >"$root/modules"
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe -d "$DIR" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	name=${ko##*/}
	case "$ko" in
	*.ko) cp "$ko" "$root/lib/modules/$name" ;;
	*.ko.xz) name=${name%.xz}; xz -dc "$ko" >"$root/lib/modules/$name" ;;
	*) die "cannot unpack module $ko" ;;
	esac
	echo "$name" >>"$root/modules"
done
[ -s "$root/modules" ] || die "no 9p/virtio modules found for $KVER"
(cd "$root" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet) >"$DIR/initrd.cpio.tmp" || die "cpio failed"
rm -rf "$root"
mv "$DIR/initrd.cpio.tmp" "$DIR/initrd.cpio"
echo "$inputs" >"$DIR/inputs"
echo "$DIR"
