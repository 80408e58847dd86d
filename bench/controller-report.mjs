/**
 * The BENCHMARKS.md tables of benchmarks 4-6 (bench/controller.mjs's JSON,
 * one result per sandbox kernel at the headline size), one column (or
 * group of columns) per sandbox.
 */
import { controllerFigures } from './controller-figures.mjs';
import { cell, count, f1, mib, ratio } from './report-format.mjs';
import { kernelLabel, SANDBOXES } from './sandboxes.mjs';

/** Targets of issue 19 for the proxy. */
const COLD_VS_FLOOR = 2;
const RSS_BYTES = 128 * 2 ** 20;
const P99_MS = 10;
const MAX_MESSAGES = 4;
const MAX_SENDMSG = 2;

/** results: { sandbox: bench/controller.mjs result } at one size. */
export function controllerTables(results, { targetIn }) {
  const sbs = Object.keys(results);
  const fig = Object.fromEntries(sbs.map((sb) => [sb, controllerFigures(results[sb])]));
  const r0 = results[sbs[0]];
  // Each kernel's headline size (the proxy runs smaller under QEMU's emulation): named in its columns when they differ.
  const sameSize = sbs.every((sb) => results[sb].services === r0.services);
  const label = (sb) => `${kernelLabel(sb, results[sb])}${sameSize ? '' : `, ${count(results[sb].services)} Services`}`;
  const short = (sb) => SANDBOXES[sb].label;
  const n = sameSize ? count(r0.services) : sbs.map((sb) => `${count(results[sb].services)} (${short(sb)})`).join(' / ');
  const md = [];

  // --- 4 ---
  const x0 = fig[sbs[0]];
  md.push('');
  md.push(`### 4. Controller cold start: ${n} Services x ${r0.endpointsPerService} endpoints, from nothing to a programmed kernel`);
  md.push('');
  md.push(`The kube-proxy-ipvs binary (\`node kube-proxy-ipvs/dist/lib/cli/main.js --manifests DIR --netns ...\`, the YAML in files of 100 Services each) spawned on an empty network namespace, timed from spawn to the end of its first sync (bench/proxy-instrument.mjs, preloaded, reports when the controller's start and sync begin and end, with the sockets' counters); median of ${sbs.map((sb) => `${fig[sb].cold.runs} (${short(sb)})`).join(', ')} run(s). The same binary fed by the test API server (\`--master\`, kube-proxy-ipvs/test/support/fake-apiserver.ts, list + watch through client-node), 1 run. Afterwards the kernel holds (${short(sbs[0])}, ${count(r0.services)} Services), read with the reference tools, ${count(x0.kernel.services)} virtual servers and ${count(x0.kernel.destinations)} real servers (\`ipvsadm -Sn\`), ${count(x0.kernel.ipsetEntries)} ipset entries (\`ipset list -t\`) and ${count(x0.kernel.addresses)} addresses on kube-ipvs0 (\`ip addr\`), as planned.`);
  md.push('');
  md.push(`The floor, in the same sandbox run, programs the same kernel state with nothing around it: the same ${count(r0.plan.virtualServers + r0.plan.realServers)} IPVS requests through bench/floor-probe (4096 per sendmsg, one ack per batch); the ${r0.plan.sets} sets created and their ${count(r0.plan.ipsetEntries)} entries loaded with Ipset.addMany (bench/ipset-floor.mjs, timed around the calls); the ${count(r0.plan.addresses)} address binds through bench/address-probe (the library's RTM_NEWADDR, 4096 per sendmsg); one \`iptables-restore --noflush\` of the same rules. The probes and iptables-restore are timed with /usr/bin/time (10 ms resolution, process start included).`);
  md.push('');
  const cols = sbs.flatMap((sb) => [`${label(sb)}: --manifests`, '--master', 'floor']);
  md.push(`| (ms) | ${cols.join(' | ')} |`);
  md.push(`|---|${cols.map(() => '---:').join('|')}|`);
  const row = (name, fn) => md.push(`| ${name} | ${sbs.flatMap((sb) => fn(fig[sb])).map((v) => (typeof v === 'number' ? f1(v) : v ?? '')).join(' | ')} |`);
  row('**spawn to programmed**', (x) => [x.cold.total, x.apiCold?.total, x.floor.total]);
  row('**÷ floor**', (x) => [`**${ratio(x.cold.total / x.floor.total)}**`, x.apiCold ? `**${ratio(x.apiCold.total / x.floor.total)}**` : '', '']);
  row('node start, loading the modules', (x) => [x.cold.startup, x.apiCold?.startup, x.floor.nodeStart === undefined ? '' : `node -e '': ${f1(x.floor.nodeStart)}`]);
  row('reading the objects (manifests: the YAML; API server: importing client-node, listing, the iptables detection)', (x) => [x.cold.source, x.apiCold?.source, x.floor.parseOnly === undefined ? '' : `JSON.parse only: ${f1(x.floor.parseOnly)}`]);
  row('iptables detection (manifests), controller start: adopting the empty kernel', (x) => [x.cold.start, x.apiCold?.start, '']);
  row('handing the objects to the controller (desired state)', (x) => [x.cold.hand, x.apiCold?.hand, '']);
  row('first sync', (x) => [x.cold.sync, x.apiCold?.sync, x.floor.total]);
  row('of the floor: IPVS / ipset / addresses / iptables', (x) => ['', '', `${f1(x.floor.ipvs)} / ${f1(x.floor.ipset)} / ${f1(x.floor.addresses)} / ${f1(x.floor.iptables)}`]);
  row('CPU of the process to that point, user+sys', (x) => [x.cold.cpu / 1000, x.apiCold ? x.apiCold.cpu / 1000 : '', x.floor.cpu / 1000]);
  row('netlink messages sent (start + first sync)', (x) => [count(x.cold.messages), x.apiCold ? count(x.apiCold.messages) : '', count(x.floor.messages)]);
  row('sendmsg calls', (x) => [String(x.cold.sendmsg), x.apiCold ? String(x.apiCold.sendmsg) : '', String(x.floor.sendmsg)]);
  md.push('');
  md.push(`"node start": from spawn until the proxy's modules are loaded. \`node -e ''\` and "JSON.parse only" (bench/parse-floor.mjs: start, read the same ${count(2 * r0.services)} objects as JSON, parse them, nothing checked or kept) are not part of the floor: they show what any Node program pays before it programs anything, in the same namespace as the floor. The first sync also runs iptables-save (which jumps are missing) before its iptables-restore, where the floor runs the restore alone.`);
  md.push('');
  md.push('Targets:');
  md.push(`- spawn to programmed within ${COLD_VS_FLOOR}x the floor in user-mode-linux, from manifests: ${targetIn('controller cold start (manifests) <= 2x floor in UML', sbs.filter((sb) => sb === 'uml').map((sb) => ({ label: short(sb), ok: fig[sb].cold.total <= COLD_VS_FLOOR * fig[sb].floor.total, detail: ratio(fig[sb].cold.total / fig[sb].floor.total) })), ['user-mode-linux'])}`);
  md.push(`- the same from the API server: ${targetIn('controller cold start (API server) <= 2x floor in UML', sbs.filter((sb) => sb === 'uml' && fig[sb].apiCold).map((sb) => ({ label: short(sb), ok: fig[sb].apiCold.total <= COLD_VS_FLOOR * fig[sb].floor.total, detail: ratio(fig[sb].apiCold.total / fig[sb].floor.total) })), ['user-mode-linux'])}`);
  for (const sb of sbs.filter((s) => s !== 'uml')) {
    const x = fig[sb];
    md.push(`- in ${short(sb)} (reported, no target): ${ratio(x.cold.total / x.floor.total)} the floor from manifests${x.apiCold ? `, ${ratio(x.apiCold.total / x.floor.total)} from the API server` : ''}; of the ${f1(x.cold.total)} ms from manifests, node's start ${f1(x.cold.startup)}, the YAML ${f1(x.cold.source)}, handing over ${f1(x.cold.hand)}, the first sync ${f1(x.cold.sync)} (the floor ${f1(x.floor.total)})`);
  }

  // --- 5 ---
  const withChanges = sbs.filter((sb) => fig[sb].changes);
  if (withChanges.length) {
    const c0 = fig[withChanges[0]].changes;
    md.push('');
    md.push(`### 5. Controller incremental: one endpoint added or removed, ${n} services programmed`);
    md.push('');
    md.push(`The binary fed by the test API server (\`--master\`), after its cold start above; ${c0.all.n} changes, one at a time: an endpoint added to a service's EndpointSlice, then removed again (on ${c0.services} services spread over the cluster). Latency: from the test API server recording the change (it writes the watch event at once) to the end of the controller sync that programs it (every request acked by the kernel); each change is then read back from the kernel (listDestinations). --ipvs-sync-period 1h, so no periodic resync runs among the changes, and --ipvs-min-sync-period 0s: the proxy's own reaction is measured, not its rate limit (by default, as upstream's, it syncs IPVS at most once a second, and each change here follows the previous sync at once, so it would wait out the rest of that second). Messages and sendmsg calls: the sync's delta of the controller's socket counters (IPVS + ipset + rtnetlink). Cells: add / remove / all.`);
    md.push('');
    md.push(`| | ${withChanges.map(label).join(' | ')} |`);
    md.push(`|---|${withChanges.map(() => '---:').join('|')}|`);
    // A row of add / remove / all cells from fig[sb][of] (the proxy's changes, or the floor's), empty where a sandbox has none.
    const crow = (name, key, fmt = f1, of = 'changes') => md.push(`| ${name} | ${withChanges.map((sb) => (fig[sb][of] ? ['add', 'remove', 'all'].map((k) => fmt(fig[sb][of][k][key])).join(' / ') : '')).join(' | ')} |`);
    crow('changes', 'n', String);
    crow('netlink messages per change (max)', 'maxMessages', String);
    crow('sendmsg calls per change (max)', 'maxSendmsg', String);
    crow('latency, median (ms)', 'median');
    crow('latency, 99th percentile (ms)', 'p99');
    crow('latency, max (ms)', 'max');
    crow('of which until the sync starts, median (ms)', 'toSyncStart');
    crow('of which the sync, median (ms)', 'sync');
    const withFloor = withChanges.filter((sb) => fig[sb].changeFloor);
    if (withFloor.length) {
      crow('the floor: latency, median (ms)', 'median', f1, 'changeFloor');
      crow('the floor: latency, 99th percentile (ms)', 'p99', f1, 'changeFloor');
      crow('the floor: latency, max (ms)', 'max', f1, 'changeFloor');
    }
    md.push('');
    md.push('Until the sync starts: the watch event over HTTP, the proxy\'s informer (its watch stream and parsing), the proxy handing the slice to the controller (which recomputes that one service) and the sync runner starting at once. The sync: planning the touched keys against the mirror and the netlink round trips; adding is one IPVS request (IPVS_CMD_NEW_DEST) in one sendmsg; removing a TCP endpoint sets it to weight 0 with a read of that virtual server\'s destinations behind it in the same sendmsg (graceful termination: IPVS_CMD_SET_DEST, then GET_SERVICE + GET_DEST dump for the connection counts, taken once nothing new can be scheduled to it), then deletes it at once because it has none (IPVS_CMD_DEL_DEST).');
    if (withFloor.length) {
      md.push('');
      md.push("The floor: the same changes made again once the proxy has stopped (it leaves the kernel programmed), programmed by bench/change-floor.mjs, the least a Node.js program does for them: it watches the same API server's EndpointSlices and, for each change, sends the same kernel requests as the proxy (add: one request; remove: weight 0 with the read behind it, then the delete), through this library, with nothing else (no informer cache, desired state, plan or rules). Timed and read back the same way: what a proxy written in Node.js on this library cannot avoid paying for a change in that kernel (single runs of both vary, so at the 99th percentile the floor is not always the lower).");
    }
    for (const sb of withChanges) {
      const mc = fig[sb].manifestChanges;
      if (!mc.length) continue;
      const each = mc.map((c) => `${f1(c.latencyMs)} ms = ${f1(c.toReloadMs)} to the reload (the watch and the 250 ms debounce) + ${f1(c.reloadMs)} reloading and diffing every manifest + ${f1(c.latencyMs - c.toReloadMs - c.reloadMs)} to the end of the ${c.by}`);
      md.push('');
      md.push(`Through the manifests folder instead (${short(sb)}; the file holding the service rewritten and renamed into place; ${mc.length} changes): ${each.join('; ')}. ManifestsSource re-reads and re-parses only the files (and, within them, the documents) that changed.`);
    }
    md.push('');
    md.push('Targets:');
    const each = (key, limit) => withChanges.map((sb) => ({ label: short(sb), ok: fig[sb].changes.all[key] <= limit, detail: `max ${fig[sb].changes.all[key]}` }));
    md.push(`- at most ${MAX_MESSAGES} netlink messages per change: ${targetIn('controller change <= 4 messages', each('maxMessages', MAX_MESSAGES), withChanges.map(short))}`);
    md.push(`- at most ${MAX_SENDMSG} sendmsg calls per change: ${targetIn('controller change <= 2 sendmsg', each('maxSendmsg', MAX_SENDMSG), withChanges.map(short))}`);
    md.push(`- 99th-percentile latency at most ${P99_MS} ms on a quiet machine, in user-mode-linux (where user code runs near native speed; QEMU-TCG's is reported): ${targetIn('controller change p99 <= 10 ms in UML', withChanges.filter((sb) => sb === 'uml').map((sb) => ({ label: short(sb), ok: fig[sb].changes.all.p99 <= P99_MS, detail: `${f1(fig[sb].changes.all.p99)} ms, median ${f1(fig[sb].changes.all.median)} ms` })), ['user-mode-linux'])}${withFloor.map((sb) => `; the floor in ${short(sb)}: ${f1(fig[sb].changeFloor.all.p99)} ms, median ${f1(fig[sb].changeFloor.all.median)} ms`).join('')}${withChanges.filter((sb) => sb !== 'uml').map((sb) => `; ${short(sb)}: ${f1(fig[sb].changes.all.p99)} ms, median ${f1(fig[sb].changes.all.median)} ms`).join('')}`);
  }

  // --- 6 ---
  const withMem = sbs.filter((sb) => fig[sb].memory);
  if (withMem.length) {
    const m0 = fig[withMem[0]].memory;
    md.push('');
    md.push(`### 6. Memory: the proxy with ${n} x ${r0.endpointsPerService} programmed`);
    md.push('');
    md.push(`VmRSS and VmHWM (peak) of the kube-proxy-ipvs process (/proc/PID/status) around its first periodic resync (a full kernel read-back, ${withMem.map((sb) => `${f1(fig[sb].memory.resyncMs)} ms in ${short(sb)}`).join(', ')}; ${m0.resyncPlanned} operations needed): one second after it, and settled, in the idle stretch just before the next one (--ipvs-sync-period ${m0.syncPeriod}), where the proxy spends most of its time. The proxy collects garbage at the end of bulk work (a cold start, a big resync: kube-proxy-ipvs/lib/proxy/heap.ts). MiB, RSS (peak):`);
    md.push('');
    md.push(`| process | ${withMem.map(label).join(' | ')} |`);
    md.push(`|---|${withMem.map(() => '---:').join('|')}|`);
    const mrow = (name, fn) => md.push(`| ${name} | ${withMem.map((sb) => fn(fig[sb].memory) ?? '').join(' | ')} |`);
    const pair = (a, b) => (a === undefined ? undefined : `${mib(a)} (${mib(b)})`);
    mrow('--manifests, settled before the next resync', (x) => pair(x.settled, x.settledPeak));
    mrow('--manifests, one second after the first resync', (x) => pair(x.rss, x.peak));
    mrow('--manifests, at the end of the first sync', (x) => pair(x.atFirstSync, x.peakAtFirstSync));
    mrow('JS heap right after the collection', (x) => (x.live === undefined ? undefined : mib(x.live)));
    mrow('--master (API server), after the changes (no resync)', (x) => (x.afterChanges ? pair(x.afterChanges.rss, x.afterChanges.peak) : undefined));
    mrow('--master (API server), settled after the changes', (x) => (x.apiSettled ? pair(x.apiSettled.rss, x.apiSettled.peak) : undefined));
    md.push(`| for scale: \`node -e ''\` / JSON.parse of the objects only, peak | ${withMem.map((sb) => (fig[sb].floor.nodeStartRss ? `${mib(fig[sb].floor.nodeStartRss)} / ${mib(fig[sb].floor.parseOnlyRss)}` : '')).join(' | ')} |`);
    md.push('');
    md.push(`Target at most 128 MiB resident, settled, wherever measured: ${targetIn('proxy RSS <= 128 MiB', withMem.map((sb) => { const x = fig[sb].memory; const judged = x.settled ?? x.rss; return { label: short(sb), ok: judged <= RSS_BYTES, detail: `${mib(judged)} MiB${x.settled === undefined ? ' one second after the resync' : ' settled'}; peak ${mib(Math.max(x.peak, x.settledPeak ?? 0))}` }; }), withMem.map(short))}`);
  }
  return md;
}
