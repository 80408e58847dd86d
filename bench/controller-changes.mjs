/**
 * Benchmark 5's endpoint changes (bench/controller.mjs): one change timed
 * from the moment it is made to the end of the sync that programs it (the
 * kernel has acked every request by then) and read back from the kernel;
 * a series of them through the test API server; and the same series
 * programmed by the change floor (bench/change-floor.mjs) instead of the
 * proxy.
 */
import { Ipvs } from '../dist/lib/index.js';
import { clusterIP, endpointIP, ENDPOINTS_PER_SERVICE, slice } from './controller-objects.mjs';
import { msBetween, now, ProxyProcess } from './controller-proxy.mjs';
import { median } from './report-format.mjs';

/** Which service change c touches, of n: pairs (add, then remove) on services spread over the cluster. */
export const serviceOfChange = (c, n) => ((c >> 1) * 7919 + 13) % n;

/** One endpoint change, timed from `change()` to the end of the sync that programs it, then read back from the kernel. */
export async function timedChange(p, ipvs, i, add, change, label) {
  const from = p.events.length;
  const t0 = now();
  change();
  let end, syncs = 0, idx = from;
  for (;;) {
    // A periodic resync that starts first programs the change as well.
    end = await p.waitFor(`the sync of ${label}`, (e) => e.ev === 'sync-end' || e.ev === 'resync-end', { from: idx, timeoutMs: 300_000 });
    syncs++;
    if (end.error) throw new Error(`${label}: sync failed: ${end.error}`);
    if (end.planned > 0) break;
    // A sync with nothing to do (it ran before the change arrived): the next one programs it.
    idx = p.events.indexOf(end) + 1;
  }
  const endIdx = p.events.indexOf(end);
  // The latest begin before that end: on a loaded machine a periodic resync may have begun before the change was made.
  const begin = p.events.slice(0, endIdx).reverse().find((e) => e.ev === (end.ev === 'sync-end' ? 'sync-begin' : 'resync-begin'));
  const reloadBegin = p.events.slice(from, endIdx).find((e) => e.ev === 'reload-begin');
  const reloadEnd = p.events.slice(from, endIdx).reverse().find((e) => e.ev === 'reload-end');
  const resyncs = p.events.slice(from, endIdx + 1).filter((e) => e.ev === 'resync-end').length;
  // The graceful-termination pass (every minute) also runs between syncs; a change may wait for it.
  const drains = p.events.slice(from, endIdx).filter((e) => e.ev === 'drain-begin').length;
  // Read back: the extra endpoint is there (or gone), the ten others too.
  const dests = await ipvs.listDestinations({ protocol: 'tcp', address: clusterIP(i), port: 80 });
  const extra = endpointIP(i, ENDPOINTS_PER_SERVICE);
  const has = dests.some((d) => d.address === extra);
  if (has !== add || dests.length !== ENDPOINTS_PER_SERVICE + (add ? 1 : 0)) {
    throw new Error(`${label}: the kernel holds ${dests.length} destinations for ${clusterIP(i)}:80 (extra ${has ? 'present' : 'absent'}) after the sync`);
  }
  return {
    add,
    latencyMs: msBetween(t0, end.t),
    toSyncStartMs: msBetween(t0, begin.t),
    syncMs: msBetween(begin.t, end.t),
    reloadMs: reloadBegin && reloadEnd ? msBetween(reloadBegin.t, reloadEnd.t) : undefined,
    toReloadMs: reloadBegin ? msBetween(t0, reloadBegin.t) : undefined,
    planned: end.planned,
    syncs,
    /** Programmed by a periodic resync rather than a sync (it started first), or waited for one. */
    resyncs,
    by: end.ev === 'sync-end' ? 'sync' : 'resync',
    drains,
    netlink: end.netlink,
  };
}

/**
 * `changes` endpoint changes through the test API server, one at a time: an
 * endpoint added to a service's EndpointSlice, then removed again. `p` is
 * whatever programs them (the proxy or the floor), reporting on its events
 * pipe; progress every 20 changes.
 */
export async function endpointChanges(p, ipvs, api, { services, changes, label, say }) {
  const out = [];
  for (let c = 0; c < changes; c++) {
    const i = serviceOfChange(c, services);
    const add = c % 2 === 0;
    out.push(await timedChange(p, ipvs, i, add, () => api.apply('endpointslices', slice(i, add ? ENDPOINTS_PER_SERVICE + 1 : ENDPOINTS_PER_SERVICE)), `${label} ${c}`));
    if ((c + 1) % 20 === 0 || c + 1 === changes) {
      const l = out.map((x) => x.latencyMs);
      say(`  ${c + 1}/${changes} changes: median ${median(l).toFixed(1)} ms, max ${Math.max(...l).toFixed(1)} ms`);
    }
  }
  return out;
}

/**
 * Benchmark 5's floor: the same changes made again, with the proxy stopped
 * (it leaves the kernel programmed), programmed by bench/change-floor.mjs,
 * which watches the same API server and sends only the kernel requests each
 * change needs. Timed and read back as the proxy's changes are.
 */
export async function changeFloor(api, ns, { services, changes, say }) {
  say(`change floor: bench/change-floor.mjs (watch + the same kernel requests), ${changes} changes`);
  const p = new ProxyProcess({ netns: ns.path, args: ['--master', api.url], floor: true });
  try {
    await p.waitFor('the change floor to watch', (e) => e.ev === 'start-end', { timeoutMs: 120_000 });
    const ipvs = await Ipvs.open({ netns: ns.path });
    try {
      return { changes: await endpointChanges(p, ipvs, api, { services, changes, label: 'floor change', say }) };
    } finally {
      ipvs.close();
    }
  } finally {
    await p.stop();
  }
}
