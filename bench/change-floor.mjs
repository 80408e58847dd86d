/**
 * The floor of benchmark 5 (one endpoint change): the least a Node.js
 * program must do to program one EndpointSlice change, in place of the
 * proxy, against the same test API server and kernel. It lists the
 * EndpointSlices once, watches them from there, and for each change of a
 * slice's addresses sends the kernel requests the proxy sends for it: an
 * added endpoint is one IPVS_CMD_NEW_DEST; a removed one is set to weight 0
 * with that service's destinations read behind it, then deleted (two
 * sendmsg calls). Nothing else: no informer cache, desired state, plan or
 * rules; one service port (80 -> 8080), as the benchmark's Services have.
 *
 *   node bench/change-floor.mjs --master URL --netns /run/netns/NAME
 *
 * Reports on the file descriptor BENCH_PROXY_EVENTS_FD as the proxy's
 * preload does (bench/proxy-instrument.mjs): `loaded`, `start-end` once the
 * watch is open, and a `sync-begin` / `sync-end` pair for each change
 * (`sync-begin` timed when its watch event has been read, `sync-end` when
 * the kernel has acked its last request), so the driver times it with the
 * same code as the proxy.
 */
import { writeSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';

import { Ipvs } from '../dist/lib/index.js';

const { values: a } = parseArgs({ options: { master: { type: 'string' }, netns: { type: 'string' } } });
if (!a.master || !a.netns) throw new Error('usage: change-floor.mjs --master URL --netns /run/netns/NAME');
const fd = Number(process.env.BENCH_PROXY_EVENTS_FD);
if (!Number.isInteger(fd) || fd <= 2) throw new Error('change-floor.mjs: BENCH_PROXY_EVENTS_FD must name the events pipe');
const emit = (ev, extra = {}) => writeSync(fd, JSON.stringify({ ev, t: String(process.hrtime.bigint()), ...extra }) + '\n');
emit('loaded');

const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';
const SERVICE_PORT = 80;
const TARGET_PORT = 8080;

const ipvs = await Ipvs.open({ netns: a.netns });
/** Each slice's ready addresses, by the slice's namespace/name: a change is programmed as the difference. */
const seen = new Map();
/** Service ClusterIPs by namespace/name: the slice names its service by label only. */
const clusterIPs = new Map();

const getJson = async (p) => {
  const res = await fetch(a.master + p);
  if (!res.ok) throw new Error(`GET ${p}: ${res.status} ${(await res.text()).slice(0, 200)}`);
  return res.json();
};

const keyOf = (o) => `${o.metadata.namespace}/${o.metadata.name}`;
const addressesOf = (slice) => new Set((slice.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses));
const serviceOf = (slice) => clusterIPs.get(`${slice.metadata.namespace}/${slice.metadata.labels['kubernetes.io/service-name']}`);

for (const s of (await getJson('/api/v1/services')).items) clusterIPs.set(keyOf(s), s.spec.clusterIP);
const list = await getJson(SLICES);
for (const s of list.items) seen.set(keyOf(s), addressesOf(s));

/** The requests for one slice's new addresses; returns how many endpoints changed. */
async function program(slice) {
  const before = seen.get(keyOf(slice)) ?? new Set();
  const after = addressesOf(slice);
  seen.set(keyOf(slice), after);
  const service = { protocol: 'tcp', address: serviceOf(slice), port: SERVICE_PORT };
  let changed = 0;
  for (const address of after) {
    if (before.has(address)) continue;
    const [r] = await ipvs.apply([{ op: 'addDestination', service, destination: { address, port: TARGET_PORT, weight: 1, forward: 'masq' } }]);
    if (!r.ok) throw r.error;
    changed++;
  }
  for (const address of before) {
    if (after.has(address)) continue;
    const destination = { address, port: TARGET_PORT, weight: 0, forward: 'masq' };
    const rs = await ipvs.apply([{ op: 'updateDestination', service, destination }, { op: 'listDestinations', service }]);
    for (const r of rs) if (!r.ok) throw r.error;
    const [d] = await ipvs.apply([{ op: 'deleteDestination', service, destination: { address, port: TARGET_PORT } }]);
    if (!d.ok) throw d.error;
    changed++;
  }
  return changed;
}

// One change at a time, in the order the events arrive.
let queue = Promise.resolve();
const watch = http.get(`${a.master}${SLICES}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, (res) => {
  if (res.statusCode !== 200) throw new Error(`watch: ${res.statusCode}`);
  emit('start-end');
  let buf = '';
  // A watch that ends would leave the driver waiting for a change: end here instead, where the driver sees it.
  res.on('end', () => {
    process.stderr.write('change-floor: the API server ended the watch\n');
    process.exit(1);
  });
  res.setEncoding('utf8').on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const event = JSON.parse(line);
      if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue;
      // The begin line goes out with the end line, as the proxy's preload
      // holds it: a line written now would wake the driver in the middle of
      // the change it times (user-mode-linux has one CPU).
      const begin = JSON.stringify({ ev: 'sync-begin', t: String(process.hrtime.bigint()) }) + '\n';
      queue = queue.then(async () => {
        const before = ipvs.counters();
        const planned = await program(event.object);
        const t = String(process.hrtime.bigint());
        const after = ipvs.counters();
        const netlink = { ipvs: Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k]])) };
        writeSync(fd, begin + JSON.stringify({ ev: 'sync-end', t, planned, netlink }) + '\n');
      });
    }
  });
});
watch.on('error', (err) => {
  process.stderr.write(`change-floor: the watch failed: ${err.message}\n`);
  process.exit(1);
});
process.on('SIGTERM', () => {
  watch.destroy();
  ipvs.close();
  process.exit(0);
});
