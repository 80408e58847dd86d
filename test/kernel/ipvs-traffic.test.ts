/**
 * Real packets through a virtual service the library created: a client
 * namespace reaches HTTP backends in two other namespaces through a router
 * namespace where IPVS masquerades (NAT). Then the counters that traffic
 * leaves (stats, rates, persistent connections) are compared with what
 * ipvsadm prints for the same kernel.
 *
 *   client 192.168.10.2 ── 192.168.10.1 router (VIP 10.10.10.10 on lo) 192.168.21.1 ── 192.168.21.2 be1
 *                                                                     192.168.22.1 ── 192.168.22.2 be2
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { Ipvs } from '../../lib/index.js';
import { type Netns, freshNetns, vethLink } from '../support/netns.js';
import { parseIpvsadmList, splitHostPort } from '../support/fixtures.js';
import type { ServiceWithDestinations, Stats } from '../../lib/index.js';

const VIP = '10.10.10.10';

const SERVER = `
const name = process.argv[1];
require('http').createServer((req, res) => res.end(name)).listen(8080, '0.0.0.0', () => console.log('listening'));
`;

/** Starts an HTTP server answering its name; killed when the test ends. */
async function startServer(t: { teardown(fn: () => unknown): void }, ns: Netns, name: string): Promise<ChildProcess> {
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', SERVER, name], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    }
  });
  // `ip netns exec` execs the program, so the child is node itself.
  let out = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => (out += d));
  for (let i = 0; i < 300 && !out.includes('listening'); i++) {
    if (child.exitCode !== null) throw new Error(`${name} server exited with ${child.exitCode}`);
    await sleep(50);
  }
  if (!out.includes('listening')) throw new Error(`${name} server did not start`);
  return child;
}

/** Router, client and two backends serving HTTP on 8080, wired as drawn above. */
async function topology(t: { teardown(fn: () => unknown): void }) {
  const router = await freshNetns(t, 'rtr');
  const client = await freshNetns(t, 'cli');
  const be1 = await freshNetns(t, 'be1');
  const be2 = await freshNetns(t, 'be2');

  await vethLink(router, 'rc', '192.168.10.1/24', client, 'c0', '192.168.10.2/24');
  await vethLink(router, 'rb1', '192.168.21.1/24', be1, 'b0', '192.168.21.2/24');
  await vethLink(router, 'rb2', '192.168.22.1/24', be2, 'b0', '192.168.22.2/24');
  await client.exec('ip', ['route', 'add', 'default', 'via', '192.168.10.1']);
  await be1.exec('ip', ['route', 'add', 'default', 'via', '192.168.21.1']);
  await be2.exec('ip', ['route', 'add', 'default', 'via', '192.168.22.1']);
  await router.exec('ip', ['addr', 'add', `${VIP}/32`, 'dev', 'lo']);
  await router.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);

  await startServer(t, be1, 'be1');
  await startServer(t, be2, 'be2');
  return { router, client };
}

t.test('a client reaches both backends through a masquerading virtual service', async (t) => {
  const { router, client } = await topology(t);
  const ipvs = await Ipvs.open({ netns: router.path });
  t.teardown(() => ipvs.close());
  const svc = { protocol: 'tcp', address: VIP, port: 80 } as const;
  await ipvs.addService({ ...svc, scheduler: 'rr' });
  await ipvs.addDestination(svc, { address: '192.168.21.2', port: 8080, forward: 'masq' });
  await ipvs.addDestination(svc, { address: '192.168.22.2', port: 8080, forward: 'masq' });
  t.same(
    (await router.exec('ipvsadm', ['-Sn'])).trim().split('\n').sort(),
    ['-A -t 10.10.10.10:80 -s rr', '-a -t 10.10.10.10:80 -r 192.168.21.2:8080 -m -w 1', '-a -t 10.10.10.10:80 -r 192.168.22.2:8080 -m -w 1'],
    'ipvsadm shows the service the library made',
  );

  const answers: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await client.tryExec('curl', ['-s', '--max-time', '10', `http://${VIP}:80/`]);
    answers.push(r.code === 0 ? r.stdout : `curl exit ${r.code}`);
  }
  const count = (name: string) => answers.filter((a) => a === name).length;
  t.same(answers.filter((a) => a !== 'be1' && a !== 'be2'), [], 'every request was answered by a backend');
  // Round robin over two destinations, one new connection per request.
  t.equal(count('be1'), 10, 'be1 answered half');
  t.equal(count('be2'), 10, 'be2 answered half');

  // The kernel's per-destination connection counts (immediate, unlike the
  // byte counters) agree between the library and ipvsadm.
  const dests = await ipvs.listDestinations(svc);
  const conns = Object.fromEntries(dests.map((d) => [d.address, d.activeConns + d.inactiveConns]));
  t.same(conns, { '192.168.21.2': 10, '192.168.22.2': 10 }, 'listDestinations counts 10 connections each');
  const listed = (await router.exec('ipvsadm', ['-Ln']))
    .split('\n')
    .filter((l) => l.includes('->') && l.includes('192.168.'))
    .map((l) => l.trim().split(/\s+/))
    .map((f) => [f[1].split(':')[0], Number(f[4]) + Number(f[5])]);
  t.same(Object.fromEntries(listed), conns, 'ipvsadm -Ln shows the same ActiveConn + InActConn');
});

/**
 * Reads ipvsadm, then the library, then ipvsadm again, until both ipvsadm
 * reads agree: the kernel's rate estimator moves every 2 s, so a library
 * read between two equal tool reads saw the same numbers.
 */
async function sandwich(ns: Netns, args: string[], ours: () => Promise<ServiceWithDestinations[]>) {
  for (let i = 0; i < 20; i++) {
    const before = await ns.exec('ipvsadm', args);
    const dump = await ours();
    if ((await ns.exec('ipvsadm', args)) === before) return { text: before, dump };
  }
  throw new Error(`ipvsadm ${args.join(' ')} never printed the same twice in a row`);
}

const statWords = (s: Stats, which: 'stats' | 'rate') =>
  (which === 'stats' ? [s.conns, s.inPackets, s.outPackets, s.inBytes, s.outBytes] : [s.cps, s.inPps, s.outPps, s.inBps, s.outBps]).map(String);

t.test('after real traffic: stats, rates and persistent connections as ipvsadm prints them', async (t) => {
  const { router, client } = await topology(t);
  const ipvs = await Ipvs.open({ netns: router.path });
  t.teardown(() => ipvs.close());
  const svc = { protocol: 'tcp', address: VIP, port: 80 } as const;
  // Persistence: every request of the one client goes to the same backend,
  // through one connection template.
  await ipvs.addService({ ...svc, scheduler: 'rr', persistent: { timeout: 300 } });
  await ipvs.addDestination(svc, { address: '192.168.21.2', port: 8080, weight: 2 });
  await ipvs.addDestination(svc, { address: '192.168.22.2', port: 8080, weight: 3 });
  const answers = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const r = await client.tryExec('curl', ['-s', '--max-time', '10', `http://${VIP}:80/`]);
    answers.add(r.code === 0 ? r.stdout : `curl exit ${r.code}`);
  }
  t.equal(answers.size, 1, `persistence: one backend answered (${[...answers].join(', ')})`);

  const check = (which: 'stats' | 'rate' | 'persistent', text: string, dump: ServiceWithDestinations[]) => {
    const [block] = parseIpvsadmList(text);
    const [ours] = dump;
    t.equal(dump.length, 1);
    if (which !== 'persistent') t.same(['TCP', `${VIP}:80`, ...statWords(ours.stats, which)], block.service, `service: ${block.service.join(' ')}`);
    for (const words of block.destinations) {
      const d = ours.destinations.find((x) => `${x.address}:${x.port}` === words[0]);
      if (!d) throw new Error(`no destination ${words[0]}`);
      const mine = which === 'persistent'
        ? [String(d.weight), String(d.persistentConns), String(d.activeConns), String(d.inactiveConns)]
        : statWords(d.stats, which);
      t.same([`${splitHostPort(words[0]).address}:${splitHostPort(words[0]).port}`, ...mine], words, `destination: ${words.join(' ')}`);
    }
    return ours;
  };
  const stats = await sandwich(router, ['-Ln', '--stats', '--exact'], () => ipvs.dump());
  const s = check('stats', stats.text, stats.dump);
  // Not necessarily 12: a client port reused while its old connection waits is the same IPVS connection.
  t.ok(s.stats.conns > 0n && s.stats.inBytes > 0n && s.stats.outBytes > 0n, `non-zero counters: ${s.stats.conns} connections, ${s.stats.inBytes} bytes in`);
  const rate = await sandwich(router, ['-Ln', '--rate'], () => ipvs.dump());
  const r = check('rate', rate.text, rate.dump);
  t.ok(r.stats.inBps > 0n || r.stats.inPps > 0n, `non-zero rates: ${r.stats.inPps} packets/s, ${r.stats.inBps} bytes/s in`);
  const persistent = await sandwich(router, ['-Ln', '--persistent-conn'], () => ipvs.dump());
  const p = check('persistent', persistent.text, persistent.dump);
  t.same(p.destinations.map((d) => d.persistentConns).sort(), [0, 1], 'one connection template, on the backend that answered');
  t.ok(p.destinations.some((d) => d.activeConns + d.inactiveConns > 0), 'and the connections through it');
});
