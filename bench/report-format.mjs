/**
 * Number formats and the target book-keeping shared by every benchmark
 * group's report (bench/run.mjs and the bench/group-*.mjs files).
 */

/** The middle value; the mean of the two middle ones for an even count. */
export const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};
/** Nearest-rank percentile: the smallest value with at least p% of the values at or below it. */
export const percentile = (xs, p) => [...xs].sort((x, y) => x - y)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)];
/** Three significant figures or so, no exponent. */
export const f1 = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
export const ratio = (x) => `${x >= 10 ? x.toFixed(0) : x.toFixed(2)}x`;
export const mib = (b) => (b / 2 ** 20).toFixed(1);
export const count = (n) => Math.round(n).toLocaleString('en');
/** An empty cell for a missing figure. */
export const cell = (x, fmt = f1) => (x === undefined || x === null || Number.isNaN(x) ? '' : fmt(x));

/**
 * The targets of one report: target() records a check and returns its
 * verdict as text; a target that names several kernels is met only when it
 * holds in each (pass one entry per kernel).
 */
export function targetBook() {
  const checks = [];
  const target = (name, ok, detail) => {
    checks.push({ name, ok, detail });
    return ok ? `met (${detail})` : `**missed** (${detail})`;
  };
  /**
   * perKernel: [{ label, ok, detail }], one per kernel measured. Met only when met in every one of
   * `required` (labels); a required kernel with no figure makes it "not shown".
   */
  const targetIn = (name, perKernel, required) => {
    const missing = required.filter((k) => !perKernel.some((x) => x.label === k));
    const ok = !missing.length && perKernel.every((x) => x.ok);
    const detail = [...perKernel.map((x) => `${x.label}: ${x.detail}${x.ok ? '' : ' (over)'}`), ...missing.map((k) => `${k}: not measured in this run`)].join('; ');
    checks.push({ name, ok, detail });
    if (missing.length) return `**not shown** (${detail})`;
    return ok ? `met${required.length === 2 ? ' in both' : ''} (${detail})` : `**missed** (${detail})`;
  };
  return { checks, target, targetIn };
}
