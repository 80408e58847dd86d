/**
 * --netns PATH: notices when the network namespace the proxy programs is
 * deleted (or replaced by a new one under the same name) while it runs.
 *
 * Why it matters: the proxy's netlink sockets were opened inside that
 * namespace and keep it alive after `ip netns delete`, so IPVS calls go on
 * "succeeding" against a namespace nobody can reach any more, while every
 * program run there (`nsenter --net=PATH iptables-restore`) fails. Left
 * alone, that is a proxy retrying syncs forever and reporting half-success.
 *
 * What the proxy does instead (proxy.ts): as soon as the path is gone or
 * names a different namespace, it logs one structured error saying so and
 * what to do, stops syncing (nothing is left that it could program; no
 * retry loop), and /healthz and /livez answer 503 from then on, so a
 * supervisor or liveness probe restarts it; a restart then fails at once
 * with "no such network namespace" until the namespace exists again. It
 * does not exit by itself: the health endpoints and metrics stay up to say
 * why. The namespace's identity is its nsfs inode, read at start.
 */
import { statSync } from 'node:fs';

export type NetnsState = { ok: true } | { ok: false; reason: string };

export class NetnsWatch {
  private readonly identity: string;

  constructor(readonly path: string) {
    this.identity = NetnsWatch.identityOf(path) ?? '';
  }

  private static identityOf(path: string): string | undefined {
    try {
      const st = statSync(path);
      return `${st.dev}:${st.ino}`;
    } catch {
      return undefined;
    }
  }

  check(): NetnsState {
    const now = NetnsWatch.identityOf(this.path);
    if (now === undefined) return { ok: false, reason: `${this.path} no longer exists (the network namespace was deleted)` };
    if (now !== this.identity) return { ok: false, reason: `${this.path} now names a different network namespace (deleted and created again)` };
    return { ok: true };
  }

  /** Checks every second until the namespace is gone (then calls `gone` once) or `stopped()`; the timer does not hold the process. */
  every(gone: (reason: string) => void, stopped: () => boolean): NodeJS.Timeout {
    const timer = setInterval(() => {
      const state = this.check();
      if (state.ok || stopped()) return;
      clearInterval(timer);
      gone(state.reason);
    }, 1000);
    return timer.unref();
  }
}
