/**
 * Carries out planned operations with as few kernel conversations as the
 * order allows: each run of consecutive operations of one kind is one
 * call — all IPVS operations of a run in one ipvs.apply() batch, each
 * set's entries in one addMany/delMany, addresses in one rtnetlink batch,
 * iptables through iptables-restore. The planner's order is kept between
 * runs, so nothing opens a gap. Every operation gets an outcome; only what
 * succeeded goes into the report's `applied` (what the Mirror records).
 * A virtual server whose real server an IPVS run quiesces (weight 0) is
 * read back at the end of the same batch (`quiesced`): graceful
 * termination's connection counts, with no extra round trip.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import type { Logger } from 'pino';
import { IpsetBulkError } from 'ipvs-netlink';
import type { AddressServiceKey, BatchOp, Destination } from 'ipvs-netlink';
import type { OperationCounts } from './controller-port.js';
import type { Clients } from './netlink-clients.js';
import type { IptablesRunner } from './iptables-runner.js';
import { gracefulRemovals } from '../plan/planner.js';
import type { AddressOp, IpsetOp, IptablesOp, IpvsOp, NftablesOp, Operation } from '../plan/kernel-state.js';
import { nftChanges } from './nftables-tables.js';
import { DUMMY_DEVICE } from '../plan/kernel-state.js';
import { logV } from '../logging/logger.js';

export interface FailedOperation {
  op: Operation;
  error: Error;
}

/** Whether a report's refusals include the rules' restore (iptables-restore, or the nftables backend's transaction). */
export function rulesRefused(report: Pick<ApplyReport, 'failed'>): boolean {
  return report.failed.some((f) => f.op.kind === 'iptables' || f.op.kind === 'nftables');
}

export interface ApplyReport {
  /** What the kernel took, in order; a partly applied ipset op appears with the entries that went in. */
  applied: Operation[];
  failed: FailedOperation[];
  /**
   * The destinations, read right after the batch that quiesced them, of
   * each virtual server (by key) with a real server set to weight 0.
   */
  quiesced?: Map<string, { service: AddressServiceKey; destinations: Destination[] }>;
}


type Run =
  | { kind: 'ipvs'; ops: IpvsOp[] }
  | { kind: 'ipset'; ops: IpsetOp[] }
  | { kind: 'address'; ops: AddressOp[] }
  | { kind: 'iptables'; ops: IptablesOp[] }
  | { kind: 'nftables'; ops: NftablesOp[] };

export class Applier {
  /** Operations carried out since the applier was made, by kind and result (metrics). */
  readonly counts: OperationCounts = emptyOperationCounts();
  /** iptables-restore runs refused since start, by family (kube-proxy counts its restore failures per family). */
  readonly iptablesFailedByFamily: Record<AddressFamily, number> = { inet: 0, inet6: 0 };

  constructor(
    private readonly clients: Clients,
    private readonly iptables: Pick<IptablesRunner, 'apply'>,
    private readonly logger: Pick<Logger, 'warn' | 'info' | 'debug' | 'trace'>,
  ) {}

  async apply(ops: readonly Operation[]): Promise<ApplyReport> {
    const report: ApplyReport = { applied: [], failed: [] };
    for (const run of runs(ops)) {
      const before = { applied: report.applied.length, failed: report.failed.length };
      switch (run.kind) {
        case 'ipvs':
          await this.ipvs(run.ops, report);
          break;
        case 'ipset':
          await this.ipset(run.ops, report);
          break;
        case 'address':
          await this.addresses(run.ops, report);
          break;
        case 'iptables':
          await this.iptablesRun(run.ops, report);
          break;
        case 'nftables':
          await this.nftablesRun(run.ops, report);
          break;
      }
      this.counts[run.kind].ok += report.applied.length - before.applied;
      this.counts[run.kind].failed += report.failed.length - before.failed;
    }
    for (const f of report.failed) this.logger.warn({ op: describe(f.op), err: f.error.message }, 'operation failed; retried at the next sync');
    if (ops.length > 0) logV(this.logger, 4, { applied: report.applied.length, failed: report.failed.length }, 'applied');
    return report;
  }

  private async ipvs(ops: IpvsOp[], report: ApplyReport): Promise<void> {
    const reads = [...gracefulRemovals(ops)];
    const batch: BatchOp[] = ops.map((o) => o.batch);
    for (const [, service] of reads) batch.push({ op: 'listDestinations', service });
    try {
      const results = await this.clients.ipvs.apply(batch);
      for (let i = 0; i < ops.length; i++) {
        const r = results[i];
        if (r.ok) report.applied.push(ops[i]);
        else report.failed.push({ op: ops[i], error: r.error });
      }
      reads.forEach(([key, service], i) => {
        const r = results[ops.length + i];
        // A failed read leaves its real servers draining: the periodic pass deletes them.
        if (r.ok && r.destinations) (report.quiesced ??= new Map()).set(key, { service, destinations: r.destinations });
      });
    } catch (err) {
      for (const op of ops) report.failed.push({ op, error: asError(err) });
    }
  }

  /** One call per operation (the client's calls are per set); `exist` makes adds and deletes idempotent. */
  private async ipset(ops: IpsetOp[], report: ApplyReport): Promise<void> {
    const ipset = this.clients.ipset;
    if (!ipset) {
      for (const op of ops) report.failed.push({ op, error: new Error('no ipset handle: the nftables backend makes no ipset call') });
      return;
    }
    for (const op of ops) {
      try {
        if (op.op === 'create') {
          const { family, ...sizes } = op.options;
          // bitmap:port sets have no address family.
          await ipset.create(op.set, op.type, { ...(op.type.startsWith('hash:') ? { family } : {}), ...sizes, exist: true });
        } else if (op.op === 'destroy') await ipset.destroy(op.set);
        else if (op.op === 'add') await ipset.addMany(op.set, op.entries, { exist: true });
        else await ipset.delMany(op.set, op.entries, { exist: true });
        report.applied.push(op);
      } catch (err) {
        if (err instanceof IpsetBulkError && (op.op === 'add' || op.op === 'del')) {
          // Record what the kernel took; only the rest is failed (and retried).
          const { done, undone } = splitBulk(op.entries, err);
          if (done.length > 0) report.applied.push({ ...op, entries: done });
          report.failed.push({ op: { ...op, entries: undone }, error: err });
        } else report.failed.push({ op, error: asError(err) });
      }
    }
  }

  /** Binds and unbinds come in separate runs (the planner never interleaves them); each run is one batch. */
  private async addresses(ops: AddressOp[], report: ApplyReport): Promise<void> {
    const bind = ops[0].op === 'bind';
    try {
      const addresses = ops.map((o) => o.address);
      const results = bind ? await this.clients.rtnl.addAddresses(DUMMY_DEVICE, addresses) : await this.clients.rtnl.deleteAddresses(DUMMY_DEVICE, addresses);
      results.forEach((r, i) => {
        // Already bound / already gone is the state we wanted.
        const settled = r.ok || r.error.code === (bind ? 'EEXIST' : 'EADDRNOTAVAIL');
        if (settled) report.applied.push(ops[i]);
        else report.failed.push({ op: ops[i], error: r.error });
      });
    } catch (err) {
      for (const op of ops) report.failed.push({ op, error: asError(err) });
    }
  }

  /** The whole run (every nftables change of the sync) is one transaction: all applied, or none. */
  private async nftablesRun(ops: NftablesOp[], report: ApplyReport): Promise<void> {
    try {
      const nft = this.clients.nftables;
      if (!nft) throw new Error('no nftables handle: the iptables backend makes no nftables change');
      await nft.commit(nftChanges(ops));
      report.applied.push(...ops);
    } catch (err) {
      for (const op of ops) report.failed.push({ op, error: asError(err) });
    }
  }

  private async iptablesRun(ops: IptablesOp[], report: ApplyReport): Promise<void> {
    for (const op of ops) {
      try {
        await this.iptables.apply(op.family, op.restore);
        report.applied.push(op);
      } catch (err) {
        this.iptablesFailedByFamily[op.family]++;
        report.failed.push({ op, error: asError(err) });
      }
    }
  }
}

/**
 * Which entries of a bulk add/del the kernel took. IpsetBulkError lists
 * every refused entry (`failures`), those never sent once nothing more
 * could go in (`skipped`) and those whose fate a broken conversation left
 * unknown (`unconfirmed`); the rest went in, and there must be exactly
 * `applied` of them. When the lists do not account for that (a request
 * refused as a whole), nothing is taken as done: the applier's adds and
 * deletes use `exist`, so retrying all of them is harmless.
 */
export function splitBulk(entries: readonly string[], err: IpsetBulkError): { done: string[]; undone: string[] } {
  const out = new Set<number>([...err.failures.map((f) => f.index), ...err.skipped, ...err.unconfirmed]);
  const done = entries.filter((_, i) => !out.has(i));
  if (done.length !== err.applied) return { done: [], undone: [...entries] };
  return { done, undone: entries.filter((_, i) => out.has(i)) };
}

/** Consecutive operations of one kind (binds and unbinds apart), in plan order. */
export function runs(ops: readonly Operation[]): Run[] {
  const out: Run[] = [];
  let key = '';
  for (const op of ops) {
    const k = op.kind === 'address' ? `address:${op.op}` : op.kind;
    if (k !== key) {
      out.push({ kind: op.kind, ops: [] } as Run);
      key = k;
    }
    (out[out.length - 1].ops as Operation[]).push(op);
  }
  return out;
}

function describe(op: Operation): string {
  switch (op.kind) {
    case 'ipvs': {
      const s = op.batch.service as { protocol?: string; address?: string; port?: number };
      const d = 'destination' in op.batch ? ` -> ${op.batch.destination.address}:${op.batch.destination.port}` : '';
      return `ipvs ${op.batch.op} ${s.protocol}/${s.address}:${s.port}${d}`;
    }
    case 'ipset':
      return `ipset ${op.op} ${op.set}${'entries' in op ? ` (${op.entries.length} entries)` : ''}`;
    case 'address':
      return `${op.op} ${op.address} on ${op.device}`;
    case 'iptables':
      return `iptables-restore (${op.family})`;
    case 'nftables':
      return `nftables ${op.op} (${op.family})${op.op === 'add' || op.op === 'del' ? ` ${op.set} (${op.entries.length} entries)` : ''}`;
  }
}

export function emptyOperationCounts(): OperationCounts {
  return { ipvs: { ok: 0, failed: 0 }, ipset: { ok: 0, failed: 0 }, address: { ok: 0, failed: 0 }, iptables: { ok: 0, failed: 0 }, nftables: { ok: 0, failed: 0 } };
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
