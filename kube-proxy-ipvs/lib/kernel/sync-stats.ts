/**
 * What the controller's syncs did, kept for counters() (and so the
 * metrics): syncs by kind and the time they took, ipset refusals by set and
 * the kernel's code, and the last sync's netlink traffic, which is the
 * difference of the sockets' own counters before and after it.
 */
import type { SocketCounters } from 'ipvs-netlink';
import type { ApplyReport, FailedOperation } from './applier.js';
import type { ControllerCounters, IpsetFailure, NetlinkTraffic, SyncKind } from './controller-port.js';
import type { Clients } from './netlink-clients.js';

export class SyncStats {
  private readonly counts = { full: 0, incremental: 0, resync: 0, drain: 0, lastDurationSeconds: 0, totalDurationSeconds: 0 };
  /** "set\0code" → refused ipset operations since start. */
  private readonly ipsetFailureCounts = new Map<string, number>();
  private last?: { kind: SyncKind; netlink: NetlinkTraffic };

  /** Records a finished sync; returns the ipset operations its report says were refused. */
  record(kind: SyncKind, durationSeconds: number, netlink: NetlinkTraffic, report: ApplyReport): IpsetFailure[] {
    this.last = { kind, netlink };
    this.counts[kind]++;
    this.counts.lastDurationSeconds = durationSeconds;
    this.counts.totalDurationSeconds += durationSeconds;
    const failures = report.failed.flatMap(ipsetFailureOf);
    for (const f of failures) {
      const key = `${f.set}\0${f.code}`;
      this.ipsetFailureCounts.set(key, (this.ipsetFailureCounts.get(key) ?? 0) + 1);
    }
    return failures;
  }

  syncs(): ControllerCounters['syncs'] {
    return { ...this.counts };
  }

  ipsetFailures(): ControllerCounters['ipsetFailures'] {
    return [...this.ipsetFailureCounts].map(([key, count]) => {
      const [set, code] = key.split('\0');
      return { set, code, count };
    });
  }

  get lastSync(): ControllerCounters['lastSync'] {
    return this.last;
  }
}

/** Every socket's counters now (zeros before the clients are open), to take the difference a sync made. */
export function trafficOf(clients: Clients | undefined): NetlinkTraffic {
  return { ipvs: clients?.ipvs.counters() ?? ZERO, ipset: clients?.ipset?.counters() ?? ZERO, rtnl: clients?.rtnl.counters() ?? ZERO, nftables: clients?.nftables?.counters() ?? ZERO };
}

export function trafficBetween(before: NetlinkTraffic, after: NetlinkTraffic): NetlinkTraffic {
  return { ipvs: delta(before.ipvs, after.ipvs), ipset: delta(before.ipset, after.ipset), rtnl: delta(before.rtnl, after.rtnl), nftables: delta(before.nftables, after.nftables) };
}

const ZERO: SocketCounters = { sendmsgCalls: 0, recvCalls: 0, messagesSent: 0, messagesReceived: 0, dumpsRestarted: 0 };

/** What one socket's counters grew by from `a` to `b`. */
export function delta(a: SocketCounters, b: SocketCounters): SocketCounters {
  return {
    sendmsgCalls: b.sendmsgCalls - a.sendmsgCalls,
    recvCalls: b.recvCalls - a.recvCalls,
    messagesSent: b.messagesSent - a.messagesSent,
    messagesReceived: b.messagesReceived - a.messagesReceived,
    dumpsRestarted: b.dumpsRestarted - a.dumpsRestarted,
  };
}

function ipsetFailureOf(f: FailedOperation): IpsetFailure[] {
  if (f.op.kind !== 'ipset') return [];
  const code = (f.error as { code?: string }).code ?? f.error.name;
  return [{ set: f.op.set, op: f.op.op, code, message: f.error.message, entries: 'entries' in f.op ? f.op.entries : [] }];
}
