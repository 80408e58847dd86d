/**
 * The iptables half of the applier: writes the KUBE-* chains with
 * `iptables-restore --noflush --counters` (other chains are left alone),
 * adds the jumps from the built-in chains only when missing (like
 * kube-proxy's EnsureRule, so they are never duplicated), and removes
 * exactly our chains and jumps on cleanup (and, at --cleanup, what
 * kube-proxy's iptables mode left).
 *
 * After each write, one iptables-save records what the chains look like,
 * for holds() to compare at resyncs. That read runs after apply() returns:
 * the rules are in the kernel once the restore exits, and a sync should not
 * wait another program run (about a second of a cold start under
 * user-mode-linux) for bookkeeping. Every later call on that family waits
 * for it first, so the calls still see one another in order.
 */
import { execError, type Exec } from './exec.js';
import { FILTER_CHAINS, JUMP_RULES, NAT_CHAINS } from '../desired/iptables-rules.js';
import { iptablesModeLeftovers } from './other-modes.js';
import type { AddressFamily } from 'ipvs-netlink/address';

export interface IptablesCommands {
  iptables: string;
  restore: string;
  save: string;
}

export type IptablesTools = Record<AddressFamily, IptablesCommands>;

/** Whatever `iptables` is on the host (nft or legacy, as the distribution chose). */
export const DEFAULT_IPTABLES: IptablesTools = {
  inet: { iptables: 'iptables', restore: 'iptables-restore', save: 'iptables-save' },
  inet6: { iptables: 'ip6tables', restore: 'ip6tables-restore', save: 'ip6tables-save' },
};

/** The legacy (x_tables) tools, for kernels without nf_tables. */
export const LEGACY_IPTABLES: IptablesTools = {
  inet: { iptables: 'iptables-legacy', restore: 'iptables-legacy-restore', save: 'iptables-legacy-save' },
  inet6: { iptables: 'ip6tables-legacy', restore: 'ip6tables-legacy-restore', save: 'ip6tables-legacy-save' },
};

/** Wait for the xtables lock rather than fail when another writer holds it (kube-proxy waits too). */
const WAIT = ['-w', '5'];

const OWNED_CHAINS: Record<'nat' | 'filter', readonly string[]> = { nat: NAT_CHAINS, filter: FILTER_CHAINS };

export class IptablesRunner {
  /** Per family, the last payload written and how iptables-save showed our chains and jumps right after. */
  private readonly written = new Map<AddressFamily, { payload: string; view: string }>();
  /** Per family, the read-back of the last write (settled ones stay: awaiting them costs nothing). */
  private readonly reading = new Map<AddressFamily, Promise<void>>();

  constructor(
    private readonly exec: Exec,
    private readonly tools: IptablesTools = DEFAULT_IPTABLES,
  ) {}

  /**
   * Writes the payload and, in the same restore, inserts the jumps from the
   * built-in chains that are missing (read with one iptables-save first):
   * three programs per write whatever the state (the last, a save, records
   * what the result looks like for holds(), and is not waited for), where
   * kube-proxy runs `iptables -C` nine times per sync.
   */
  async apply(family: AddressFamily, restore: string): Promise<void> {
    await this.settled(family);
    const present = await this.rules(family);
    const missing = JUMP_RULES.filter((j) => !present.has(jumpLine(j)));
    this.written.delete(family);
    await this.restore(family, withLines(restore, missing.map((j) => ({ table: j.table, line: `-I ${j.chain} ${jumpRule(j)}` }))), ['--counters']);
    this.readBack(family, restore);
  }

  /**
   * Records how iptables-save shows what was just written, without holding
   * up the caller. Started at once, as when it was awaited, so the window
   * in which someone else's edit could be taken for ours is no wider. If it
   * cannot be read, nothing is recorded and the next resync writes again.
   */
  private readBack(family: AddressFamily, payload: string): void {
    const done = this.save(family).then(
      (saved) => void this.written.set(family, { payload, view: ourView(saved) }),
      () => undefined,
    );
    this.reading.set(family, done);
  }

  /** Waits for the read-back of the last write to this family (it never rejects). */
  async settled(family: AddressFamily): Promise<void> {
    await this.reading.get(family);
  }

  /**
   * Whether the kernel still holds exactly what apply() last wrote with
   * this payload (our chains, their rules, the jumps to them): one
   * iptables-save, no write, so a resync with nothing changed rewrites
   * nothing, and one whose rules someone edited does.
   */
  async holds(family: AddressFamily, payload: string): Promise<boolean> {
    await this.settled(family);
    const w = this.written.get(family);
    if (!w || w.payload !== payload) return false;
    return ourView(await this.save(family)) === w.view;
  }

  /**
   * Removes our jumps (every copy), then flushes and deletes our chains that
   * exist, in one restore. Nothing else is touched, except with
   * `iptablesMode` (--cleanup): kube-proxy's iptables mode's chains and the
   * built-in chains' jumps to them go in the same restore, so chains of the
   * two modes that refer to one another (KUBE-MARK-MASQ) go together.
   */
  async cleanup(family: AddressFamily, options: { iptablesMode?: boolean } = {}): Promise<void> {
    await this.settled(family);
    this.written.delete(family);
    const saved = await this.save(family);
    const present = new Set(saved.map((l) => `${l.table} ${l.line}`));
    const other = options.iptablesMode ? iptablesModeLeftovers(saved) : new Map<string, { chains: string[]; jumps: string[] }>();
    const input: string[] = [];
    for (const table of ['nat', 'filter', 'mangle'] as const) {
      const otherJumps = other.get(table)?.jumps ?? [];
      // Each saved copy once: the two modes write the same jump to KUBE-SERVICES.
      const deletes = saved
        .filter((l) => l.table === table && (otherJumps.includes(l.line) || JUMP_RULES.some((j) => j.table === table && l.line === jumpLine(j).slice(table.length + 1))))
        .map((l) => l.line);
      const own = table === 'mangle' ? [] : OWNED_CHAINS[table].filter((c) => present.has(`${table} :${c}`));
      const chains = [...new Set([...own, ...(other.get(table)?.chains ?? [])])];
      if (deletes.length === 0 && chains.length === 0) continue;
      // Declaring a chain in a --noflush restore flushes it, so the -X that follow find them empty and (jumps gone) unreferenced.
      input.push(`*${table}`, ...deletes.map((l) => l.replace(/^-A /, '-D ')), ...chains.map((c) => `:${c} - [0:0]`), ...chains.map((c) => `-X ${c}`), 'COMMIT');
    }
    if (input.length > 0) await this.restore(family, input.join('\n') + '\n', []);
  }

  private async restore(family: AddressFamily, input: string, extra: string[]): Promise<void> {
    const { restore: bin } = this.tools[family];
    const args = [...WAIT, '--noflush', ...extra];
    const r = await this.exec(bin, args, input);
    if (r.code !== 0) throw execError(bin, args, r);
  }

  /** Every rule and chain line, prefixed with its table: "nat -A OUTPUT ...", "nat :KUBE-SERVICES". */
  private async rules(family: AddressFamily): Promise<Set<string>> {
    return new Set((await this.save(family)).map((l) => `${l.table} ${l.line}`));
  }

  private async save(family: AddressFamily): Promise<Array<{ table: string; line: string }>> {
    const { save } = this.tools[family];
    const r = await this.exec(save, []);
    if (r.code !== 0) throw execError(save, [], r);
    const out: Array<{ table: string; line: string }> = [];
    let table = '';
    for (const line of r.stdout.split('\n')) {
      if (line.startsWith('*')) table = line.slice(1);
      else if (line.startsWith('-A ')) out.push({ table, line });
      else if (line.startsWith(':')) out.push({ table, line: line.split(' ')[0] });
    }
    return out;
  }
}

/** The lines of iptables-save that are ours: KUBE-* chains, their rules, and jumps to them from anywhere. */
function ourView(saved: ReadonlyArray<{ table: string; line: string }>): string {
  return saved
    .filter(({ line }) => line.startsWith(':KUBE-') || line.startsWith('-A KUBE-') || / -j KUBE-/.test(line))
    .map(({ table, line }) => `${table} ${line}`)
    .join('\n');
}

/** The rule text after the chain, as iptables-save prints it (comments with spaces in double quotes). */
function jumpRule(jump: (typeof JUMP_RULES)[number]): string {
  return `-m comment --comment "${jump.comment}" -j ${jump.target}`;
}

function jumpLine(jump: (typeof JUMP_RULES)[number]): string {
  return `${jump.table} -A ${jump.chain} ${jumpRule(jump)}`;
}

/** Adds rule lines to their table's section of a restore payload (before its COMMIT), or a section of their own. */
export function withLines(payload: string, extra: ReadonlyArray<{ table: string; line: string }>): string {
  if (extra.length === 0) return payload;
  const out: string[] = [];
  const done = new Set<string>();
  let table = '';
  for (const line of payload.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1);
    if (line === 'COMMIT' && !done.has(table)) {
      out.push(...extra.filter((e) => e.table === table).map((e) => e.line));
      done.add(table);
    }
    out.push(line);
  }
  const rest = extra.filter((e) => !done.has(e.table));
  for (const t of new Set(rest.map((e) => e.table))) {
    if (out[out.length - 1] === '') out.pop();
    out.push(`*${t}`, ...rest.filter((e) => e.table === t).map((e) => e.line), 'COMMIT', '');
  }
  return out.join('\n');
}
