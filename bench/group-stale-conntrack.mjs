/**
 * Benchmark group "stale-conntrack" (benchmark 7): the proxy's stale UDP
 * conntrack cleanup beside kube-proxy's way and the conntrack tool's, on
 * the host kernel (bench/stale-conntrack.mjs; conntrack over netlink needs
 * no IPVS). Results: bench/results/stale-conntrack[-small].json.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { f1, median, ratio } from './report-format.mjs';

const fileOf = (ctx) => path.join(ctx.results, `stale-conntrack${ctx.suffix}.json`);

export default {
  name: 'stale-conntrack',
  covers: 'benchmark 7',
  files: (ctx) => [fileOf(ctx)],
  run(ctx) {
    const cfg = ctx.size['stale-conntrack'];
    ctx.say(`stale conntrack cleanup: ${cfg.services} UDP services, ${cfg.runs} run(s)`);
    ctx.run(process.execPath, ['bench/stale-conntrack.mjs', '--services', String(cfg.services), '--runs', String(cfg.runs), '--out', fileOf(ctx)]);
    ctx.expectWritten(fileOf(ctx));
  },
  report(ctx) {
    return existsSync(fileOf(ctx)) ? table(JSON.parse(readFileSync(fileOf(ctx), 'utf8'))) : [];
  },
};

const n = (x) => (x === undefined ? '—' : Math.round(x).toLocaleString('en'));

/** The section's lines, from the JSON bench/stale-conntrack.mjs wrote. */
function table(r) {
  const cols = [r.oursAll, r.oursChanged, r.kubeProxy];
  const m = (fn) => cols.map((runs) => median(runs.map(fn)));
  const tool = r.tool;
  const toolSend = (tool.calls.sendto ?? 0) + (tool.calls.sendmsg ?? 0);
  const toolRecv = (tool.calls.recvfrom ?? 0) + (tool.calls.recvmsg ?? 0);
  const wall = [...m((x) => x.wallMs), tool.wallMs];
  const row = (label, values) => `| ${label} | ${values.join(' | ')} |`;
  const md = [];
  md.push('');
  md.push(`### 7. Stale UDP conntrack cleanup: ${r.services.toLocaleString('en')} UDP services, ${r.entries.toLocaleString('en')} conntrack entries (host kernel ${r.kernel})`);
  md.push('');
  md.push(
    `\`bench/stale-conntrack.mjs\`: each service a ClusterIP:53 with two serving endpoints and ${r.udpPerService} UDP client entries, plus one TCP entry ` +
      `(never to be touched); in ${r.changedServices.toLocaleString('en')} services an endpoint was removed and a third of their entries still point at it: ` +
      `${r.stale.toLocaleString('en')} stale entries. The entries are made by \`conntrack -R\` in a fresh network namespace for each run, and after each run ` +
      '`conntrack -L` shows exactly the stale ones gone. The proxy\'s cleaner (`StaleConntrackCleaner`, its socket already open) is given every UDP service ' +
      '(after a start or a resync) or only the changed ones (an ordinary sync); kube-proxy\'s way (`bench/kube-proxy-conntrack-cleanup.c`: `CleanStaleEntries` ' +
      'with the netlink library it links, every request on a socket of its own) looks at every service on every sync; the conntrack tool runs once per ' +
      `removed endpoint of a changed service (${tool.processes.toLocaleString('en')} processes; ` +
      `${tool.sampled === tool.processes ? 'timed, then run again under `strace -f -c` for their system calls' : `the first ${tool.sampled} timed, then run again under \`strace -f -c\` for their system calls, both scaled to all ${tool.processes.toLocaleString('en')}: each reads the same whole table`}). ` +
      `Median of ${r.runs} run(s); the tool's loop once.` +
      (r.loadAverage ? ` The machine's load average was ${r.loadAverage.start.toFixed(1)} when the runs began and ${r.loadAverage.end.toFixed(1)} when they ended, on ${r.cores} cores: wall times stretch with it, CPU times far less.` : ''),
  );
  md.push('');
  md.push("| | the proxy's cleaner, every service | the proxy's cleaner, changed services only | kube-proxy's way | `conntrack -D` per removed endpoint |");
  md.push('|---|---:|---:|---:|---:|');
  md.push(row('wall time (ms)', wall.map(f1)));
  md.push(row('CPU (ms)', [...m((x) => x.cpuMs).map(f1), '—']));
  md.push(row('table dumps', [1, 1, 2, tool.processes].map(n)));
  // kube-proxy's: every message received but each request's ack or end of dump.
  md.push(row('entries read from the kernel', [median(r.oursAll.map((x) => x.listed)), median(r.oursChanged.map((x) => x.listed)), median(r.kubeProxy.map((x) => x.messagesReceived - x.sockets)), undefined].map(n)));
  md.push(row('netlink messages sent', [...m((x) => x.messagesSent), toolSend].map(n)));
  md.push(row('netlink messages received', [...m((x) => x.messagesReceived), undefined].map(n)));
  md.push(row('send system calls (sendmsg / sendto)', [...cols.slice(0, 2).map((runs) => median(runs.map((x) => x.sendmsgCalls))), median(r.kubeProxy.map((x) => x.sendtoCalls)), toolSend].map(n)));
  md.push(row('receive system calls', [...cols.slice(0, 2).map((runs) => median(runs.map((x) => x.recvCalls))), median(r.kubeProxy.map((x) => x.recvfromCalls)), toolRecv].map(n)));
  md.push(row('sockets opened', [0, 0, median(r.kubeProxy.map((x) => x.sockets)), tool.calls.socket].map(n)));
  md.push(row('entries deleted', [...m((x) => x.deleted), r.stale].map(n)));
  md.push('');
  const cpu = m((x) => x.cpuMs);
  md.push(
    `Given all ${r.services.toLocaleString('en')} services or only the ${r.changedServices.toLocaleString('en')} changed ones, the cleaner sends the same: ` +
      `one dump request and the deletes in one batch, ${n(median(r.oursAll.map((x) => x.sendmsgCalls)))} sendmsg calls in all; its time is that of reading ` +
      `the UDP entries, not of the number of services. kube-proxy's way takes ${ratio(wall[2] / wall[0])} its wall time and ${ratio(cpu[2] / cpu[0])} its CPU: ` +
      'it reads the whole table twice (TCP included), tries every filter against every entry, and deletes one entry per socket. ' +
      `The tool's way takes ${ratio(wall[3] / wall[0])} its wall time: a process and a read of the whole table per removed endpoint.`,
  );
  return md;
}
