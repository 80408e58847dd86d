/**
 * Reading what the `ipset` tool says about a namespace's sets, for the
 * ipset kernel tests' both-ways checks: its `save` lines, its `list -t`
 * header, and a create line as the SetHeader fields it stands for.
 */
import { Ipset, type SetHeader } from '../../lib/ipset/index.js';
import type { Netns } from './netns.js';

export interface Saved {
  /** "create NAME " lines without that prefix, by set name. */
  creates: Map<string, string>;
  /** "add NAME ENTRY" lines as "NAME ENTRY", in the tool's order. */
  adds: string[];
}

/** `ipset save` (of one set, or all). */
export async function toolSave(ns: Netns, set?: string): Promise<Saved> {
  const out = await ns.exec('ipset', set === undefined ? ['save'] : ['save', set]);
  const creates = new Map<string, string>();
  const adds: string[] = [];
  for (const l of out.split('\n')) {
    const m = /^create (\S+) (.*)$/.exec(l);
    if (m) creates.set(m[1], m[2]);
    else if (l.startsWith('add ')) adds.push(l.slice(4));
  }
  return { creates, adds };
}

/** One set's elements as `ipset save` prints them after "add NAME ", sorted. */
export async function toolEntries(ns: Netns, set: string): Promise<string[]> {
  return (await toolSave(ns, set)).adds.map((l) => l.slice(set.length + 1)).sort();
}

/** The library's list() of the sets, as "NAME ENTRY" lines, sorted. */
export async function listedLines(ipset: Ipset, names: string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const n of names) for (const e of (await ipset.list(n)).entries) lines.push(`${n} ${e}`);
  return lines.sort();
}

interface Asserts {
  same(found: unknown, wanted: unknown, message: string): unknown;
  fail(message: string): unknown;
}

/**
 * Line lists equal, with remaining timeouts allowed to differ by `slack`
 * seconds (they tick between two reads; the sandbox is slow).
 */
export function sameLines(t: Asserts, ours: string[], theirs: string[], what: string, slack = 10): void {
  const key = (l: string) => l.replace(/ timeout \d+/, ' timeout ~');
  t.same(ours.map(key), theirs.map(key), what);
  ours.forEach((l, i) => {
    const a = / timeout (\d+)/.exec(l);
    const b = / timeout (\d+)/.exec(theirs[i] ?? '');
    if (a && b && Math.abs(Number(a[1]) - Number(b[1])) > slack) t.fail(`timeouts differ: ${l} / ${theirs[i]}`);
  });
}

/** When an operation ran, by this process's monotonic clock, in milliseconds. */
export interface Span {
  from: number;
  to: number;
}

/** Runs `op` and says when it ran. */
export async function timed<T>(op: () => Promise<T>): Promise<[T, Span]> {
  const from = performance.now();
  const value = await op();
  return [value, { from, to: performance.now() }];
}

/**
 * The remaining timeout the kernel can report for an element given
 * `timeout` seconds during `added` and read during `read`: it counts down
 * from the add in jiffies and reports whole seconds rounded down, never 0
 * for an element that has one. The bounds come from the times measured,
 * so a loaded machine widens them by exactly the delay it caused, and a
 * wrong timeout still falls outside them. `tick` covers a jiffy's rounding
 * each way (HZ 100 at the coarsest).
 */
export function remainingBounds(timeout: number, added: Span, read: Span, tick = 20): [number, number] {
  const left = (elapsedMs: number) => Math.max(1, Math.floor(timeout - elapsedMs / 1000));
  return [left(read.to - added.from + tick), left(Math.max(0, read.from - added.to - tick))];
}

/**
 * Element lines as `wanted` with their remaining timeouts aside, and each
 * remaining timeout within remainingBounds() of the wanted line's timeout
 * (0, "for ever", must stay 0). `added` is when each wanted line's element
 * was added (one span for all, or one per line, in `wanted`'s order).
 */
export function sameTimedLines(t: Asserts & { ok(v: unknown, message: string): unknown }, found: string[], wanted: string[], added: Span | Span[], read: Span, what: string): void {
  const key = (l: string) => l.replace(/ timeout \d+/, ' timeout ~');
  t.same(found.map(key), wanted.map(key), what);
  found.forEach((l, i) => {
    const got = / timeout (\d+)/.exec(l);
    const want = / timeout (\d+)/.exec(wanted[i] ?? '');
    if (!got || !want) return;
    const timeout = Number(want[1]);
    const [low, high] = timeout === 0 ? [0, 0] : remainingBounds(timeout, Array.isArray(added) ? added[i] : added, read);
    const left = Number(got[1]);
    t.ok(left >= low && left <= high, `${what}: ${l}: ${left} s left of ${timeout}, ${low}..${high} by the times measured`);
  });
}

/** A create line ("hash:ip family inet hashsize 1024 ...") as the header fields it stands for. */
export function fieldsOf(line: string): Partial<SetHeader> {
  const [type, ...words] = line.split(' ');
  const h: Record<string, unknown> = { type, counters: false, comment: false, skbinfo: false };
  const numbers: Record<string, string> = { hashsize: 'hashSize', maxelem: 'maxElem', netmask: 'netmask', timeout: 'timeout', bucketsize: 'bucketSize', size: 'size' };
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === 'counters' || w === 'comment' || w === 'skbinfo' || w === 'forceadd') h[w] = true;
    else if (w === 'family' || w === 'range' || w === 'bitmask') h[w] = words[++i];
    else if (w === 'initval' || w === 'markmask') h[w] = Number.parseInt(words[++i], 16);
    else if (numbers[w]) h[numbers[w]] = Number(words[++i]);
    else throw new Error(`unexpected word '${w}' in '${line}'`);
  }
  return h as Partial<SetHeader>;
}

/** `ipset list -t NAME`: its Type, Revision, Header, Size in memory, References, Number of entries. */
export async function toolHeader(ns: Netns, name: string) {
  const out = await ns.exec('ipset', ['list', '-t', name]);
  const field = (label: string) => new RegExp(`^${label}: ?(.*)$`, 'm').exec(out)![1];
  return {
    type: field('Type'),
    revision: Number(field('Revision')),
    header: field('Header'),
    memSize: Number(field('Size in memory')),
    references: Number(field('References')),
    elements: Number(field('Number of entries')),
  };
}

/** An Ipset handle on the namespace, closed when the test ends. */
export async function openIpset(t: { teardown(fn: () => unknown): void }, ns: Netns): Promise<Ipset> {
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  return ipset;
}

/**
 * Whether the running kernel takes `ipset create probe ARGS` (tried in
 * `ns`, then destroyed), and if not, what the tool said is missing: the
 * type, or an option with the revision it needs and the one the kernel has.
 */
export async function kernelTakes(ns: Netns, args: string[]): Promise<{ ok: true } | { ok: false; option?: string; needs?: number; revision?: number; stderr: string }> {
  const r = await ns.tryExec('ipset', ['create', 'probe', ...args]);
  if (r.code === 0) {
    await ns.exec('ipset', ['destroy', 'probe']);
    return { ok: true };
  }
  const m = /Argument `(\w+)' is supported in the kernel module of the set type \S+ starting from the revision (\d+) and you have installed revision (\d+)/.exec(r.stderr);
  if (m) return { ok: false, option: m[1], needs: Number(m[2]), revision: Number(m[3]), stderr: r.stderr };
  return { ok: false, stderr: r.stderr };
}
