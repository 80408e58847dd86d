/**
 * Reading what the conntrack tool prints (`conntrack -L -o extended,id`,
 * `-S`), and holding a library entry against one of its lines field by
 * field, for the golden and kernel tests.
 */
import type { ConntrackEntry, Tuple } from '../../lib/conntrack/index.js';

/** One line of `conntrack -L -o extended,id`, split into its fields. */
export interface ToolEntry {
  family: string;
  protonum: number;
  protocol: string;
  timeout: number;
  state?: string;
  orig: Record<string, string>;
  reply: Record<string, string>;
  /** The bracketed flags: UNREPLIED, ASSURED, OFFLOAD, ... */
  flags: string[];
  /** key=value pairs after the tuples (mark, zone, use, id, ...). */
  rest: Record<string, string>;
  line: string;
}

const TUPLE_KEYS = new Set(['src', 'dst', 'sport', 'dport', 'type', 'code', 'id', 'packets', 'bytes', 'zone-orig', 'zone-reply']);

export function parseToolLine(line: string): ToolEntry {
  const w = line.trim().split(/\s+/);
  const e: ToolEntry = { family: w[0], protonum: Number(w[3]), protocol: w[2], timeout: Number(w[4]), orig: {}, reply: {}, flags: [], rest: {}, line };
  let i = 5;
  if (!w[i].includes('=')) e.state = w[i++];
  // The original tuple runs until `src=` comes again; the reply's until a
  // key that is not a tuple's (or that it has already).
  let phase = 0;
  for (; i < w.length; i++) {
    const m = /^\[(.*)\]$/.exec(w[i]);
    if (m) {
      e.flags.push(m[1]);
      continue;
    }
    const eq = w[i].indexOf('=');
    const k = w[i].slice(0, eq);
    const v = w[i].slice(eq + 1);
    if (phase === 0 && k === 'src' && 'src' in e.orig) phase = 1;
    const tuple = phase === 0 ? e.orig : phase === 1 ? e.reply : undefined;
    if (tuple && TUPLE_KEYS.has(k) && !(k in tuple)) {
      tuple[k] = v;
    } else {
      phase = 2;
      e.rest[k] = v;
    }
  }
  return e;
}

/** Every entry line of a listing (the tool's summary goes to stderr). */
export function parseToolList(stdout: string): ToolEntry[] {
  return stdout.split('\n').filter((l) => /^ipv[46] /.test(l)).map(parseToolLine);
}

function tupleFields(t: Tuple, counters?: { packets: bigint; bytes: bigint }): Record<string, string> {
  const o: Record<string, string> = { src: t.src, dst: t.dst };
  if (t.srcPort !== undefined) o.sport = String(t.srcPort);
  if (t.dstPort !== undefined) o.dport = String(t.dstPort);
  if (t.icmpType !== undefined) {
    o.type = String(t.icmpType);
    o.code = String(t.icmpCode);
    o.id = String(t.icmpId);
  }
  if (counters) {
    o.packets = String(counters.packets);
    o.bytes = String(counters.bytes);
  }
  return o;
}

/**
 * The library entry's fields in the tool's terms, beside the tool's own,
 * for `t.same(ours, theirs)`. `timeoutSlack`: seconds the two reads may
 * be apart (the timeout counts down between them).
 */
export function sideBySide(e: ConntrackEntry, tool: ToolEntry, timeoutSlack = 0): { ours: object; theirs: object } {
  const flags: string[] = [];
  if (!e.status.includes('SEEN_REPLY')) flags.push('UNREPLIED');
  if (e.status.includes('ASSURED')) flags.push('ASSURED');
  if (e.status.includes('OFFLOAD')) flags.push('OFFLOAD');
  if (e.status.includes('HW_OFFLOAD')) flags.push('HW_OFFLOAD');
  const toolFlags = tool.flags.filter((f) => !f.startsWith('start=') && !f.startsWith('stop='));
  const rest: Record<string, string> = { mark: String(e.mark), use: String(e.use), id: String(e.id) };
  if (e.zone) rest.zone = String(e.zone);
  const theirsRest: Record<string, string> = {};
  for (const k of Object.keys(rest)) if (k in tool.rest) theirsRest[k] = tool.rest[k];
  const close = Math.abs((e.timeout ?? -1) - tool.timeout) <= timeoutSlack;
  return {
    ours: {
      family: e.family === 'inet' ? 'ipv4' : 'ipv6',
      protocol: typeof e.protocol === 'string' ? e.protocol : 'unknown',
      protonum: e.protonum,
      timeout: close ? tool.timeout : e.timeout,
      state: e.state,
      orig: tupleFields(e.orig, e.counters?.orig),
      reply: tupleFields(e.reply, e.counters?.reply),
      flags: flags.sort(),
      rest,
    },
    theirs: {
      family: tool.family,
      protocol: tool.protocol,
      protonum: tool.protonum,
      timeout: tool.timeout,
      state: tool.state,
      orig: tool.orig,
      reply: tool.reply,
      flags: toolFlags.sort(),
      rest: theirsRest,
    },
  };
}

/** `conntrack -S`: one object of counters per CPU line. */
export function parseToolStats(stdout: string): Array<Record<string, number>> {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('cpu='))
    .map((l) => Object.fromEntries(l.trim().split(/\s+/).map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)])));
}
