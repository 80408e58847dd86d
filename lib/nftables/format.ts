/**
 * Rules as nft prints them (`nft list ruleset`), for the expression
 * patterns nft itself generates for matches on addresses, ports, protocols,
 * marks, conntrack state, route type, numbers made by numgen and hash, and
 * set lookups (an anonymous set
 * inline, given the table's sets: format-sets.ts), and for the statements
 * of the vocabulary (the stateful ones: format-stateful.ts). A
 * header field it has no name for is shown in nft's raw payload syntax
 * (`@nh,8,8`), and any other step it does not recognise as nft's debug
 * form does (`[ payload load 4b @ network header + 12 => reg 1 ]`), so the
 * text stays faithful even where it is not nft's.
 */
import type { Expression } from './expressions/index.js';
import { impliedMatches } from './format-dependencies.js';
import { type HeaderContext, type Load, address, etherType, hardwareType, headerField, hex, ifname, integer, mark, mergedFields, PORT_PROTOCOLS, port, proto } from './format-fields.js';
import { inlineSet } from './format-sets.js';
import { durationText, elementStateText, limitText, objrefText, quotaText } from './format-stateful.js';
import { addrTypes, ctStates, verdicts } from './names.js';
import type { Rule, SetWithElements } from './types.js';

/** nft's names for raw payload bases (`@nh,72,8`). */
const RAW_BASES: Record<string, string> = { ll: 'll', network: 'nh', transport: 'th', inner: 'ih' };

function load(e: Expression, ctx: HeaderContext): Load | undefined {
  switch (e.type) {
    case 'payload': {
      const field = headerField(e.base, e.offset, e.len, ctx);
      if (field) return field;
      // Any other field in nft's raw payload syntax, which means the same; a
      // load nft merged from neighbouring fields carries them, for an
      // equality, which nft lists field by field.
      return { text: `@${RAW_BASES[e.base] ?? e.base},${e.offset * 8},${e.len * 8}`, value: hex, parts: mergedFields(e.base, e.offset, e.len, ctx) };
    }
    case 'meta':
      if (e.key === 'l4proto') return { text: 'meta l4proto', value: proto };
      if (e.key === 'nfproto') return { text: 'meta nfproto', value: (b) => (b[0] === 2 ? 'ipv4' : b[0] === 10 ? 'ipv6' : String(b[0])) };
      if (e.key === 'mark') return { text: 'meta mark', value: mark };
      if (e.key === 'iifname' || e.key === 'oifname') return { text: `${e.key}`, value: ifname };
      if (e.key === 'iiftype' || e.key === 'oiftype') return { text: `meta ${e.key}`, value: hardwareType };
      if (e.key === 'protocol') return { text: 'meta protocol', value: etherType };
      return { text: `meta ${e.key}`, value: hex };
    case 'ct':
      if (e.key === 'state') return { text: 'ct state', value: (b) => ctStates.flags(b.readUInt32LE(0)).join(',') };
      if (e.key === 'mark') return { text: 'ct mark', value: mark };
      return { text: `ct ${e.key}`, value: hex };
    case 'numgen':
      return { text: `numgen ${e.mode} mod ${e.modulus}${e.offset ? ` offset ${e.offset}` : ''}`, value: integer };
    case 'fib':
      return {
        text: `fib ${e.flags.filter((f) => f !== 'present').join(' . ')} ${e.result}`,
        value: (b) => (e.result === 'type' ? String(addrTypes.name(b.readUInt32LE(0))) : hex(b)),
      };
    default:
      return undefined;
  }
}

/** What an equality on `src` tells the fields after it: the network header's family, the transport protocol. */
function learn(ctx: HeaderContext, src: Load, data: Buffer): void {
  if (src.text === 'meta nfproto' && (data[0] === 2 || data[0] === 10)) ctx.family = data[0] === 2 ? 'ip' : 'ip6';
  if ((src.text === 'ether type' || src.text === 'meta protocol') && (src.value(data) === 'ip' || src.value(data) === 'ip6')) ctx.family = src.value(data) as 'ip' | 'ip6';
  // Only a protocol whose ports nft names after it: an esp or icmp header has no `dport`.
  if (src.text === 'meta l4proto' || src.text === 'ip protocol') ctx.l4 = PORT_PROTOCOLS.has(proto(data)) ? proto(data) : undefined;
}

const OPS: Record<string, string> = { eq: '', neq: '!= ', lt: '< ', lte: '<= ', gt: '> ', gte: '>= ' };

/** nft's debug form of one expression, for what has no shorter text. */
function debug(e: Expression): string {
  const fields = Object.entries(e).filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k} ${v instanceof Uint8Array ? hex(Buffer.from(v)) : Array.isArray(v) ? v.join(',') : String(v)}`);
  return `[ ${e.type === 'raw' ? e.name : e.type}${fields.length ? ' ' + fields.join(' ') : ''} ]`;
}

/** The anonymous set `name` of the rule's table among `sets` (each table numbers its own from __set0). */
function anonymousSet(sets: readonly SetWithElements[] | undefined, rule: { family?: Rule['family']; table?: string }, name: string): SetWithElements | undefined {
  if (!sets || rule.table === undefined) return undefined;
  const found = sets.filter((s) => s.name === name && s.table === rule.table && (rule.family === undefined || s.family === rule.family));
  return found.length === 1 && found[0].flags?.includes('anonymous') ? found[0] : undefined;
}

/**
 * Plain `reject` is port unreachable: ICMPX's in an inet table, ICMP's (3)
 * in an ip table, ICMPv6's (4) in an ip6 one.
 */
function isPlainReject(e: Extract<Expression, { type: 'reject' }>, family: Rule['family'] | undefined): boolean {
  if (e.reject === 'icmpx') return e.code === 1;
  return e.reject === 'icmp' && e.code === (family === 'ip6' ? 4 : 3) && (family === 'ip' || family === 'ip6');
}

/** What formatRule() may be given besides the rule. */
export interface FormatOptions {
  /** The rule's table's sets as ruleset() reads them: an anonymous set the rule looks up is printed inline, as nft prints it (`{ 22, 80 }`). */
  sets?: readonly SetWithElements[];
}

/**
 * One rule as nft lists it (without the handle); give the rule's `family`
 * for what nft prints by family, and its `table` with `options.sets` for
 * its anonymous sets.
 */
export function formatRule(rule: Pick<Rule, 'expressions' | 'comment'> & { family?: Rule['family']; table?: string }, options: FormatOptions = {}): string {
  const out: string[] = [];
  const regs = new Map<number, Load>();
  let pending: Array<{ reg: number; load: Load }> = [];
  let masked: { reg: number; mask: Buffer } | undefined;
  const ctx: HeaderContext = { family: rule.family === 'ip' || rule.family === 'ip6' ? rule.family : undefined, l4: undefined, tableKnown: rule.family !== undefined };
  const exprs = rule.expressions;
  /** Protocol matches left out, as implied by a field loaded later ("ip saddr", "tcp dport"). */
  const implied = impliedMatches(exprs, rule.family);
  /** The loads a key read from register `sreg` on is made of (a concatenation fills the registers after it), taken off the pending ones. */
  const takeFrom = (sreg: number) => {
    const keys = pending.filter((p) => p.reg >= sreg || (sreg <= 4 && p.reg >= 8));
    pending = pending.filter((p) => !keys.includes(p));
    return keys;
  };
  for (let i = 0; i < exprs.length; i++) {
    const e = exprs[i];
    const next = exprs[i + 1];
    const l = 'dreg' in e && e.dreg !== undefined && e.type !== 'immediate' && e.type !== 'bitwise' ? load(e, ctx) : undefined;
    if (l && 'dreg' in e) {
      regs.set(e.dreg!, l);
      pending.push({ reg: e.dreg!, load: l });
      continue;
    }
    // A step this has no text for writes its register too: what was loaded there before is gone.
    if (!l && 'dreg' in e && e.dreg !== undefined && e.type !== 'immediate' && e.type !== 'bitwise' && e.type !== 'lookup' && e.type !== 'hash' && e.type !== 'byteorder') regs.delete(e.dreg);
    switch (e.type) {
      case 'cmp': {
        const src = regs.get(e.sreg);
        pending = pending.filter((p) => p.reg !== e.sreg);
        if (!src) { out.push(debug(e)); break; }
        const data = Buffer.from(e.data);
        if (e.op === 'eq') learn(ctx, src, data);
        if (implied.has(i)) break;
        if (src.parts && e.op === 'eq' && !masked) {
          const parts = src.parts.map((p) => ({ load: p.load, value: data.subarray(p.at, p.at + p.len) }));
          for (const p of parts) learn(ctx, p.load, p.value); // `ether type ip` names the fields after it
          out.push(parts.map((p) => `${p.load.text} ${p.load.value(p.value)}`).join(' '));
          break;
        }
        if (e.op === 'gte' && next?.type === 'cmp' && next.op === 'lte' && next.sreg === e.sreg && !masked) {
          // nft writes a range as two comparisons of the same register, and prints it as one.
          out.push(`${src.text} ${src.value(data)}-${src.value(Buffer.from(next.data))}`);
          i++;
        } else if (masked && masked.reg === e.sreg && src.text === 'ct state' && e.op === 'neq' && data.every((x) => x === 0)) {
          out.push(`ct state ${src.value(masked.mask)}`);
        } else if (masked && masked.reg === e.sreg) {
          out.push(`${src.text} & ${src.value(masked.mask)} ${e.op === 'eq' ? '==' : OPS[e.op as string] ?? e.op} ${src.value(data)}`);
        } else {
          out.push(`${src.text} ${OPS[e.op as string] ?? `${e.op} `}${src.value(data)}`);
        }
        masked = undefined;
        break;
      }
      case 'byteorder':
        // nft's own conversion of a key part in place (a protocol in an interval set's key): it prints none.
        if (e.sreg === e.dreg && regs.has(e.sreg)) break;
        out.push(debug(e));
        break;
      case 'bitwise': {
        const src = regs.get(e.sreg);
        const xor = e.xor ? Buffer.from(e.xor) : undefined;
        if (src && e.mask && xor && xor.some((x) => x !== 0)) {
          // nft's `| x` (mask ~x, xor x) and `^ x` (mask all ones, xor x), as a value computed for a set statement.
          const mask = Buffer.from(e.mask);
          const op = mask.every((b, k) => b === (~xor[k] & 0xff)) ? '|' : mask.every((b) => b === 0xff) ? '^' : undefined;
          if (op) {
            pending = pending.filter((p) => p.reg !== e.sreg);
            regs.set(e.dreg, { text: `${src.text} ${op} ${src.value(xor)}`, value: src.value });
            break;
          }
        }
        if (e.mask && e.sreg === e.dreg && src) masked = { reg: e.dreg, mask: Buffer.from(e.mask) };
        else out.push(debug(e));
        break;
      }
      case 'hash': {
        // jhash of what the registers from sreg hold (a concatenation of loads, as a lookup's key); symhash of the flow.
        const keys = e.sreg === undefined ? [] : takeFrom(e.sreg);
        const source = e.hash === 'jhash' ? ` ${keys.map((k) => k.load.text).join(' . ') || `reg ${e.sreg}`}` : '';
        const seed = e.seed !== undefined ? ` seed 0x${e.seed.toString(16)}` : '';
        const h: Load = { text: `${e.hash}${source} mod ${e.modulus}${seed}${e.offset ? ` offset ${e.offset}` : ''}`, value: integer };
        regs.set(e.dreg, h);
        pending.push({ reg: e.dreg, load: h });
        break;
      }
      case 'lookup': {
        const keys = takeFrom(e.sreg);
        const left = keys.map((k) => k.load.text).join(' . ') || `reg ${e.sreg}`;
        const set = anonymousSet(options.sets, rule, e.set);
        const right = (set && inlineSet(set)) ?? `@${e.set}`;
        if (e.dreg !== undefined && e.dreg !== 0) {
          // A map's value goes to a register, for the statement that uses it (`meta mark set ip saddr map { ... }`).
          const m: Load = { text: `${left} map ${right}`, value: hex };
          regs.set(e.dreg, m);
          pending.push({ reg: e.dreg, load: m });
          break;
        }
        out.push(e.dreg === 0 ? `${left} vmap ${right}` : `${left} ${e.invert ? '!= ' : ''}${right}`);
        break;
      }
      case 'dynset': {
        // `update @m { ip saddr timeout 30s limit rate 10/second }`, `update @m { ip saddr : tcp dport }`.
        // The value's register first, so the key's loads are what is left from sregKey on.
        const data = e.sregData !== undefined ? regs.get(e.sregData) : undefined;
        if (e.sregData !== undefined) pending = pending.filter((p) => p.reg !== e.sregData);
        const keys = takeFrom(e.sregKey);
        const states = (e.expressions ?? []).map(elementStateText);
        if (!keys.length || states.includes(undefined) || (e.sregData !== undefined && !data) || e.invert) {
          out.push(debug(e));
          break;
        }
        const timeout = e.timeout ? ` timeout ${durationText(e.timeout)}` : '';
        // nft's order: the key (with its timeout), the element's statements, then the value.
        out.push(`${e.op} @${e.set} { ${keys.map((k) => k.load.text).join(' . ')}${timeout}${states.map((x) => ` ${x}`).join('')}${data ? ` : ${data.text}` : ''} }`);
        break;
      }
      case 'immediate':
        regs.set(e.dreg, { text: address(Buffer.from(e.data)), value: hex });
        break;
      case 'meta':
      case 'ct':
        if (e.sreg !== undefined) {
          const v = Buffer.from(exprs.slice(0, i).reverse().find((x): x is Extract<Expression, { type: 'immediate' }> => x.type === 'immediate' && x.dreg === e.sreg)?.data ?? []);
          out.push(`${e.type} ${e.key} set ${e.key === 'mark' && v.length ? mark(v) : regs.get(e.sreg)?.text ?? `reg ${e.sreg}`}`);
          pending = pending.filter((p) => p.reg !== e.sreg);
        } else out.push(debug(e));
        break;
      case 'counter':
        out.push(e.packets === undefined ? 'counter' : `counter packets ${e.packets} bytes ${e.bytes ?? 0n}`);
        break;
      case 'verdict':
        out.push(e.chain ? `${verdicts.name(verdicts.byName[e.verdict as never] ?? (e.verdict as number))} ${e.chain}` : String(e.verdict));
        break;
      case 'nat': {
        const addr = e.addrMin !== undefined ? regs.get(e.addrMin)?.text : undefined;
        const prt = e.protoMin !== undefined ? exprs.slice(0, i).reverse().find((x): x is Extract<Expression, { type: 'immediate' }> => x.type === 'immediate' && x.dreg === e.protoMin) : undefined;
        // nft names the address family only where the table's does not say it (inet).
        const fam = rule.family === 'ip' || rule.family === 'ip6' ? '' : ` ${e.family}`;
        out.push(`${e.nat}${fam} to ${addr ?? ''}${prt ? `:${port(Buffer.from(prt.data))}` : ''}`);
        break;
      }
      case 'masquerade':
        out.push(e.flags?.length ? `masquerade ${e.flags.join(',')}` : 'masquerade');
        break;
      case 'redirect':
        out.push('redirect');
        break;
      case 'reject':
        out.push(isPlainReject(e, rule.family) ? 'reject' : e.reject === 'tcp reset' ? 'reject with tcp reset' : `reject with ${e.reject} ${e.code ?? ''}`.trim());
        break;
      case 'notrack':
        out.push('notrack');
        break;
      case 'log':
        out.push(`log${e.prefix !== undefined ? ` prefix ${JSON.stringify(e.prefix)}` : ''}${e.group !== undefined ? ` group ${e.group}` : ''}`);
        break;
      case 'limit':
        out.push(limitText(e) ?? debug(e));
        break;
      case 'quota':
        out.push(quotaText(e));
        break;
      case 'objref':
        out.push(objrefText(e) ?? debug(e));
        break;
      default:
        out.push(debug(e));
    }
  }
  for (const p of pending) out.push(`[ ${p.load.text} => reg ${p.reg} ]`);
  if (rule.comment !== undefined) out.push(`comment ${JSON.stringify(rule.comment)}`);
  return out.join(' ');
}
