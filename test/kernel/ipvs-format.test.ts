/**
 * What ipvsadm prints, next to what the library shows:
 *  - formatList() (lib/ipvs/format.ts) line for line equal to `ipvsadm -Ln`
 *    on the same table: TCP/UDP/SCTP, IPv4 and IPv6, fwmark (both
 *    families), persistence with masks, one-packet, scheduler flags,
 *    every forwarding method ipvsadm has a name for, tunnels, thresholds;
 *  - forwarding method `bypass` (IP_VS_CONN_F_BYPASS), which ipvsadm can
 *    neither write nor name: the kernel keeps it, ipvsadm prints "(null)"
 *    for it, and the library reads it back.
 */
import t from 'tap';
import { type BatchOp, formatList } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

const web = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;
const dns6 = { protocol: 'udp', address: 'fd00::10', port: 53 } as const;
const sctp = { protocol: 'sctp', address: '10.0.0.9', port: 3868 } as const;
const fw4 = { fwmark: 3, family: 'inet' } as const;
const fw6 = { fwmark: 7, family: 'inet6' } as const;

const table: BatchOp[] = [
  { op: 'addService', service: { ...web, scheduler: 'rr', persistent: { timeout: 300, netmask: '255.255.255.0' } } },
  { op: 'addDestination', service: web, destination: { address: '10.0.1.3', port: 80, weight: 3 } },
  { op: 'addDestination', service: web, destination: { address: '10.0.1.20', port: 8080, forward: 'route', weight: 0 } },
  { op: 'addDestination', service: web, destination: { address: '10.0.1.4', port: 80, forward: 'tunnel', tunnel: { type: 'gue', port: 6080 }, upperThreshold: 10, lowerThreshold: 2 } },
  { op: 'addService', service: { protocol: 'tcp', address: '10.0.0.1', port: 443, scheduler: 'wlc', persistent: { timeout: 60 } } },
  { op: 'addService', service: { protocol: 'udp', address: '10.0.0.2', port: 53, scheduler: 'rr', flags: { onePacket: true } } },
  { op: 'addDestination', service: { protocol: 'udp', address: '10.0.0.2', port: 53 }, destination: { address: '10.0.1.5', port: 53, forward: 'local' } },
  { op: 'addService', service: { ...dns6, scheduler: 'wrr', persistent: { timeout: 60, netmask: 64 }, flags: { onePacket: true } } },
  { op: 'addDestination', service: dns6, destination: { address: 'fd00:1::2', port: 5353, forward: 'tunnel', tunnel: { type: 'ipip' } } },
  { op: 'addDestination', service: dns6, destination: { address: 'fd00:1::10', port: 53, weight: 100 } },
  { op: 'addService', service: { protocol: 'tcp', address: 'fd00::1', port: 443, scheduler: 'sh', flags: { sched1: true, sched2: true } } },
  { op: 'addService', service: { ...sctp, scheduler: 'mh', flags: { sched1: true } } },
  { op: 'addDestination', service: sctp, destination: { address: '10.0.1.6', port: 3868 } },
  { op: 'addService', service: { ...fw4, scheduler: 'lc' } },
  { op: 'addDestination', service: fw4, destination: { address: '10.0.1.7', port: 0, forward: 'route' } },
  { op: 'addService', service: { ...fw6, scheduler: 'sh', flags: { sched1: true, sched2: true } } },
  { op: 'addDestination', service: fw6, destination: { address: 'fd00:1::3', port: 0, forward: 'route' } },
];

t.test('formatList() is ipvsadm -Ln, line for line', async (t) => {
  const env = await ipvsEnv(t);
  const results = await env.ipvs.apply(table);
  t.same(results.filter((r) => !r.ok), [], 'the table went in');
  const theirs = (await env.ipvsadm('-Ln')).split('\n');
  const ours = formatList(await env.ipvs.info(), await env.ipvs.dump()).split('\n');
  t.equal(ours.length, theirs.length, `${theirs.length} lines`);
  for (let i = 0; i < Math.max(ours.length, theirs.length); i++) t.equal(ours[i], theirs[i], `line ${i + 1}: ${JSON.stringify(theirs[i])}`);
});

t.test("forward 'bypass': the kernel keeps it, ipvsadm prints (null), the library reads it back", async (t) => {
  const env = await ipvsEnv(t);
  await env.ipvs.addService({ ...web, scheduler: 'rr' });
  await env.ipvs.addDestination(web, { address: '10.0.1.2', port: 80, forward: 'bypass', weight: 2 });
  // ipvsadm 1.31 has no name (and no option) for IP_VS_CONN_F_BYPASS: it
  // prints glibc's "(null)" where the method goes, in both views.
  t.same(await env.save(), ['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 (null) -w 2'], 'ipvsadm -Sn');
  t.same(await env.list('-Ln'), ['-> 10.0.1.2:80 (null) 2 0 0', 'TCP 10.0.0.1:80 rr'], 'ipvsadm -Ln');
  t.match(await env.ipvs.listDestinations(web), [{ address: '10.0.1.2', port: 80, forward: 'bypass', weight: 2 }], 'the library reads bypass');

  // The other direction: ipvsadm cannot write bypass. What it can do to
  // such a destination is edit it, and an edit without -g/-i/-m is -g: the
  // library sees the method ipvsadm set.
  await env.ipvsadm('-e', '-t', '10.0.0.1:80', '-r', '10.0.1.2:80', '-w', '5');
  t.match(await env.ipvs.listDestinations(web), [{ forward: 'route', weight: 5 }], 'ipvsadm -e rewrote it as route');
  await env.ipvs.updateDestination(web, { address: '10.0.1.2', port: 80, forward: 'bypass', weight: 5 });
  t.same(await env.save(), ['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 (null) -w 5'], 'updateDestination set bypass again');
  const restore = await env.ns.tryExec('ipvsadm', ['-R'], '-a -t 10.0.0.1:80 -r 10.0.1.9:80 (null) -w 1\n');
  t.not(restore.code, 0, 'ipvsadm -R cannot read its own "(null)" back');
});
