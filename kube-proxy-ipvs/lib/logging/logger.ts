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
 * -v is klog's verbosity: a line logged at V(n) is written when -v is n or
 * more. pino's info, debug and trace are V(0), V(2) and V(5); V(1), V(3)
 * and V(4) are levels of our own between them (logV writes at any of
 * them), so that each line appears at the -v where kube-proxy writes it.
 * In JSON a line's `v` is that verbosity.
 */
import { pino, type Logger } from 'pino';

/** The verbosities kube-proxy logs at; everything from V(5) on is pino's trace. */
export type Verbosity = 0 | 1 | 2 | 3 | 4 | 5;

/** pino's level number for V(0) to V(5): info 30, debug 20 and trace 10 are pino's own. */
const LEVEL_OF_V = [30, 25, 20, 17, 14, 10] as const;
const NAME_OF_V = ['info', 'v1', 'debug', 'v3', 'v4', 'trace'] as const;
const CUSTOM_LEVELS = { v1: LEVEL_OF_V[1], v3: LEVEL_OF_V[3], v4: LEVEL_OF_V[4] };

function levelFor(verbosity: number): string {
  return NAME_OF_V[Math.min(verbosity, 5)];
}

/** What logV needs of a logger: pino's info, debug and trace (the proxy's own also has V(1), V(3) and V(4)). */
export type VLogger = Pick<Logger, 'info' | 'debug' | 'trace'>;

/**
 * klog's `logger.V(v).Info(msg, pairs...)`: written when -v is v or more.
 * A logger not made by makeLogger (a caller's own pino) has no V(1), V(3)
 * or V(4): such lines go to its info, debug and debug.
 */
export function logV(log: VLogger, v: Verbosity, fields: object, msg: string): void {
  const own = (log as unknown as Record<string, pino.LogFn | undefined>)[NAME_OF_V[v]];
  (typeof own === 'function' ? own : log[nearestOwn(v)]).call(log, fields, msg);
}

/** Where a V(v) line goes on a logger with pino's levels only. */
const nearestOwn = (v: Verbosity): 'info' | 'debug' | 'trace' => (v <= 1 ? 'info' : v <= 4 ? 'debug' : 'trace');

/** Whether a V(v) line would be written: for lines whose fields cost something to build. */
export function enabledAtV(log: Logger, v: Verbosity): boolean {
  const name = NAME_OF_V[v];
  return log.isLevelEnabled(name in log.levels.values ? name : nearestOwn(v));
}

type Line = Record<string, unknown> & { level: number; time: number; msg?: string };

const LETTER = (level: number) => (level >= 60 ? 'F' : level >= 50 ? 'E' : level >= 40 ? 'W' : 'I');
/** The V(n) of an info-or-lower line: the first verbosity whose level it reaches (below trace: 5). */
function verbosityOf(level: number): number {
  const v = LEVEL_OF_V.findIndex((l) => level >= l);
  return v < 0 ? 5 : v;
}
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
  if (!isError) out.v = verbosityOf(line.level);
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

/** What the logger is made from: the `format` and `verbosity` of the proxy's logging options. */
export interface LogShape {
  format: 'text' | 'json';
  verbosity: number;
}

/** The proxy's logger (on stderr unless `out` is given); a number is taken as -v with the text format. */
export function makeLogger(logging: LogShape | number, out?: { write(s: string): unknown }): Logger {
  const l = typeof logging === 'number' ? { format: 'text' as const, verbosity: logging } : logging;
  // Typed as a plain Logger: the rest of the code reaches V(1), V(3) and V(4) through logV alone.
  return pino({ customLevels: CUSTOM_LEVELS, level: levelFor(l.verbosity), base: undefined }, destination(l.format, out ?? pino.destination({ fd: 2, sync: true }))) as unknown as Logger;
}
