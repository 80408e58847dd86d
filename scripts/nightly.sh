#!/usr/bin/env bash
# scripts/nightly.sh: the kernel tests too long for CI's 2 cores, for a
# nightly run: the nftables rules backend with real traffic in the QEMU
# kernel (IPVS and nf_tables together; node runs ~33x slower there, so a
# file takes minutes), each file run by node in one boot, ending with tap's
# summary line. CI runs the cheap part of the same checks on the host kernel
# (kube-proxy-ipvs/test/host/) and the file scripts/test.sh lists.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
files=(kube-proxy-ipvs/test/qemu/*.test.ts)
echo "nightly: ${#files[@]} file(s) in the QEMU kernel: ${files[*]}" >&2
exec bash scripts/qemu/tap.sh --files "${files[@]}"
