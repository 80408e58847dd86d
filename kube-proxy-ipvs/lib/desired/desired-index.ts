/**
 * The desired state as the sum of per-service contributions, kept with
 * reference counts so that replacing one service's contribution costs only
 * that service's size and reports exactly which keys it touched. Shared
 * things (an externalIP used by two services, KUBE-IPVS-IPS entries, a
 * NodePort bitmap entry) stay until their last user goes.
 */
import { createOptions, ipPortEntry, ipsetName, SET_DEFINITIONS, type SetName } from './ipsets.js';
import { renderIptables, type OutFilterDrop } from './iptables-rules.js';
import { nftTable, OUT_DROP_SET } from './nftables-table.js';
import { tableFingerprint } from './nftables-fingerprint.js';
import type { ServiceContribution } from './service-contribution.js';
import type { NodeContext } from './node-addresses.js';
import type { AddressFamily } from 'ipvs-netlink/address';
import { naturalCompare } from 'ipvs-netlink/address';
import type { DesiredState, DesiredVirtualServer, IpsetState } from '../plan/kernel-state.js';
import { emptyScope, type Scope } from '../plan/scope.js';

interface MutableSet extends IpsetState {
  entries: Set<string>;
  counts: Map<string, number>;
}

export class DesiredIndex {
  private readonly contributions = new Map<string, ServiceContribution>();
  /**
   * Virtual server key → the service whose version is in force. Two
   * services claiming one VIP:port is a user error; the first claimant
   * keeps it, like the first sync would, and the others wait in
   * `contenders` (in the order they came) until it lets go.
   */
  private readonly claims = new Map<string, string>();
  private readonly contenders = new Map<string, string[]>();
  private readonly virtualServers = new Map<string, DesiredVirtualServer>();
  private readonly sets = new Map<string, MutableSet>();
  private readonly addressCounts = new Map<string, number>();
  private readonly bound = new Set<string>();
  private readonly drops = new Map<string, { drop: OutFilterDrop; count: number }>();
  /** Re-rendered in place whenever an update may change it, so a DesiredState handed out earlier stays current. */
  private readonly iptables = new Map<AddressFamily, string>();
  /** With the nftables backend: each family's table, made once (it depends on the configuration only). */
  private readonly nftables?: Map<AddressFamily, ReturnType<typeof nftTable> & { fingerprint: string }>;

  constructor(private readonly ctx: NodeContext) {
    const nft = ctx.config.rulesBackend === 'nftables';
    for (const family of ctx.families) {
      for (const def of SET_DEFINITIONS) {
        const name = ipsetName(def.name, family);
        this.sets.set(name, { type: def.type, options: createOptions(def.type, family, maxElemOf(ctx, name)), entries: new Set(), counts: new Map() });
      }
      // The nftables table keeps KUBE-IPVS-OUT-FILTER's per-VIP rules as a set.
      if (nft) this.sets.set(ipsetName(OUT_DROP_SET as SetName, family), { type: 'hash:ip,port', options: createOptions('hash:ip,port', family), entries: new Set(), counts: new Map() });
    }
    if (nft) {
      this.nftables = new Map();
      for (const family of ctx.families) {
        const table = nftTable(family, ctx.config, ctx.podCIDRs);
        this.nftables.set(family, { ...table, fingerprint: tableFingerprint(table) });
      }
    }
    this.renderIptables();
  }

  /** Replaces (or with undefined, removes) one service's contribution. */
  setService(serviceKey: string, next: ServiceContribution | undefined): Scope {
    const scope = emptyScope();
    const previous = this.contributions.get(serviceKey);
    if (next && previous) {
      keepStrings(next.setEntries, previous.setEntries);
      keepStrings(next.boundAddresses, previous.boundAddresses);
    }
    // Add the new counts before dropping the old ones, so what both versions share never drops to zero.
    if (next) this.apply(next, +1, scope);
    if (previous) this.apply(previous, -1, scope);
    if (next) this.contributions.set(serviceKey, next);
    else this.contributions.delete(serviceKey);
    if (previous && previous.virtualServers.length > 0) {
      const kept = new Set(next?.virtualServers.map((vs) => vs.key));
      for (const vs of previous.virtualServers) if (!kept.has(vs.key)) this.release(serviceKey, vs.key, scope);
    }
    for (const vs of next?.virtualServers ?? []) this.claim(serviceKey, vs, scope);
    if (scope.iptables) this.renderIptables();
    return scope;
  }

  serviceKeys(): IterableIterator<string> {
    return this.contributions.keys();
  }

  get state(): DesiredState {
    return {
      families: this.ctx.families,
      virtualServers: this.virtualServers,
      ipsets: this.sets,
      boundAddresses: this.bound,
      iptables: this.iptables,
      ...(this.nftables ? { nftables: this.nftables } : {}),
    };
  }

  private apply(c: ServiceContribution, sign: 1 | -1, scope: Scope): void {
    const e = c.setEntries;
    for (let i = 0; i < e.length; i += 2) this.applyEntry(e[i], e[i + 1], sign, scope);
    for (const address of c.boundAddresses) this.applyAddress(address, sign, scope);
    for (const drop of c.outFilterDrops) this.applyDrop(drop, sign, scope);
  }

  /** `owner` wants `vs` (a new version, or its first). */
  private claim(owner: string, vs: DesiredVirtualServer, scope: Scope): void {
    scope.virtualServers.add(vs.key);
    const holder = this.claims.get(vs.key);
    if (holder === undefined || holder === owner) {
      if (holder === undefined) this.claims.set(vs.key, owner);
      this.virtualServers.set(vs.key, vs);
      return;
    }
    const waiting = this.contenders.get(vs.key);
    if (!waiting) this.contenders.set(vs.key, [owner]);
    else if (!waiting.includes(owner)) waiting.push(owner);
  }

  /** `owner` no longer wants `key` (its contribution has already been replaced). */
  private release(owner: string, key: string, scope: Scope): void {
    scope.virtualServers.add(key);
    const waiting = this.contenders.get(key);
    if (this.claims.get(key) !== owner) {
      const at = waiting?.indexOf(owner) ?? -1;
      if (at >= 0) waiting!.splice(at, 1);
      if (waiting?.length === 0) this.contenders.delete(key);
      return;
    }
    let heir: string | undefined;
    let vs: DesiredVirtualServer | undefined;
    while (vs === undefined && waiting !== undefined && waiting.length > 0) {
      heir = waiting.shift()!;
      vs = this.contributions.get(heir)?.virtualServers.find((v) => v.key === key);
    }
    if (waiting?.length === 0) this.contenders.delete(key);
    if (heir === undefined || vs === undefined) {
      this.claims.delete(key);
      this.virtualServers.delete(key);
      return;
    }
    this.claims.set(key, heir);
    this.virtualServers.set(key, vs);
  }

  private applyEntry(set: string, entry: string, sign: 1 | -1, scope: Scope): void {
    const s = this.sets.get(set);
    if (!s) return;
    const before = s.counts.get(entry) ?? 0;
    const after = before + sign;
    if (after > 0) s.counts.set(entry, after);
    else s.counts.delete(entry);
    if ((before === 0) === (after === 0)) return;
    if (after > 0) s.entries.add(entry);
    else s.entries.delete(entry);
    let entries = scope.setEntries.get(set);
    if (!entries) scope.setEntries.set(set, (entries = new Set()));
    entries.add(entry);
    // Set-based iptables rules exist only while their set has entries.
    if (s.entries.size === 0 || (s.entries.size === 1 && after > 0)) scope.iptables = true;
  }

  private applyAddress(address: string, sign: 1 | -1, scope: Scope): void {
    const before = this.addressCounts.get(address) ?? 0;
    const after = before + sign;
    if (after > 0) this.addressCounts.set(address, after);
    else this.addressCounts.delete(address);
    if ((before === 0) === (after === 0)) return;
    if (after > 0) this.bound.add(address);
    else this.bound.delete(address);
    scope.addresses.add(address);
  }

  private applyDrop(drop: OutFilterDrop, sign: 1 | -1, scope: Scope): void {
    const key = `${drop.address}/${drop.protocol}/${drop.port}`;
    const count = (this.drops.get(key)?.count ?? 0) + sign;
    if (count > 0) this.drops.set(key, { drop, count });
    else this.drops.delete(key);
    scope.iptables = true;
    if (this.nftables) this.applyEntry(ipsetName(OUT_DROP_SET as SetName, drop.family), ipPortEntry(drop.address, drop.protocol, drop.port), sign, scope);
  }

  private renderIptables(): void {
    if (this.nftables) return;
    const drops = [...this.drops.values()]
      .map((d) => d.drop)
      .sort((a, b) => naturalCompare(a.address, b.address) || naturalCompare(a.protocol, b.protocol) || a.port - b.port);
    for (const family of this.ctx.families) {
      this.iptables.set(
        family,
        renderIptables({
          family,
          config: this.ctx.config,
          podCIDRs: this.ctx.podCIDRs,
          hasEntries: (set: SetName) => (this.sets.get(ipsetName(set, family))?.entries.size ?? 0) > 0,
          outFilterDrops: drops.filter((d) => d.family === family),
        }),
      );
    }
  }
}

function maxElemOf(ctx: NodeContext, set: string): number | undefined {
  const value = ctx.config.ipsetMaxElem?.[set];
  if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > 0xffffffff)) {
    throw new RangeError(`ipsetMaxElem[${set}] must be an integer from 1 to 4294967295, got ${value}`);
  }
  return value;
}

/**
 * Where a service's new contribution repeats its previous one (a Service's
 * slices arriving after it, an endpoint changing), the previous strings
 * are kept: the sets' counts hold the first string of each entry for as
 * long as it is wanted, and a contribution with copies of its own would
 * keep a second one.
 */
function keepStrings(next: string[], previous: readonly string[]): void {
  const n = Math.min(next.length, previous.length);
  for (let i = 0; i < n; i++) if (next[i] === previous[i]) next[i] = previous[i];
}
