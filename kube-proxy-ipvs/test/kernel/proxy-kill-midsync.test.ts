/**
 * The proxy SIGKILLed in the middle of a large sync, then started again,
 * converges to `plan` without flushing: the kernel is left half-programmed
 * (checked: it differs from the plan), the restarted proxy adds exactly
 * what is missing (its netlink operation counters equal the difference
 * ipvsadm and ip addr show, with no deletion), ipvsadm -Sn, ipset save,
 * ip addr show kube-ipvs0 and iptables-save then equal the plan's output
 * for the same manifests, and an established connection to a Service that
 * did not change keeps working on the same backend throughout.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { Ipset, Ipvs } from 'ipvs-netlink';
import { kubeIpsets, kubeIpvs0Addresses } from '../support/controller-kernel.js';
import { keepAliveClient, netlinkOps, NODE_YAML, proxyNode, serviceYaml, sliceYaml, startProxy, writeManifest } from '../support/proxy-env.js';
import { kernelMatchesPlan, planIpvsadm, runPlan } from '../support/proxy-plan.js';

/** Services in the large edit: big enough that programming them takes a while in the sandbox. */
const N = Number(process.env.KILL_MIDSYNC_SERVICES ?? 1000);

/** How long the proxy runs between two looks at the kernel: a small part of the large sync. */
const SLICE_MS = 5;

/** Resolves once every thread of `pid` is stopped, so nothing of it is still in the kernel. */
async function untilStopped(pid: number): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    const states = readdirSync(`/proc/${pid}/task`).map((tid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      } catch {
        return 'T'; // the thread ended
      }
    });
    if (states.every((s) => s === 'T' || s === 't')) return;
    if (Date.now() > end) throw new Error(`pid ${pid} did not stop within 10 s (thread states ${states.join('')})`);
    await sleep(1);
  }
}

async function anyExists(ipvs: Ipvs, probes: Parameters<Ipvs['getService']>[0][]): Promise<boolean> {
  for (const probe of probes) if (await ipvs.getService(probe)) return true;
  return false;
}

/** Whether any of these ClusterIP entries is in KUBE-CLUSTER-IP yet (the set exists from the proxy's start). */
async function anyInClusterIpSet(ipset: Ipset, entries: string[]): Promise<boolean> {
  for (const entry of entries) if (await ipset.test('KUBE-CLUSTER-IP', entry)) return true;
  return false;
}

function bigManifest(n: number): string {
  const docs: string[] = [];
  for (let i = 1; i <= n; i++) {
    const ip = `10.97.${i >> 8}.${i & 255}`;
    // Every fourth is a NodePort: NodePort virtual servers and bitmap entries too.
    docs.push(serviceYaml(`bulk-${i}`, ip, i % 4 === 0 ? 30100 + i : undefined));
    docs.push(sliceYaml(`bulk-${i}`, [{ ip: `10.244.3.${(i % 250) + 1}`, node: 'node-b' }, { ip: `10.244.4.${(i % 250) + 1}`, node: 'node-b' }]));
  }
  return docs.join('---\n');
}

t.test('SIGKILL in the middle of a large sync; the restarted proxy converges to plan without flushing', async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  await env.backend('10.244.2.11', 'web-2');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10', 30080));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }, { ip: '10.244.2.11' }]));
  const first = await startProxy(t, env, ['--manifests', env.dir]);
  const ask = keepAliveClient(t, env, '10.96.0.10');
  const before = await ask();
  t.match(before, { body: /^web-\d/ }, 'an established connection through the unchanged ClusterIP');

  // The large edit. The planner adds the sets' entries (one request per set), then every virtual
  // and real server, then binds the addresses. A kill can only land between two system calls: the
  // kernel carries out each sendmsg whole (here one holds all the IPVS additions). Polling the kernel
  // while the proxy runs is a race the proxy can win: on one CPU the poller may not be scheduled
  // again before the whole sync is over (CI saw that). So the proxy runs in short slices and is
  // frozen (SIGSTOP) between them; each look sees the kernel exactly as the proxy left it, and the
  // first look that finds any of the edit programmed, a set entry or a virtual server, is where the
  // kill lands. Looking for virtual servers alone was not enough: a slice (the sandbox's timer ticks
  // make it longer than asked) could hold the IPVS additions and the address binds both.
  const ipvs = await Ipvs.open({ netns: env.node.path });
  t.teardown(() => ipvs.close());
  const ipset = await Ipset.open({ netns: env.node.path });
  t.teardown(() => ipset.close());
  const probes = [1, 2, 3, 5, 8].map((i) => ({ protocol: 'tcp' as const, address: `10.97.0.${i}`, port: 80 }));
  const entries = probes.map((p) => `${p.address},tcp:80`);
  const pid = first.child.pid!;
  writeManifest(env, 'bulk.yaml', bigManifest(N));
  const started = Date.now();
  for (;;) {
    if (Date.now() - started > 180_000) throw new Error('the large sync did not start within 180 s');
    await sleep(SLICE_MS);
    process.kill(pid, 'SIGSTOP');
    await untilStopped(pid);
    if ((await anyInClusterIpSet(ipset, entries)) || (await anyExists(ipvs, probes))) break;
    process.kill(pid, 'SIGCONT');
  }
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  const plan = await runPlan(env.dir);
  const expected = planIpvsadm(plan);
  const afterKill = await env.ipvsSave();
  const boundAfterKill = (await kubeIpvs0Addresses(env.node)) ?? [];
  const missing = expected.filter((l) => !afterKill.includes(l));
  const missingAddresses = plan.boundAddresses.filter((a) => !boundAfterKill.includes(a));
  const setsAfterKill = await kubeIpsets(env.node);
  // The applier adds each set's missing entries in one operation.
  const setsMissingEntries = Object.entries(plan.ipsets).filter(([name, set]) => set.entries.some((e) => !(setsAfterKill[name] ?? []).includes(e))).length;
  t.comment(`killed ${Date.now() - started} ms after the edit: ${afterKill.length} of ${expected.length} ipvsadm lines, ${boundAfterKill.length} of ${plan.boundAddresses.length} addresses`);
  t.ok(missing.length > 0 || missingAddresses.length > 0, 'the kill left the kernel half-programmed');
  t.same(afterKill.filter((l) => !expected.includes(l)), [], 'nothing there that the plan does not want');
  t.same(await ask(), { body: before.body, port: before.port, reused: true }, 'the connection works with no proxy running');

  const second = await startProxy(t, env, ['--manifests', env.dir]);
  await kernelMatchesPlan(t, env.node, plan, 'after the restart');
  t.same(
    await netlinkOps(second),
    { 'ipvs ok': missing.length, 'ipvs error': 0, 'ipset ok': setsMissingEntries, 'ipset error': 0, 'rtnl ok': missingAddresses.length, 'rtnl error': 0 },
    `the restarted proxy added exactly the ${missing.length} missing virtual/real servers, ${missingAddresses.length} addresses and the entries of ${setsMissingEntries} sets: nothing flushed, nothing re-added`,
  );
  t.same(await ask(), { body: before.body, port: before.port, reused: true }, 'same connection, same backend after the restart');
  t.equal(await second.stop(), 0);
});
