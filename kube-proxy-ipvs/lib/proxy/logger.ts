/**
 * Logs as kube-proxy writes them, on stderr, behind pino's API (which the
 * rest of the code uses: log.info({fields}, 'msg'), child loggers):
 *
 * - `text` (the default, klog's line format):
 *   `I1125 10:40:05.123456       1 controller:0] "msg" key="value" n=3`
 *   Node has no Go file:line, so the child logger's component (or
 *   "kube-proxy-ipvs") stands in for the file and the line is 0.
 * - `json` (Kubernetes' JSON shape, component-base's zap encoder):
 *   `{"ts":1732531205123.456,"caller":"controller:0","msg":"msg","v":0,"key":"value"}`,
 *   no level key, `v` on info lines, `err` as a string on error lines.
 *
 * -v maps onto pino's levels: V(0-1) info, V(2-4) debug, V(5+) trace;
 * in JSON those lines carry v 0, 2 and 5.
 */
import { pino, type Logger } from 'pino';
import type { LoggingOptions } from './options.js';

function levelFor(verbosity: number): pino.Level {
  if (verbosity >= 5) return 'trace';
  if (verbosity >= 2) return 'debug';
  return 'info';
}

type Line = Record<string, unknown> & { level: number; time: number; msg?: string };

const LETTER = (level: number) => (level >= 60 ? 'F' : level >= 50 ? 'E' : level >= 40 ? 'W' : 'I');
const VERBOSITY = (level: number) => (level <= 10 ? 5 : level <= 20 ? 2 : 0);
// pino's own keys (its base, pid and hostname, is left out: a field of those names is the caller's), and the component.
const OMIT = new Set(['level', 'time', 'msg', 'component']);

/** An Error as pino serialises it → its message, as klog and zapr print errors. */
function plain(key: string, v: unknown): unknown {
  if (key === 'err' && v && typeof v === 'object' && 'message' in v) return (v as { message: unknown }).message;
  return v;
}

/** klog's KVFormat: strings quoted (multi-line ones as a tab-indented block), everything else as JSON. */
function klogValue(v: unknown): string {
  if (typeof v === 'string') {
    if (v.includes('\n')) return `<\n${v.replace(/\n$/, '').split('\n').map((l) => `\t${l}`).join('\n')}\n >`;
    return JSON.stringify(v);
  }
  return JSON.stringify(v) ?? 'null';
}

const two = (n: number) => String(n).padStart(2, '0');

export function formatText(line: Line, pid = process.pid): string {
  const d = new Date(line.time);
  const micros = String(d.getUTCMilliseconds() * 1000).padStart(6, '0');
  const head = `${LETTER(line.level)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}.${micros} ${String(pid).padStart(7)} ${String(line.component ?? 'kube-proxy-ipvs')}:0]`;
  const kv = Object.entries(line)
    .filter(([k]) => !OMIT.has(k))
    .map(([k, v]) => ` ${k}=${klogValue(plain(k, v))}`)
    .join('');
  return `${head} ${JSON.stringify(line.msg ?? '')}${kv}\n`;
}

export function formatJson(line: Line): string {
  const out: Record<string, unknown> = { ts: line.time, caller: `${String(line.component ?? 'kube-proxy-ipvs')}:0`, msg: line.msg ?? '' };
  const isError = line.level >= 50;
  if (!isError) out.v = VERBOSITY(line.level);
  let err: unknown;
  for (const [k, v] of Object.entries(line)) {
    if (OMIT.has(k)) continue;
    if (k === 'err' && isError) err = plain(k, v);
    else out[k] = plain(k, v);
  }
  if (err !== undefined) out.err = err;
  return `${JSON.stringify(out)}\n`;
}

/** A pino destination that rewrites each JSON record into the chosen shape before writing it. */
function destination(format: 'text' | 'json', out: { write(s: string): unknown }): pino.DestinationStream {
  return {
    write(record: string) {
      let line: Line;
      try {
        line = JSON.parse(record) as Line;
      } catch {
        out.write(record);
        return;
      }
      out.write(format === 'json' ? formatJson(line) : formatText(line));
    },
  };
}

/** The proxy's logger (on stderr unless `out` is given); a number is taken as -v with the text format. */
export function makeLogger(logging: Pick<LoggingOptions, 'format' | 'verbosity'> | number, out?: { write(s: string): unknown }): Logger {
  const l = typeof logging === 'number' ? { format: 'text' as const, verbosity: logging } : logging;
  return pino({ level: levelFor(l.verbosity), base: undefined }, destination(l.format, out ?? pino.destination({ fd: 2, sync: true })));
}
