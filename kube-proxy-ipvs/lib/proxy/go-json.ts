/**
 * Go's encoding/json.Marshal, for the values /configz serves, so its body
 * is byte for byte what kube-proxy's is: objects keep the order they are
 * built in (a struct's field order; a Go map's keys must be given sorted),
 * strings escape <, > and & (Go's HTML-safe default) and U+2028/U+2029,
 * a lone surrogate (which Go could only hold as invalid UTF-8) becomes
 * U+FFFD, float32 fields print the shortest decimal that reads back as the
 * same float32, and NaN or an infinity is Go's UnsupportedValueError.
 */

/** A float32 field (Go writes it with 32-bit shortest digits, not float64's). */
export class Float32 {
  constructor(readonly value: number) {}
}

export type GoJson = null | boolean | number | string | Float32 | readonly GoJson[] | { readonly [key: string]: GoJson };

/** json.UnsupportedValueError's text. */
export class UnsupportedValueError extends Error {
  constructor(what: string) {
    super(`json: unsupported value: ${what}`);
    this.name = 'UnsupportedValueError';
  }
}

export function marshal(v: GoJson): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return float64(v);
  if (typeof v === 'string') return quote(v);
  if (v instanceof Float32) return float32(v.value);
  if (Array.isArray(v)) return `[${(v as readonly GoJson[]).map(marshal).join(',')}]`;
  const o = v as { readonly [key: string]: GoJson };
  return `{${Object.keys(o)
    .map((k) => `${quote(k)}:${marshal(o[k]!)}`)
    .join(',')}}`;
}

const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** encodeState.string with escapeHTML. */
function quote(s: string): string {
  // Characters below U+0020, the quote, the backslash, <>&, U+2028/U+2029 and lone surrogates.
  const special = /[\u0000-\u001f"\\<>&\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  return `"${s.replace(special, (c) => {
    if (SHORT[c] !== undefined) return SHORT[c]!;
    if (c.length === 1 && c >= '\ud800' && c <= '\udfff') return '\ufffd';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  })}"`;
}

function unsupported(x: number): never {
  throw new UnsupportedValueError(Number.isNaN(x) ? 'NaN' : x > 0 ? '+Inf' : '-Inf');
}

/**
 * A plain number is a Go integer (the struct has no float64 field), so -0
 * is 0; a fraction prints as Go's float64 would, which are JavaScript's
 * shortest digits and exponent form.
 */
function float64(x: number): string {
  if (!Number.isFinite(x)) unsupported(x);
  return Object.is(x, -0) ? '0' : String(x);
}

/** floatEncoder for 32 bits: strconv.AppendFloat(f, 'f' or 'e', -1, 32), then e-07 → e-7. */
function float32(input: number): string {
  const x = Math.fround(input);
  if (!Number.isFinite(x)) unsupported(x);
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  let digits = '';
  let exp = 0;
  for (let p = 1; p <= 9; p++) {
    const e = x.toExponential(p - 1);
    if (Math.fround(Number(e)) === x) {
      const [mantissa, power] = e.split('e') as [string, string];
      digits = mantissa.replace('-', '').replace('.', '');
      exp = Number(power);
      break;
    }
  }
  const sign = x < 0 ? '-' : '';
  const abs = Math.abs(x);
  // Go compares with the float32 constants.
  if (abs < Math.fround(1e-6) || abs >= Math.fround(1e21)) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const e = Math.abs(exp);
    return `${sign}${digits[0]}${frac}e${exp < 0 ? '-' : '+'}${exp < 0 ? e : String(e).padStart(2, '0')}`;
  }
  // 'f' with the shortest digits: the decimal point moved by the exponent.
  const point = exp + 1;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
