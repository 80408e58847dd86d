/**
 * The stateful statements as nft prints them: `limit rate 10/second`,
 * `limit rate over 1 mbytes/second burst 100 kbytes`, `quota over 100
 * mbytes used 1 kbytes`, `counter name "hits"`, and inside a set
 * statement, with durations as nft writes them (`timeout 1h30m`).
 */
import type { Expression, LimitExpr, ObjrefExpr, QuotaExpr } from './expressions/index.js';

/** nft's periods by their length in seconds. */
const PERIODS = new Map([[1, 'second'], [60, 'minute'], [3600, 'hour'], [86400, 'day'], [604800, 'week']]);
const BYTE_UNITS = ['bytes', 'kbytes', 'mbytes'];

/** A byte count as nft prints it: in the largest unit (up to mbytes) that divides it exactly. */
function bytesText(n: bigint): string {
  let unit = 0;
  while (unit < BYTE_UNITS.length - 1 && n % 1024n === 0n) {
    n /= 1024n;
    unit++;
  }
  return `${n} ${BYTE_UNITS[unit]}`;
}

/** A limit; undefined where nft would print something this does not know (a period it has no word for). */
export function limitText(e: LimitExpr): string | undefined {
  const period = PERIODS.get(e.unit);
  if (!period || typeof e.limitType === 'number') return undefined;
  const over = e.over ? 'over ' : '';
  if (e.limitType === 'bytes') {
    const burst = e.burst ? ` burst ${bytesText(BigInt(e.burst))}` : '';
    return `limit rate ${over}${bytesText(BigInt(e.rate))}/${period}${burst}`;
  }
  // nft leaves out its own default burst of 5 packets.
  const burst = e.burst && e.burst !== 5 ? ` burst ${e.burst} packets` : '';
  return `limit rate ${over}${e.rate}/${period}${burst}`;
}

/** A quota, with what it has used when that is not nothing. */
export function quotaText(e: QuotaExpr): string {
  const used = e.consumed ? ` used ${bytesText(e.consumed)}` : '';
  return `quota ${e.over ? 'over ' : ''}${bytesText(e.bytes)}${used}`;
}

/** The named objects nft refers to as `TYPE name "NAME"`; undefined for the others. */
export function objrefText(e: ObjrefExpr): string | undefined {
  if ('set' in e) return undefined;
  return e.objectType === 'counter' || e.objectType === 'quota' || e.objectType === 'limit' ? `${e.objectType} name ${JSON.stringify(e.name)}` : undefined;
}

/** A duration in milliseconds as nft prints it: `30s`, `1h30m`, `1s500ms`, `2d`. */
export function durationText(ms: number): string {
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]] as const) {
    const n = Math.floor(ms / size);
    ms -= n * size;
    if (n) parts.push(`${n}${unit}`);
  }
  return parts.join('') || '0s';
}

/** A stateful expression inside a set statement (`update @m { ip saddr limit rate 10/second }`); undefined for others. A counter there is a template: nft prints no figures for it. */
export function elementStateText(e: Expression): string | undefined {
  if (e.type === 'counter') return 'counter';
  if (e.type === 'limit') return limitText(e);
  if (e.type === 'quota') return quotaText(e);
  return undefined;
}
