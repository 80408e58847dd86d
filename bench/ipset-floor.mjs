/**
 * The ipset part of the controller's floor, in its own node process:
 * create the kube-proxy sets and load their entries with Ipset.addMany
 * (one call per set), as the controller's applier asks for them, and
 * nothing around it. Timed around the calls (node's start-up is not
 * counted); prints one JSON line.
 *
 *   node bench/ipset-floor.mjs --netns /run/netns/X --sets FILE.json
 *
 * FILE.json: [{ name, type, options: { family, hashSize, maxElem, range }, entries: [...] }]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { Ipset } from '../dist/lib/index.js';

const { values: a } = parseArgs({ options: { netns: { type: 'string' }, sets: { type: 'string' } } });
const sets = JSON.parse(readFileSync(a.sets, 'utf8'));
const ipset = await Ipset.open({ netns: a.netns });
const c0 = ipset.counters();
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
let entries = 0;
for (const s of sets) {
  const { family, ...sizes } = s.options;
  await ipset.create(s.name, s.type, { ...(s.type.startsWith('hash:') ? { family } : {}), ...sizes, exist: true });
  if (s.entries.length) entries += await ipset.addMany(s.name, s.entries, { exist: true });
}
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
const c1 = ipset.counters();
ipset.close();
console.log(JSON.stringify({ wallMs, userUs: cpu.user, systemUs: cpu.system, sets: sets.length, entries, counters: Object.fromEntries(Object.keys(c1).map((k) => [k, c1[k] - c0[k]])) }));
