/**
 * The BENCHMARKS.md tables of benchmarks 4-6 (bench/controller.mjs's JSON).
 * bench/run.mjs calls controllerTables() with its formatting helpers and
 * its target() (which records met/missed for --strict).
 */

/** The middle value; the mean of the two middle ones for an even count. */
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};
/** Nearest-rank percentile: the smallest value with at least p% of the values at or below it. */
export const percentile = (xs, p) => [...xs].sort((x, y) => x - y)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)];
const mib = (b) => (b / 2 ** 20).toFixed(1);
const sum = (xs) => xs.reduce((x, y) => x + y, 0);
const TARGET_BYTES = 200e6;

/** messagesSent / sendmsgCalls over the three sockets of one netlink delta. */
function traffic(netlink) {
  const socks = Object.values(netlink ?? {});
  return { messages: sum(socks.map((s) => s.messagesSent ?? 0)), sendmsg: sum(socks.map((s) => s.sendmsgCalls ?? 0)) };
}

export function controllerTables(r, { f1, ratio, target }) {
  const md = [];
  const n = r.services.toLocaleString('en');
  const p = r.plan;
  const floor = {
    total: median(r.floor.map((x) => x.wallMs)),
    ipvs: median(r.floor.map((x) => x.ipvs.wallMs)),
    ipset: median(r.floor.map((x) => x.ipset.wallMs)),
    addresses: median(r.floor.map((x) => x.addresses.wallMs)),
    iptables: median(r.floor.map((x) => x.iptables.wallMs)),
    narrow: median(r.floor.map((x) => x.ipvs.wallMs + x.ipset.wallMs)),
    cpu: median(r.floor.map((x) => x.ipvs.userUs + x.ipvs.systemUs + x.ipset.userUs + x.ipset.systemUs + x.addresses.userUs + x.addresses.systemUs + x.iptables.userUs + x.iptables.systemUs)),
  };
  const f0 = r.floor[0];
  const floorMessages = p.virtualServers + p.realServers + f0.ipset.counters.messagesSent + p.addresses;
  const floorSendmsg = f0.ipvs.sendmsg + f0.ipset.counters.sendmsgCalls + f0.addresses.sendmsg;
  const m = r.manifests;
  const med = (fn) => median(m.map(fn));
  // Consecutive phases (ms), summing to spawn → programmed.
  const phasesOf = (x, viaApi) =>
    viaApi
      ? {
          startup: x.phases.nodeStartMs,
          source: x.phases.controllerStartBeginMs - x.phases.nodeStartMs,
          start: x.phases.controllerStartEndMs - x.phases.controllerStartBeginMs,
          hand: x.phases.firstSyncBeginMs - x.phases.controllerStartEndMs,
          sync: x.firstSyncMs,
        }
      : {
          startup: x.phases.sourceBeginMs,
          source: x.phases.sourceEndMs - x.phases.sourceBeginMs,
          start: x.phases.controllerStartEndMs - x.phases.sourceEndMs,
          hand: x.phases.firstSyncBeginMs - x.phases.controllerStartEndMs,
          sync: x.firstSyncMs,
        };
  const cold = {
    total: med((x) => x.totalMs),
    ...Object.fromEntries(['startup', 'source', 'start', 'hand', 'sync'].map((key) => [key, med((x) => phasesOf(x, false)[key])])),
    cpu: med((x) => x.userUs + x.systemUs),
    messages: med((x) => traffic(x.netlink).messages),
    sendmsg: med((x) => traffic(x.netlink).sendmsg),
  };
  const api = r.apiserver;
  const apiCold = api && {
    total: api.totalMs,
    ...phasesOf(api, true),
    cpu: api.userUs + api.systemUs,
    messages: traffic(api.netlink).messages,
    sendmsg: traffic(api.netlink).sendmsg,
  };
  const k = m[m.length - 1].kernel;

  md.push('');
  md.push(`### 4. Controller cold start: ${n} Services x ${r.endpointsPerService} endpoints, from nothing to a programmed kernel`);
  md.push('');
  md.push(
    `The kube-proxy-ipvs binary (\`node kube-proxy-ipvs/dist/lib/cli/main.js --manifests DIR --netns ...\`, the YAML in ${Math.ceil(r.services / 100)} files) spawned on an empty network namespace, timed from spawn to the end of its first sync (bench/proxy-instrument.mjs, preloaded, reports when the controller's start and sync begin and end, with the sockets' counters); median of ${m.length} run(s). The same binary fed by the test API server (\`--master\`, kube-proxy-ipvs/test/support/fake-apiserver.ts, list + watch through client-node), 1 run. Afterwards the kernel holds, read with the reference tools, ${k.services.toLocaleString('en')} virtual servers and ${k.destinations.toLocaleString('en')} real servers (\`ipvsadm -Sn\`), ${k.ipsetEntries.toLocaleString('en')} ipset entries (\`ipset list -t\`: ${Object.entries(k.sets).filter(([, v]) => v).map(([s, v]) => `${s} ${v.toLocaleString('en')}`).join(', ')}) and ${k.addresses.toLocaleString('en')} addresses on kube-ipvs0 (\`ip addr\`), as planned.`,
  );
  md.push('');
  md.push(
    `The floor, in the same sandbox run (median of ${r.floor.length}), programs the same kernel state with nothing around it: the same ${(p.virtualServers + p.realServers).toLocaleString('en')} IPVS requests through bench/floor-probe (4096 per sendmsg, one ack per batch): ${f1(floor.ipvs)} ms; the ${p.sets} sets created and their ${p.ipsetEntries.toLocaleString('en')} entries loaded with Ipset.addMany (bench/ipset-floor.mjs, timed around the calls): ${f1(floor.ipset)} ms; the ${p.addresses.toLocaleString('en')} address binds through bench/address-probe (the library's RTM_NEWADDR, 4096 per sendmsg): ${f1(floor.addresses)} ms; one \`iptables-restore --noflush\` of the same rules: ${f1(floor.iptables)} ms. The probes and iptables-restore are timed with /usr/bin/time (10 ms resolution, process start included).`,
  );
  md.push('');
  md.push(`| | --manifests | --master (API server) | floor | --manifests / floor |`);
  md.push('|---|---:|---:|---:|---:|');
  const row = (label, a, b, fl, withRatio = false) =>
    md.push(`| ${label} | ${a === undefined ? '' : f1(a)} | ${b === undefined ? '' : f1(b)} | ${fl === undefined ? '' : f1(fl)} | ${withRatio && fl ? ratio(a / fl) : ''} |`);
  md.push('| (ms) | | | | |');
  row('**spawn to programmed**', cold.total, apiCold?.total, floor.total, true);
  row('node start, loading the modules', cold.startup, apiCold?.startup);
  row('reading the objects (manifests: the YAML; API server: importing client-node, listing, the iptables detection)', cold.source, apiCold?.source);
  row('iptables detection (manifests), controller start: adopting the empty kernel', cold.start, apiCold?.start);
  row('handing the objects to the controller (desired state)', cold.hand, apiCold?.hand);
  row('first sync', cold.sync, apiCold?.sync, floor.total, true);
  row('CPU of the process to that point, user+sys', cold.cpu / 1000, apiCold ? apiCold.cpu / 1000 : undefined, floor.cpu / 1000, true);
  md.push(`| netlink messages sent (start + first sync) | ${cold.messages.toLocaleString('en')} | ${apiCold ? apiCold.messages.toLocaleString('en') : ''} | ${floorMessages.toLocaleString('en')} | |`);
  md.push(`| sendmsg calls | ${cold.sendmsg} | ${apiCold ? apiCold.sendmsg : ''} | ${floorSendmsg} | |`);
  md.push('');
  const fs = m[m.length - 1].firstSync.netlink;
  md.push(`First sync's sockets (last run): IPVS ${fs.ipvs.messagesSent.toLocaleString('en')} messages in ${fs.ipvs.sendmsgCalls} sendmsg; ipset ${fs.ipset.messagesSent} messages in ${fs.ipset.sendmsgCalls}; rtnetlink ${fs.rtnl.messagesSent.toLocaleString('en')} in ${fs.rtnl.sendmsgCalls}. The first sync also runs iptables-save (which jumps are missing) before its iptables-restore, where the floor runs the restore alone; the iptables-save that records the result for later resyncs runs after the sync has ended.`);
  if (r.floor.every((x) => x.parseOnly && x.nodeStart)) {
    const start = median(r.floor.map((x) => x.nodeStart.wallMs));
    const parse = median(r.floor.map((x) => x.parseOnly.wallMs));
    md.push('');
    md.push(
      `What any Node program pays here before it programs anything (same run, same namespace as the floor, /usr/bin/time, median of ${r.floor.length}): \`node -e ''\` ${f1(start)} ms; starting, reading the same ${(2 * r.services).toLocaleString('en')} objects as JSON (${Math.ceil(r.services / 100)} files, no YAML) and \`JSON.parse\`-ing them, nothing checked or kept (bench/parse-floor.mjs): ${f1(parse)} ms. The 1.2x target leaves ${f1(0.2 * floor.total)} ms above the floor for all of the proxy's own work; that parse alone is ${ratio(parse / (0.2 * floor.total))} of it.`,
    );
  }
  md.push('');
  md.push('Targets:');
  md.push(`- spawn to programmed within 1.2x of the floor: ${target('controller cold start <= 1.2x floor', cold.total <= 1.2 * floor.total, `${ratio(cold.total / floor.total)} the whole floor; ${ratio(cold.total / floor.narrow)} the floor probe + addMany alone; the first sync alone ${ratio(cold.sync / floor.total)} the floor${apiCold ? `; from the API server ${ratio(apiCold.total / floor.total)}` : ''}`)}`);

  // --- 5 ---
  if (api?.changes?.length) {
    const ch = api.changes;
    const adds = ch.filter((c) => c.add), dels = ch.filter((c) => !c.add);
    const lat = (xs) => xs.map((c) => c.latencyMs);
    const tr = (c) => traffic(c.netlink);
    const maxOf = (xs, fn) => Math.max(...xs.map(fn));
    md.push('');
    md.push(`### 5. Controller incremental: one endpoint added or removed, ${n} services programmed`);
    md.push('');
    md.push(
      `The binary fed by the test API server (\`--master\`), after its cold start above; ${ch.length} changes, one at a time: an endpoint added to a service's EndpointSlice, then removed again (${adds.length} each, on ${new Set(ch.map((c, i) => i >> 1)).size} services spread over the cluster). Latency: from the test API server recording the change (it writes the watch event at once) to the end of the controller sync that programs it (every request acked by the kernel); each change is then read back from the kernel (listDestinations). --ipvs-min-sync-period is 0 (the default) and --ipvs-sync-period 1h, so no periodic resync runs among the changes (with the default 30s, a change that arrives during a resync waits for it; a resync of this size takes ${m[0].memory ? `${f1(median(m.map((x) => x.memory.resyncMs)))} ms here, see 6` : 'seconds'}). Messages and sendmsg calls: the sync's delta of the controller's socket counters (IPVS + ipset + rtnetlink).`,
    );
    md.push('');
    md.push('| | add an endpoint | remove an endpoint | all |');
    md.push('|---|---:|---:|---:|');
    md.push(`| changes | ${adds.length} | ${dels.length} | ${ch.length} |`);
    md.push(`| netlink messages per change (max) | ${maxOf(adds, (c) => tr(c).messages)} | ${maxOf(dels, (c) => tr(c).messages)} | ${maxOf(ch, (c) => tr(c).messages)} |`);
    md.push(`| sendmsg calls per change (max) | ${maxOf(adds, (c) => tr(c).sendmsg)} | ${maxOf(dels, (c) => tr(c).sendmsg)} | ${maxOf(ch, (c) => tr(c).sendmsg)} |`);
    md.push(`| latency, median (ms) | ${f1(median(lat(adds)))} | ${f1(median(lat(dels)))} | ${f1(median(lat(ch)))} |`);
    md.push(`| latency, 99th percentile (ms) | ${f1(percentile(lat(adds), 99))} | ${f1(percentile(lat(dels), 99))} | ${f1(percentile(lat(ch), 99))} |`);
    md.push(`| latency, max (ms) | ${f1(Math.max(...lat(adds)))} | ${f1(Math.max(...lat(dels)))} | ${f1(Math.max(...lat(ch)))} |`);
    md.push(`| of which until the sync starts, median (ms) | ${f1(median(adds.map((c) => c.toSyncStartMs)))} | ${f1(median(dels.map((c) => c.toSyncStartMs)))} | ${f1(median(ch.map((c) => c.toSyncStartMs)))} |`);
    md.push(`| of which the sync, median (ms) | ${f1(median(adds.map((c) => c.syncMs)))} | ${f1(median(dels.map((c) => c.syncMs)))} | ${f1(median(ch.map((c) => c.syncMs)))} |`);
    md.push('');
    md.push(
      'Until the sync starts: the watch event over HTTP, client-node\'s informer, the proxy handing the slice to the controller (which recomputes that one service) and the sync runner starting at once. The sync: planning the touched keys against the mirror and the netlink round trips; adding is one IPVS request (IPVS_CMD_NEW_DEST) in one sendmsg; removing a TCP endpoint sets it to weight 0 with a read of that virtual server\'s destinations behind it in the same sendmsg (graceful termination: IPVS_CMD_SET_DEST, then GET_SERVICE + GET_DEST dump for the connection counts, taken once nothing new can be scheduled to it), then deletes it at once because it has none (IPVS_CMD_DEL_DEST).',
    );
    const mc = m.flatMap((x) => x.manifestChanges ?? []);
    if (mc.length) {
      const bySync = mc.filter((c) => c.by === 'sync');
      md.push('');
      const each = mc.map((c) => `${f1(c.latencyMs)} ms = ${f1(c.toReloadMs)} to the reload (the watch and the 250 ms debounce) + ${f1(c.reloadMs)} reloading and diffing every manifest + ${f1(c.latencyMs - c.toReloadMs - c.reloadMs)} to the end of the ${c.by}`);
      md.push(
        `Through the manifests folder instead (the file holding the service rewritten and renamed into place; ${mc.length} changes, ${mc.filter((c) => c.add).length} of them adding an endpoint): ${each.join('; ')}. ManifestsSource looks at every file on any change, and re-reads and re-parses only the files (and, within them, the documents) that changed${bySync.length < mc.length ? `; ${mc.length - bySync.length} of the changes were programmed by a periodic resync that became due during the reload` : ''}.`,
      );
    }
    md.push('');
    md.push('Targets:');
    const maxMsg = maxOf(ch, (c) => tr(c).messages), maxSend = maxOf(ch, (c) => tr(c).sendmsg);
    md.push(`- at most 4 netlink messages per change: ${target('controller change <= 4 messages', maxMsg <= 4, `max ${maxMsg}`)}`);
    md.push(`- at most 2 sendmsg calls per change: ${target('controller change <= 2 sendmsg', maxSend <= 2, `max ${maxSend}`)}`);
    md.push(`- latency, median and 99th percentile: ${f1(median(lat(ch)))} ms and ${f1(percentile(lat(ch), 99))} ms (no target set)`);
  }

  // --- 6 ---
  const mem = m.filter((x) => x.memory);
  if (mem.length) {
    const rss = median(mem.map((x) => x.memory.rss));
    const peak = median(mem.map((x) => x.memory.peak));
    const settled = mem.every((x) => x.memory.settled) ? median(mem.map((x) => x.memory.settled.rss)) : undefined;
    const settledPeak = settled === undefined ? undefined : median(mem.map((x) => x.memory.settled.peak));
    const live = mem.every((x) => x.memory.afterCollection) ? median(mem.map((x) => x.memory.afterCollection.heapUsed)) : undefined;
    md.push('');
    md.push(`### 6. Memory: the proxy with ${n} x ${r.endpointsPerService} programmed`);
    md.push('');
    md.push(`VmRSS and VmHWM (peak) of the kube-proxy-ipvs process (/proc/PID/status) around its first periodic resync (a full kernel read-back: ${f1(median(mem.map((x) => x.memory.resyncMs)))} ms, ${median(mem.map((x) => x.memory.resyncPlanned))} operations needed): one second after it, and settled, in the idle stretch just before the next one (--ipvs-sync-period ${mem[0].memory.syncPeriod ?? '30s'}), where the proxy spends most of its time; median of ${mem.length} run(s). The proxy collects garbage at the end of bulk work (a cold start, a big resync: kube-proxy-ipvs/lib/proxy/heap.ts)${live === undefined ? '' : `; right after that collection the JS heap holds ${mib(live)} MiB`}.`);
    md.push('');
    md.push('| process | RSS (MiB) | peak RSS (MiB) |');
    md.push('|---|---:|---:|');
    if (settled !== undefined) md.push(`| --manifests, settled before the next resync | ${mib(settled)} | ${mib(settledPeak)} |`);
    md.push(`| --manifests, one second after the first resync | ${mib(rss)} | ${mib(peak)} |`);
    md.push(`| --manifests, at the end of the first sync | ${mib(med((x) => x.rssAtFirstSync))} | ${mib(med((x) => x.maxRssAtFirstSync))} |`);
    if (api?.memoryAfterChanges) md.push(`| --master (API server), after the ${api.changes.length} changes (no resync) | ${mib(api.memoryAfterChanges.rss)} | ${mib(api.memoryAfterChanges.peak)} |`);
    md.push('');
    const judged = settled ?? rss;
    md.push(`Target at most 200 MB (${mib(TARGET_BYTES)} MiB) resident, judged ${settled === undefined ? 'one second after the resync (no settled reading in these results)' : 'settled'}: ${target('proxy RSS <= 200 MB', judged <= TARGET_BYTES, `${settled === undefined ? '' : `${mib(settled)} MiB settled; `}${mib(rss)} MiB one second after the resync${rss <= TARGET_BYTES ? '' : ' (over)'}; peak ${mib(Math.max(peak, settledPeak ?? 0))} MiB${Math.max(peak, settledPeak ?? 0) <= TARGET_BYTES ? '' : ' (over)'}`)}`);
  }
  return md;
}
