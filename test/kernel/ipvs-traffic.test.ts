/**
 * Real packets through a virtual service the library created: a client
 * namespace reaches HTTP backends in two other namespaces through a router
 * namespace where IPVS masquerades (NAT).
 *
 *   client 192.168.10.2 ── 192.168.10.1 router (VIP 10.10.10.10 on lo) 192.168.21.1 ── 192.168.21.2 be1
 *                                                                     192.168.22.1 ── 192.168.22.2 be2
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { Ipvs } from '../../lib/index.js';
import { type Netns, freshNetns } from '../support/netns.js';

const VIP = '10.10.10.10';

async function link(a: Netns, aName: string, aAddr: string, b: Netns, bName: string, bAddr: string): Promise<void> {
  await a.exec('ip', ['link', 'add', aName, 'type', 'veth', 'peer', 'name', bName, 'netns', b.name]);
  await a.exec('ip', ['addr', 'add', aAddr, 'dev', aName]);
  await a.exec('ip', ['link', 'set', aName, 'up']);
  await b.exec('ip', ['addr', 'add', bAddr, 'dev', bName]);
  await b.exec('ip', ['link', 'set', bName, 'up']);
}

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

t.test('a client reaches both backends through a masquerading virtual service', async (t) => {
  const router = await freshNetns(t, 'rtr');
  const client = await freshNetns(t, 'cli');
  const be1 = await freshNetns(t, 'be1');
  const be2 = await freshNetns(t, 'be2');

  await link(router, 'rc', '192.168.10.1/24', client, 'c0', '192.168.10.2/24');
  await link(router, 'rb1', '192.168.21.1/24', be1, 'b0', '192.168.21.2/24');
  await link(router, 'rb2', '192.168.22.1/24', be2, 'b0', '192.168.22.2/24');
  await client.exec('ip', ['route', 'add', 'default', 'via', '192.168.10.1']);
  await be1.exec('ip', ['route', 'add', 'default', 'via', '192.168.21.1']);
  await be2.exec('ip', ['route', 'add', 'default', 'via', '192.168.22.1']);
  await router.exec('ip', ['addr', 'add', `${VIP}/32`, 'dev', 'lo']);
  await router.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);

  await startServer(t, be1, 'be1');
  await startServer(t, be2, 'be2');

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
