/**
 * A command line read with spf13/pflag's syntax, which kube-proxy's users
 * script against: `--name=value` and `--name value`; booleans as `--name`
 * or `--name=false` (never taking the next word); `_` and `-` alike in long
 * names (component-base's word-separator normalisation); the shorthands
 * `-v 2`, `-v=2`, `-v2` and `-h`; `--` ending the flags. Commander reads
 * option values differently (an optional value takes the next word, no
 * joined shorthand value, no name normalisation), which would change what
 * kubeadm's and other tools' command lines mean, hence this reader.
 *
 * It only splits the line: each value is converted and checked by its
 * flag's own parser (flags.ts), in command-line order, as pflag does.
 */

export interface FlagSpec {
  name: string;
  /** A one-letter alias (-v). */
  shorthand?: string;
  /** Takes no value unless given with "=": bool flags, and --version. */
  noValue?: boolean;
}

export interface ParsedFlag {
  name: string;
  /** Undefined for a value-less use (`--cleanup`). */
  value: string | undefined;
}

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export const normaliseName = (name: string): string => name.replace(/_/g, '-');

/** Splits argv into flags (in order) and positional arguments. Throws pflag's messages for unknown or incomplete flags. */
export function splitFlags(argv: readonly string[], specs: readonly FlagSpec[]): { flags: ParsedFlag[]; args: string[] } {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.shorthand).map((s) => [s.shorthand!, s]));
  const flags: ParsedFlag[] = [];
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = normaliseName(eq < 0 ? a.slice(2) : a.slice(2, eq));
      const spec = byName.get(name);
      if (!spec) throw new FlagError(`unknown flag: --${name}`);
      if (eq >= 0) flags.push({ name, value: a.slice(eq + 1) });
      else if (spec.noValue) flags.push({ name, value: undefined });
      else if (i + 1 < argv.length) flags.push({ name, value: argv[++i] });
      else throw new FlagError(`flag needs an argument: --${name}`);
    } else if (a.startsWith('-') && a.length > 1) {
      const letter = a[1];
      const spec = byShort.get(letter);
      if (!spec) throw new FlagError(`unknown shorthand flag: '${letter}' in ${a}`);
      const rest = a.slice(2);
      if (rest.startsWith('=')) flags.push({ name: spec.name, value: rest.slice(1) });
      else if (rest !== '') flags.push({ name: spec.name, value: rest });
      else if (spec.noValue) flags.push({ name: spec.name, value: undefined });
      else if (i + 1 < argv.length) flags.push({ name: spec.name, value: argv[++i] });
      else throw new FlagError(`flag needs an argument: '${letter}' in -${letter}`);
    } else {
      args.push(a);
    }
  }
  return { flags, args };
}

/** strconv.ParseBool. */
export function parseGoBool(text: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  throw new RangeError(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
}

/** strconv.ParseInt(s, 0, bits): decimal, 0x hex, 0o/0 octal, 0b binary, with a sign. */
export function parseGoInt(text: string, bits = 32): number {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]*|[1-9][0-9_]*)$/.exec(text);
  if (!m) throw new RangeError(`strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
  let body = m[2].replace(/_/g, '');
  let base = 10;
  if (/^0[xX]/.test(body)) [base, body] = [16, body.slice(2)];
  else if (/^0[bB]/.test(body)) [base, body] = [2, body.slice(2)];
  else if (/^0[oO]/.test(body)) [base, body] = [8, body.slice(2)];
  else if (body.length > 1 && body.startsWith('0')) [base, body] = [8, body.slice(1)];
  const n = (m[1] === '-' ? -1 : 1) * parseInt(body || '0', base);
  const limit = 2 ** (bits - 1);
  if (n < -limit || n >= limit) throw new RangeError(`strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`);
  return n;
}

/** strconv.ParseFloat(s, 32) for the plain decimal forms. */
export function parseGoFloat(text: string): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new RangeError(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
  return Math.fround(Number(text));
}

/** pflag's stringSlice: CSV fields (quotes allowed). */
export function parseCsv(text: string): string[] {
  if (text === '') return [];
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') out.push(field), (field = '');
    else field += c;
  }
  if (quoted) throw new RangeError(`parse error: extraneous or missing " in quoted-field in ${JSON.stringify(text)}`);
  out.push(field);
  return out;
}
