/**
 * Start-up checks that turn the usual first-run failures into instructions
 * instead of a netlink errno halfway through the first sync.
 */
import { existsSync, readFileSync } from 'node:fs';
import { NetlinkError } from 'ipvs-netlink';

const CAP_NET_ADMIN = 12;

function hasCapability(bit: number, statusText = readProcStatus()): boolean | undefined {
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(statusText);
  if (!m) return undefined;
  return ((BigInt(`0x${m[1]}`) >> BigInt(bit)) & 1n) === 1n;
}

function readProcStatus(): string {
  try {
    return readFileSync('/proc/self/status', 'utf8');
  } catch {
    return '';
  }
}

export function checkPrivileges(opts: { netns?: string }, statusText?: string): void {
  if (hasCapability(CAP_NET_ADMIN, statusText) === false) {
    throw new Error(
      'kube-proxy-ipvs needs CAP_NET_ADMIN to program IPVS, ipsets, addresses and iptables: run it as root, ' +
        'or in a privileged pod / a container with capabilities NET_ADMIN and NET_RAW (see deploy/kube-proxy-ipvs.yaml)',
    );
  }
  if (opts.netns !== undefined && !existsSync(opts.netns)) {
    throw new Error(`--netns ${opts.netns}: no such network namespace (create it with: ip netns add NAME, then pass /run/netns/NAME)`);
  }
}

/** Rewrites a controller start-up failure into what to do about it. */
export function explainStartError(err: unknown): Error {
  if (err instanceof NetlinkError) {
    if (err.code === 'EPROTONOSUPPORT' || err.code === 'ENOENT') {
      return new Error(`IPVS is not available: ${err.message}. On a node: modprobe ip_vs ip_vs_rr (and the schedulers you use), then restart kube-proxy-ipvs`);
    }
    if (err.code === 'EPERM' || err.code === 'EACCES') {
      return new Error(`${err.message}: the process lacks CAP_NET_ADMIN in the target network namespace (run as root or privileged)`);
    }
  }
  if (err instanceof Error && /spawn (\S+) ENOENT/.test(err.message)) {
    const tool = /spawn (\S+) ENOENT/.exec(err.message)![1];
    return new Error(`${tool} is not installed: kube-proxy-ipvs runs ${tool} for the rules netlink does not cover (install iptables / procps). ${err.message}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}
