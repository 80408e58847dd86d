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

/** The inverse, for logs and --write-config-to: 90000 → "1m30s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  if (h === 0 && m === 0 && s < 1) return `${sign}${rest}ms`;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
