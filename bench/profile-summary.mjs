/**
 * Where a V8 CPU profile's time went, as text (for profiling the benchmarks
 * where no DevTools are at hand, e.g. inside the sandbox):
 *
 *   node bench/profile-summary.mjs FILE.cpuprofile [--top 25] [--from T0_MS --to T1_MS]
 *
 * Prints the functions with the most self time, and the total time spent
 * under (inclusive) each of the files of this project and each package in
 * node_modules. --from/--to keep only the samples in that window (ms since
 * the profile's start). profileSummary() gives the same as data (bench/run.mjs
 * puts the host profile of apply() and decoding into BENCHMARKS.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/**
 * Self time by function and inclusive time by file or package, in µs, most first.
 * fromMs/toMs keep only the samples in that window (ms since the profile's start).
 */
export function profileSummary(prof, { fromMs = -Infinity, toMs = Infinity } = {}) {
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  // Sample i lasts timeDeltas[i+1]; attribute it to its node.
  const selfUs = new Map();
  let t = 0, total = 0;
  const from = fromMs * 1000, to = toMs * 1000;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    const dt = prof.timeDeltas[i + 1] ?? 0;
    if (t < from || t > to) continue;
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + dt);
    total += dt;
  }

  const byFn = new Map();
  const inclusive = new Map();
  for (const [id, us] of selfUs) {
    const cf = nodes.get(id).callFrame;
    const key = `${cf.functionName || '(anonymous)'}  ${where(cf)}:${cf.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    // Inclusive per file/package: once per stack.
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const w = where(nodes.get(n).callFrame);
      if (seen.has(w)) continue;
      seen.add(w);
      inclusive.set(w, (inclusive.get(w) ?? 0) + us);
    }
  }
  const sorted = (m) => [...m].sort((x, y) => y[1] - x[1]).map(([name, us]) => ({ name, us }));
  return { totalUs: total, self: sorted(byFn), inclusive: sorted(inclusive) };
}

function where(cf) {
  const url = cf.url || '';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return `pkg ${m[1]}`;
  const p = /\/(dist\/lib\/.*|bench\/.*)$/.exec(url);
  if (p) return p[1].replace(/\.js$/, '');
  if (url.startsWith('node:')) return url;
  return url ? url : `(${cf.functionName || 'native'})`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values: a, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, from: { type: 'string' }, to: { type: 'string' } } });
  const s = profileSummary(JSON.parse(readFileSync(positionals[0], 'utf8')), { fromMs: a.from ? Number(a.from) : undefined, toMs: a.to ? Number(a.to) : undefined });
  const top = Number(a.top);
  const pct = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / s.totalUs).toFixed(1).padStart(5)}%`;
  console.log(`total sampled: ${(s.totalUs / 1000).toFixed(0)} ms`);
  console.log('\nself time, by function:');
  for (const x of s.self.slice(0, top)) console.log(`${pct(x.us)}  ${x.name}`);
  console.log('\ninclusive time, by file / package:');
  for (const x of s.inclusive.slice(0, top)) console.log(`${pct(x.us)}  ${x.name}`);
}
