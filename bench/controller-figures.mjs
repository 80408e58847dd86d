/**
 * The figures of one bench/controller.mjs result (one sandbox, one cluster
 * size): medians over its runs, for the report's tables and the scaling
 * charts.
 */
import { median, percentile } from './report-format.mjs';

const sum = (xs) => xs.reduce((x, y) => x + y, 0);

/** messagesSent / sendmsgCalls over the sockets of one netlink delta. */
export function traffic(netlink) {
  const socks = Object.values(netlink ?? {});
  return { messages: sum(socks.map((s) => s.messagesSent ?? 0)), sendmsg: sum(socks.map((s) => s.sendmsgCalls ?? 0)) };
}

/** Consecutive phases of a cold start (ms), summing to spawn → programmed. */
function phasesOf(x, viaApi) {
  const p = x.phases;
  const sourceEnd = viaApi ? p.controllerStartBeginMs : p.sourceEndMs;
  const startup = viaApi ? p.nodeStartMs : p.sourceBeginMs;
  return { startup, source: sourceEnd - startup, start: p.controllerStartEndMs - sourceEnd, hand: p.firstSyncBeginMs - p.controllerStartEndMs, sync: x.firstSyncMs };
}

export function controllerFigures(r) {
  const fl = r.floor;
  const fm = (fn) => median(fl.map(fn));
  const cpu = (x) => x.userUs + x.systemUs;
  const floor = {
    total: fm((x) => x.wallMs),
    ipvs: fm((x) => x.ipvs.wallMs),
    ipset: fm((x) => x.ipset.wallMs),
    addresses: fm((x) => x.addresses.wallMs),
    iptables: fm((x) => x.iptables.wallMs),
    narrow: fm((x) => x.ipvs.wallMs + x.ipset.wallMs),
    cpu: fm((x) => cpu(x.ipvs) + cpu(x.ipset) + cpu(x.addresses) + cpu(x.iptables)),
    messages: r.plan.virtualServers + r.plan.realServers + fl[0].ipset.counters.messagesSent + r.plan.addresses,
    sendmsg: fl[0].ipvs.sendmsg + fl[0].ipset.counters.sendmsgCalls + fl[0].addresses.sendmsg,
    nodeStart: fl.every((x) => x.nodeStart) ? fm((x) => x.nodeStart.wallMs) : undefined,
    parseOnly: fl.every((x) => x.parseOnly) ? fm((x) => x.parseOnly.wallMs) : undefined,
    nodeStartRss: fl.every((x) => x.nodeStart?.maxRssKb) ? fm((x) => x.nodeStart.maxRssKb * 1024) : undefined,
    parseOnlyRss: fl.every((x) => x.parseOnly?.maxRssKb) ? fm((x) => x.parseOnly.maxRssKb * 1024) : undefined,
  };
  const m = r.manifests;
  const mm = (fn) => median(m.map(fn));
  const cold = {
    total: mm((x) => x.totalMs),
    ...Object.fromEntries(['startup', 'source', 'start', 'hand', 'sync'].map((k) => [k, mm((x) => phasesOf(x, false)[k])])),
    cpu: mm(cpu),
    messages: mm((x) => traffic(x.netlink).messages),
    sendmsg: mm((x) => traffic(x.netlink).sendmsg),
    runs: m.length,
  };
  const api = r.apiserver;
  const apiCold = api && { total: api.totalMs, ...phasesOf(api, true), cpu: cpu(api), messages: traffic(api.netlink).messages, sendmsg: traffic(api.netlink).sendmsg };
  const ch = api?.changes ?? [];
  const lat = (xs) => xs.map((c) => c.latencyMs);
  const changeStats = (xs) =>
    xs.length && {
      n: xs.length,
      maxMessages: Math.max(...xs.map((c) => traffic(c.netlink).messages)),
      maxSendmsg: Math.max(...xs.map((c) => traffic(c.netlink).sendmsg)),
      median: median(lat(xs)),
      p99: percentile(lat(xs), 99),
      max: Math.max(...lat(xs)),
      toSyncStart: median(xs.map((c) => c.toSyncStartMs)),
      sync: median(xs.map((c) => c.syncMs)),
    };
  const byKind = (xs) => ({ add: changeStats(xs.filter((c) => c.add)), remove: changeStats(xs.filter((c) => !c.add)), all: changeStats(xs) });
  const changes = ch.length ? { ...byKind(ch), services: new Set(ch.map((c, i) => i >> 1)).size } : undefined;
  // The same changes programmed by bench/change-floor.mjs (no floor in results made before it).
  const changeFloor = api?.changeFloor?.changes.length ? byKind(api.changeFloor.changes) : undefined;
  const mem = m.filter((x) => x.memory);
  const memory = mem.length
    ? {
        runs: mem.length,
        rss: median(mem.map((x) => x.memory.rss)),
        peak: median(mem.map((x) => x.memory.peak)),
        settled: mem.every((x) => x.memory.settled) ? median(mem.map((x) => x.memory.settled.rss)) : undefined,
        settledPeak: mem.every((x) => x.memory.settled) ? median(mem.map((x) => x.memory.settled.peak)) : undefined,
        live: mem.every((x) => x.memory.afterCollection) ? median(mem.map((x) => x.memory.afterCollection.heapUsed)) : undefined,
        resyncMs: median(mem.map((x) => x.memory.resyncMs)),
        resyncPlanned: median(mem.map((x) => x.memory.resyncPlanned)),
        syncPeriod: mem[0].memory.syncPeriod ?? '30s',
        atFirstSync: mm((x) => x.rssAtFirstSync),
        peakAtFirstSync: mm((x) => x.maxRssAtFirstSync),
        afterChanges: api?.memoryAfterChanges,
        apiSettled: api?.memorySettled,
      }
    : undefined;
  return { services: r.services, floor, cold, apiCold, changes, changeFloor, memory, kernel: m[m.length - 1].kernel, firstSyncNetlink: m[m.length - 1].firstSync.netlink, manifestChanges: m.flatMap((x) => x.manifestChanges ?? []) };
}
