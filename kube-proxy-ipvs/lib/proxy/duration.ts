/**
 * Go's time.ParseDuration, because kube-proxy's flags and its
 * KubeProxyConfiguration take durations in that syntax ("30s", "5m",
 * "1h2m", "1.5h", "300ms"). Returns milliseconds.
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

export function parseDuration(text: string): number {
  // No trimming: Go refuses " 30s", on a flag and in a config file alike.
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  // Go accepts a bare "0" and nothing else without a unit.
  if (rest === '0') return 0;
  if (rest === '') throw new RangeError(`invalid duration "${text}"`);
  let total = 0;
  const part = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const m = part.exec(rest);
    if (!m) throw new RangeError(`invalid duration "${text}": expected a number and a unit (ns, us, ms, s, m, h), as in 30s, 5m or 1h2m`);
    total += Number(m[1]) * UNIT_MS[m[2]];
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/**
 * The inverse, as Go's Duration.String() writes it (metav1.Duration's JSON
 * and YAML: --write-config-to, /configz, logs): 90000 → "1m30s",
 * 0.5 → "500µs".
 */
export function formatDuration(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  ns = Math.abs(ns);
  // fmtFrac: the fraction without trailing zeros, and no point when there is none.
  const frac = (v: number, digits: number): [string, number] => {
    const scale = 10 ** digits;
    const f = String(v % scale)
      .padStart(digits, '0')
      .replace(/0+$/, '');
    return [f === '' ? '' : `.${f}`, Math.floor(v / scale)];
  };
  if (ns < 1e9) {
    const [unit, digits] = ns < 1e3 ? ['ns', 0] : ns < 1e6 ? ['µs', 3] : ['ms', 6];
    const [f, whole] = frac(ns, digits);
    return `${sign}${whole}${f}${unit}`;
  }
  const [f, secs] = frac(ns, 9);
  const h = Math.floor(secs / 3600);
  const m = Math.floor(secs / 60) % 60;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${secs % 60}${f}s`;
}
