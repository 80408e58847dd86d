# scripts/sandbox/guest.sh — sourced by both sandbox runners (run.sh here for
# user-mode-linux, ../qemu/run.sh for Debian's kernel under QEMU), so that a
# command finds the same guest whichever kernel runs it: the caller's
# directory and environment, a fresh /tmp and /run, the same modules, `lo`
# up, hostname `sandbox`; its output and exit status land in files of the
# run's directory, which the host reads.
#
# The runner sets SAY_PREFIX (its progress lines' prefix) before sourcing
# this, and RUN (the run's directory, visible to the guest at the same path)
# before calling the guest_* functions. Sourcing sets PROJECT, CWD, TIMEOUT
# (SANDBOX_TIMEOUT, default 3000 s) and defines say and die (exit 125).

PROJECT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CWD=$(pwd -P)
TIMEOUT=${SANDBOX_TIMEOUT:-3000}
say() { [ "${SANDBOX_QUIET:-}" = 1 ] || echo "$SAY_PREFIX: $*" >&2; }
die() { echo "$SAY_PREFIX: error: $*" >&2; exit 125; }

# Which of /tmp and /run the guest gets fresh (MOUNT_TMP, MOUNT_RUN = 1|0).
# A fresh tmpfs on /tmp, unless the project or the cwd is there (a CI clone
# often is): then the guest shares the host's /tmp. Always a fresh /run
# (unless the cwd is there): sharing the host's left the guest's /run/netns
# entries on the host, where a later boot, whose pids repeat, collided with
# those of a run killed before cleanup.
guest_mount_plan() {
	case "$PROJECT/" in /run/* | /proc/* | /sys/* | /dev/*)
		die "project dir $PROJECT is under a path the guest mounts over" ;;
	esac
	MOUNT_TMP=1
	MOUNT_RUN=1
	case "$CWD/" in /tmp/*) MOUNT_TMP=0 ;; /run/*) MOUNT_TMP=0 MOUNT_RUN=0 ;; esac
	case "$PROJECT/" in /tmp/*) MOUNT_TMP=0 ;; esac
}

# The caller's variables the guest gets: CI, NODE_OPTIONS, DEBUG, TAP*,
# IPVS_NETLINK_*, CHURN_*, BENCH_* (the benchmarks' profiling aids), written as
# exports to $RUN/env.sh.
guest_env_file() {
	local name
	: >"$RUN/env.sh"
	while IFS= read -r name; do
		case "$name" in
		CI | NODE_OPTIONS | DEBUG | TAP* | IPVS_NETLINK_* | CHURN_* | BENCH_*)
			printf 'export %s=%q\n' "$name" "${!name}" >>"$RUN/env.sh" ;;
		esac
	done < <(compgen -e)
}

# guest_modules DIR [nft]: the modules the guest loads, those the kernel
# whose module tree is DIR (lib/modules/VERSION) lacks left out (modprobe -a
# stops at the first it cannot find). ipset's set types are all taken.
# nf_tables only with "nft": user-mode-linux builds its core as a module but
# not its ip/ip6/inet families, and with the core loaded iptables-nft's
# listing succeeds while every table it adds is refused, so iptables users
# (the proxy, the benchmarks) would pick it over iptables-legacy.
guest_modules() {
	local dir=$1 nft=${2:-} want s f b
	want="ip_vs"
	for s in rr wrr lc wlc lblc lblcr dh sh sed nq fo ovf mh twos; do want="$want ip_vs_$s"; done
	want="$want ip_vs_ftp ip_vs_pe_sip"
	for f in "$dir"/kernel/net/netfilter/ipset/ip_set*.ko*; do
		[ -e "$f" ] || continue
		b=${f##*/}; want="$want ${b%%.ko*}"
	done
	want="$want xt_set dummy veth nf_conntrack nf_conntrack_netlink nf_nat xt_nat"
	want="$want iptable_nat iptable_filter iptable_mangle ip6table_nat ip6table_filter"
	want="$want xt_MASQUERADE xt_mark xt_comment xt_addrtype xt_conntrack xt_multiport"
	want="$want xt_tcpudp xt_ipvs ipip ip_gre ip6_tunnel fou fou6"
	# The kube-proxy controller's filter rules (KUBE-IPVS-FILTER, externalIPs).
	want="$want xt_physdev ipt_REJECT ip6t_REJECT"
	# nf_tables with NAT and masquerading, conntrack expressions.
	if [ "$nft" = nft ]; then
		want="$want nf_tables nft_chain_nat nft_nat nft_masq nft_redir nft_ct nft_compat"
		want="$want nft_reject_inet nft_fib_inet nft_numgen nft_limit"
		# The proxy's ip and ip6 tables (reject, fib): the guest cannot autoload them (its modules are off the default path).
		want="$want nft_reject_ipv4 nft_reject_ipv6 nft_fib_ipv4 nft_fib_ipv6"
	fi
	cat "$dir/modules.dep" "$dir/modules.builtin" 2>/dev/null | awk -v want="$want" '
		{ sub(/:.*/, ""); n = $0; sub(/.*\//, "", n); sub(/\.ko.*/, "", n); gsub(/-/, "_", n); have[n] = 1 }
		END { k = split(want, w, " "); for (i = 1; i <= k; i++) if (w[i] in have) printf "%s ", w[i] }'
}

# guest_cpu_pin: sets PIN, the words that start the sandbox kernel on one
# host processor nobody else's sandbox kernel holds (none where only one
# processor is allowed or none is free; SANDBOX_CPU=N asks for processor N,
# SANDBOX_CPU=none for none). The hold is a lock on an open file that the
# kernel's processes inherit: the runner closes its own copy with
# guest_cpu_release once the kernel has started, so the processor is free
# again when the last of them ends, however the runner ends.
# Why one processor: user-mode-linux's guest processes are host processes
# that hand the processor to one another at every system call and page
# fault. Left to roam, each handover wakes the idle processor, which in a
# virtual machine is a trip through the hypervisor: the same tests took
# several times as long as on one processor.
guest_cpu_pin() {
	PIN=() PIN_FD=
	local want=${SANDBOX_CPU:-} cpus=() part n i
	[ "$want" = none ] && return 0
	command -v taskset >/dev/null && command -v flock >/dev/null || return 0
	if [ -n "$want" ]; then
		taskset -c "$want" true || die "SANDBOX_CPU=$want: taskset cannot put a process there"
		PIN=(taskset -c "$want")
		say "on processor $want"
		return 0
	fi
	for part in $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr , ' '); do
		if [[ $part == *-* ]]; then
			for ((n = ${part%-*}; n <= ${part#*-}; n++)); do cpus+=("$n"); done
		else
			cpus+=("$part")
		fi
	done
	[ "${#cpus[@]}" -gt 1 ] || return 0
	# Where affinity cannot be set (a container's seccomp policy), no pinning rather than no boot.
	taskset -c "${cpus[0]}" true 2>/dev/null || return 0
	# The highest first: the first processor usually takes the devices' interrupts.
	for ((i = ${#cpus[@]} - 1; i >= 0; i--)); do
		exec {PIN_FD}>>"${TMPDIR:-/tmp}/ipvs-netlink-sandbox-cpu-${cpus[i]}.lock"
		if flock -n "$PIN_FD"; then
			PIN=(taskset -c "${cpus[i]}")
			say "on processor ${cpus[i]}"
			return 0
		fi
		exec {PIN_FD}>&-
	done
	PIN_FD=
	say "every processor has a sandbox kernel already: this one is not pinned"
}
guest_cpu_release() {
	if [ -n "${PIN_FD:-}" ]; then exec {PIN_FD}>&-; fi
	PIN_FD=
}

# guest_write_init NAME MODBASE MODULES CMD [ARGS...]: writes $RUN/init.sh,
# the guest's PID 1 on the host's root: mounts, modules (MODBASE holds
# VERSION/kernel/...), lo up, the command in CWD with its output appended to
# $RUN/output and its status to $RUN/rc, then power off. NAME (uml, qemu)
# is exported as IPVS_NETLINK_SANDBOX; IPVS_NETLINK_KERNEL=sandbox tells
# the tests they may unload modules and find them under /run/sandbox-modroot.
guest_write_init() {
	local name=$1 modbase=$2 mods=$3 path cmdline
	shift 3
	path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	if command -v node >/dev/null 2>&1; then
		path=$(dirname "$(readlink -f "$(command -v node)")"):$path
	fi
	cmdline=$(printf '%q ' "$@")
	cat >"$RUN/init.sh" <<EOF
#!/bin/bash
# generated by scripts/sandbox/guest.sh; the guest's PID 1
export PATH=$path HOME=/root TERM=dumb LANG=C.UTF-8
OUT=$(printf '%q' "$RUN/output")
RC=$(printf '%q' "$RUN/rc")
exec </dev/null >>$(printf '%q' "$RUN/init.log") 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
[ $MOUNT_TMP = 1 ] && mount -t tmpfs -o mode=1777 tmpfs /tmp
[ $MOUNT_RUN = 1 ] && mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /dev/pts /dev/shm /run/netns
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
MODROOT=/run/sandbox-modroot
mkdir -p \$MODROOT/lib
ln -sfn $(printf '%q' "$modbase") \$MODROOT/lib/modules
modprobe -a -q -d \$MODROOT $mods || echo "sandbox: some modules did not load"
ip link set lo up
hostname sandbox
. $(printf '%q' "$RUN/env.sh")
export IPVS_NETLINK_KERNEL=sandbox IPVS_NETLINK_SANDBOX=$name
cd $(printf '%q' "$CWD") || { echo 125 >"\$RC"; sync; poweroff -f; }
: >$(printf '%q' "$RUN/started")
if [ -e /proc/net/ip_vs ]; then
	$cmdline >>"\$OUT" 2>&1 </dev/null
	echo \$? >"\$RC"
else
	echo "sandbox: IPVS is not available in the guest kernel" >>"\$OUT"
	echo 125 >"\$RC"
fi
sync
poweroff -f
EOF
	chmod +x "$RUN/init.sh"
	: >"$RUN/output"
}

# guest_follow PID: streams the command's output to stdout until PID (the
# kernel's process) ends; its exit status in KERNEL_RC. TAILPID is set while
# it runs, for the runner's exit handler.
guest_follow() {
	tail -c +1 -f --pid="$1" "$RUN/output" &
	TAILPID=$!
	set +e
	wait "$1"
	KERNEL_RC=$?
	wait "$TAILPID"
	set -e
	TAILPID=
}

# guest_on_exit FN: FN (which stops what the runner started) and then the
# run's directory removed, or kept with SANDBOX_KEEP=1, whenever the runner
# exits; a signal ends the runner with 130.
guest_on_exit() {
	# shellcheck disable=SC2064 # FN is meant to be fixed now
	trap "$1; guest_forget_run" EXIT
	trap 'say "interrupted"; exit 130' INT TERM HUP
}
guest_forget_run() {
	if [ "${SANDBOX_KEEP:-}" = 1 ]; then
		say "kept $RUN"
	else
		rm -rf "$RUN"
	fi
}

# guest_status KERNEL_EXIT: after the guest stopped, exit as the command did,
# or 125 with the end of the console and init logs when it wrote no status.
guest_status() {
	local kernel_rc=$1 rc elapsed
	elapsed=$(awk -v s="$START" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	rc=$(cat "$RUN/rc" 2>/dev/null || true)
	case "$rc" in
	'' | *[!0-9]*)
		echo "${SAY_PREFIX}: sandbox kernel did not finish: no exit status written (the kernel's process exited $kernel_rc after ${elapsed}s)" >&2
		echo "${SAY_PREFIX}: --- last lines of the guest console / init log ---" >&2
		tail -n 25 "$RUN/console.log" >&2 || true
		tail -n 10 "$RUN/init.log" >&2 2>/dev/null || true
		exit 125 ;;
	esac
	local boot=
	[ -e "$RUN/started" ] && boot=$(awk -v s="$START" -v e="$(date -r "$RUN/started" +%s.%N)" 'BEGIN { printf ", command started after %.1fs", e - s }')
	say "done in ${elapsed}s${boot}, exit status $rc"
	exit "$rc"
}
