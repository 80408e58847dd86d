/**
 * What a V8 heap snapshot holds, as text (profiling aid for benchmark 6,
 * where no DevTools are at hand):
 *
 *   node --max-old-space-size=4096 bench/heap-summary.mjs FILE.heapsnapshot [--top 30]
 *
 * Prints the total self size and count of the objects by type and
 * constructor (or string / array kind), largest first.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: a, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' } } });
const snap = JSON.parse(readFileSync(positionals[0], 'utf8'));
const meta = snap.snapshot.meta;
const F = meta.node_fields.length;
const typeIdx = meta.node_fields.indexOf('type');
const nameIdx = meta.node_fields.indexOf('name');
const sizeIdx = meta.node_fields.indexOf('self_size');
const types = meta.node_types[typeIdx];
const nodes = snap.nodes;
const strings = snap.strings;

const groups = new Map();
let total = 0;
for (let i = 0; i < nodes.length; i += F) {
  const type = types[nodes[i + typeIdx]];
  const size = nodes[i + sizeIdx];
  total += size;
  // Strings are grouped by kind, not by content.
  const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'number' ? '' : strings[nodes[i + nameIdx]];
  const key = `${type} ${name.length > 60 ? `${name.slice(0, 60)}...` : name}`;
  const g = groups.get(key) ?? { count: 0, size: 0 };
  g.count++;
  g.size += size;
  groups.set(key, g);
}
const mib = (b) => (b / 2 ** 20).toFixed(1).padStart(7);
console.log(`${(nodes.length / F).toLocaleString('en')} objects, ${mib(total)} MiB (self sizes)`);
for (const [k, g] of [...groups].sort((x, y) => y[1].size - x[1].size).slice(0, Number(a.top))) {
  console.log(`${mib(g.size)} MiB ${String(g.count).padStart(9)}  ${k}`);
}
