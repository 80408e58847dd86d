/**
 * Destinations (real servers) against the kernel, cross-checked with ipvsadm
 * both ways: forwarding methods, tunnels, weights, thresholds, IPv4/IPv6 and
 * fwmark services, update and delete.
 */
import t from 'tap';
import { type Destination, type DestinationSpec, NetlinkError, type ServiceKey } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

const ZERO = { conns: 0n, inPackets: 0n, outPackets: 0n, inBytes: 0n, outBytes: 0n, cps: 0n, inPps: 0n, outPps: 0n, inBps: 0n, outBps: 0n };

const tcp80 = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;
const tcp6 = { protocol: 'tcp', address: 'fd00::1', port: 443 } as const;
const fw4 = { fwmark: 42, family: 'inet' } as const;
const fw6 = { fwmark: 43, family: 'inet6' } as const;
const services: Array<{ key: ServiceKey; save: string }> = [
  { key: tcp80, save: '-A -t 10.0.0.1:80 -s rr' },
  { key: tcp6, save: '-A -t [fd00::1]:443 -s wlc' },
  { key: fw4, save: '-A -f 42 -s rr' },
  { key: fw6, save: '-A -f 43 -6 -s rr' },
];

interface Case {
  service: ServiceKey;
  spec: DestinationSpec;
  /** `ipvsadm -Sn` line (ipvsadm -R takes it back). */
  save: string;
  /** `ipvsadm -Ln --tun-info` destination line. */
  tunInfo: string;
  /** `ipvsadm -Ln --thresholds` destination line. */
  thresholds: string;
  read: Destination;
}

function dest(address: string, port: number, more: Partial<Destination>): Destination {
  return {
    address, port, family: address.includes(':') ? 'inet6' : 'inet', weight: 1, forward: 'masq',
    upperThreshold: 0, lowerThreshold: 0, activeConns: 0, inactiveConns: 0, persistentConns: 0, stats: ZERO, ...more,
  };
}

const cases: Case[] = [
  {
    service: tcp80,
    spec: { address: '10.0.1.2', port: 8080, weight: 3, upperThreshold: 10, lowerThreshold: 5 },
    save: '-a -t 10.0.0.1:80 -r 10.0.1.2:8080 -m -w 3',
    tunInfo: '-> 10.0.1.2:8080 Masq n/a 3 0 0',
    thresholds: '-> 10.0.1.2:8080 10 5 0 0',
    read: dest('10.0.1.2', 8080, { weight: 3, upperThreshold: 10, lowerThreshold: 5 }),
  },
  {
    service: tcp80,
    spec: { address: '10.0.1.3', port: 80, forward: 'route', weight: 0 },
    save: '-a -t 10.0.0.1:80 -r 10.0.1.3:80 -g -w 0',
    tunInfo: '-> 10.0.1.3:80 Route n/a 0 0 0',
    thresholds: '-> 10.0.1.3:80 0 0 0 0',
    read: dest('10.0.1.3', 80, { weight: 0, forward: 'route' }),
  },
  {
    // Tunnel without details: IPIP.
    service: tcp80,
    spec: { address: '10.0.1.4', port: 80, forward: 'tunnel', upperThreshold: 1000 },
    save: '-a -t 10.0.0.1:80 -r 10.0.1.4:80 -i -w 1 --tun-type ipip',
    tunInfo: '-> 10.0.1.4:80 Tunnel ipip 1 0 0',
    thresholds: '-> 10.0.1.4:80 1000 0 0 0',
    read: dest('10.0.1.4', 80, { forward: 'tunnel', upperThreshold: 1000, tunnel: { type: 'ipip', port: 0, flags: 'nocsum' } }),
  },
  {
    service: tcp80,
    spec: { address: '10.0.1.5', port: 80, forward: 'tunnel', tunnel: { type: 'gue', port: 6080 } },
    save: '-a -t 10.0.0.1:80 -r 10.0.1.5:80 -i -w 1 --tun-type gue --tun-port 6080 --tun-nocsum',
    tunInfo: '-> 10.0.1.5:80 Tunnel gue:6080:-c 1 0 0',
    thresholds: '-> 10.0.1.5:80 0 0 0 0',
    read: dest('10.0.1.5', 80, { forward: 'tunnel', tunnel: { type: 'gue', port: 6080, flags: 'nocsum' } }),
  },
  {
    service: tcp80,
    spec: { address: '10.0.1.6', port: 80, forward: 'tunnel', weight: 7, tunnel: { type: 'gre', flags: 'csum' } },
    save: '-a -t 10.0.0.1:80 -r 10.0.1.6:80 -i -w 7 --tun-type gre --tun-csum',
    tunInfo: '-> 10.0.1.6:80 Tunnel gre:+c 7 0 0',
    thresholds: '-> 10.0.1.6:80 0 0 0 0',
    read: dest('10.0.1.6', 80, { weight: 7, forward: 'tunnel', tunnel: { type: 'gre', port: 0, flags: 'csum' } }),
  },
  {
    service: tcp80,
    spec: { address: '10.0.1.7', port: 80, forward: 'tunnel', tunnel: { type: 'gue', port: 5555, flags: 'remcsum' } },
    save: '-a -t 10.0.0.1:80 -r 10.0.1.7:80 -i -w 1 --tun-type gue --tun-port 5555 --tun-remcsum',
    tunInfo: '-> 10.0.1.7:80 Tunnel gue:5555:r+c 1 0 0',
    thresholds: '-> 10.0.1.7:80 0 0 0 0',
    read: dest('10.0.1.7', 80, { forward: 'tunnel', tunnel: { type: 'gue', port: 5555, flags: 'remcsum' } }),
  },
  {
    service: tcp80,
    spec: { address: '10.0.1.8', port: 80, forward: 'tunnel', tunnel: { type: 'gue', port: 6081, flags: 'csum' } },
    save: '-a -t 10.0.0.1:80 -r 10.0.1.8:80 -i -w 1 --tun-type gue --tun-port 6081 --tun-csum',
    tunInfo: '-> 10.0.1.8:80 Tunnel gue:6081:+c 1 0 0',
    thresholds: '-> 10.0.1.8:80 0 0 0 0',
    read: dest('10.0.1.8', 80, { forward: 'tunnel', tunnel: { type: 'gue', port: 6081, flags: 'csum' } }),
  },
  {
    // The only family mix the kernel takes: an IPv6 tunnel endpoint behind an IPv4 service.
    service: tcp80,
    spec: { address: 'fd00:1::5', port: 80, forward: 'tunnel', tunnel: { type: 'gre', flags: 'nocsum' } },
    save: '-a -t 10.0.0.1:80 -r [fd00:1::5]:80 -i -w 1 --tun-type gre --tun-nocsum',
    tunInfo: '-> [fd00:1::5]:80 Tunnel gre:-c 1 0 0',
    thresholds: '-> [fd00:1::5]:80 0 0 0 0',
    read: dest('fd00:1::5', 80, { forward: 'tunnel', tunnel: { type: 'gre', port: 0, flags: 'nocsum' } }),
  },
  {
    service: tcp6,
    spec: { address: 'fd00:1::2', port: 8443, weight: 2, upperThreshold: 7, lowerThreshold: 3 },
    save: '-a -t [fd00::1]:443 -r [fd00:1::2]:8443 -m -w 2',
    tunInfo: '-> [fd00:1::2]:8443 Masq n/a 2 0 0',
    thresholds: '-> [fd00:1::2]:8443 7 3 0 0',
    read: dest('fd00:1::2', 8443, { weight: 2, upperThreshold: 7, lowerThreshold: 3 }),
  },
  {
    service: tcp6,
    spec: { address: 'fd00:1:0::3', port: 443, forward: 'route' },
    save: '-a -t [fd00::1]:443 -r [fd00:1::3]:443 -g -w 1',
    tunInfo: '-> [fd00:1::3]:443 Route n/a 1 0 0',
    thresholds: '-> [fd00:1::3]:443 0 0 0 0',
    read: dest('fd00:1::3', 443, { forward: 'route' }),
  },
  {
    service: tcp6,
    spec: { address: 'fd00:1::4', port: 443, forward: 'tunnel', tunnel: { type: 'ipip' } },
    save: '-a -t [fd00::1]:443 -r [fd00:1::4]:443 -i -w 1 --tun-type ipip',
    tunInfo: '-> [fd00:1::4]:443 Tunnel ipip 1 0 0',
    thresholds: '-> [fd00:1::4]:443 0 0 0 0',
    read: dest('fd00:1::4', 443, { forward: 'tunnel', tunnel: { type: 'ipip', port: 0, flags: 'nocsum' } }),
  },
  {
    service: fw4,
    spec: { address: '10.0.1.2', port: 0, forward: 'route' },
    save: '-a -f 42 -r 10.0.1.2:0 -g -w 1',
    tunInfo: '-> 10.0.1.2:0 Route n/a 1 0 0',
    thresholds: '-> 10.0.1.2:0 0 0 0 0',
    read: dest('10.0.1.2', 0, { forward: 'route' }),
  },
  {
    service: fw4,
    spec: { address: '10.0.1.3', port: 0, weight: 100 },
    save: '-a -f 42 -r 10.0.1.3:0 -m -w 100',
    tunInfo: '-> 10.0.1.3:0 Masq n/a 100 0 0',
    thresholds: '-> 10.0.1.3:0 0 0 0 0',
    read: dest('10.0.1.3', 0, { weight: 100 }),
  },
  {
    service: fw6,
    spec: { address: 'fd00:1::2', port: 0 },
    save: '-a -f 43 -6 -r [fd00:1::2]:0 -m -w 1',
    tunInfo: '-> [fd00:1::2]:0 Masq n/a 1 0 0',
    thresholds: '-> [fd00:1::2]:0 0 0 0 0',
    read: dest('fd00:1::2', 0, {}),
  },
];

/** `ipvsadm -Ln --thresholds` takes -x/-y that `-Sn` does not print. */
function restoreLine(c: Case): string {
  const x = c.spec.upperThreshold ? ` -x ${c.spec.upperThreshold}` : '';
  const y = c.spec.lowerThreshold ? ` -y ${c.spec.lowerThreshold}` : '';
  return c.save + x + y;
}

const svcLines = {
  tunInfo: ['TCP 10.0.0.1:80 rr', 'TCP [fd00::1]:443 wlc', 'FWM 42 rr', 'FWM 43 IPv6 rr'],
  thresholds: ['TCP 10.0.0.1:80 rr', 'TCP [fd00::1]:443 wlc', 'FWM 42 rr', 'FWM 43 IPv6 rr'],
};
const byAddr = (a: Destination, b: Destination) => (`${a.address}:${a.port}` < `${b.address}:${b.port}` ? -1 : 1);

t.test('library writes, ipvsadm reads', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(services.map((s) => s.save));
  for (const c of cases) await env.ipvs.addDestination(c.service, c.spec);
  t.same(await env.save(), [...services.map((s) => s.save), ...cases.map((c) => c.save)].sort(), 'ipvsadm -Sn');
  t.same(await env.list('-Ln', '--tun-info'), [...svcLines.tunInfo, ...cases.map((c) => c.tunInfo)].sort(), 'ipvsadm -Ln --tun-info');
  t.same(await env.list('-Ln', '--thresholds'), [...svcLines.thresholds, ...cases.map((c) => c.thresholds)].sort(), 'ipvsadm -Ln --thresholds');
  const statsLines = (await env.list('-Ln', '--stats', '--exact', '--persistent-conn')).filter((l) => l.startsWith('->'));
  t.same(statsLines, cases.map((c) => `-> ${c.tunInfo.split(' ')[1]} 0 0 0 0 0`).sort(), 'ipvsadm -Ln --stats --exact --persistent-conn');
});

t.test('ipvsadm writes, library reads', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore([...services.map((s) => s.save), ...cases.map(restoreLine)]);
  t.equal((await env.save()).length, services.length + cases.length, 'ipvsadm -R added everything');
  for (const s of services) {
    const want = cases.filter((c) => c.service === s.key).map((c) => c.read).sort(byAddr);
    t.strictSame([...(await env.ipvs.listDestinations(s.key))].sort(byAddr), want, `listDestinations ${s.save}`);
  }
  const dumped = await env.ipvs.dump();
  t.equal(dumped.length, services.length, 'dump has every service');
  for (const s of dumped) {
    const key = services.find((x) => ('fwmark' in x.key ? x.key.fwmark === ('fwmark' in s ? s.fwmark : -1) : 'address' in s && x.key.address === s.address));
    t.ok(key, 'dumped service is one of ours');
    const want = cases.filter((c) => c.service === key?.key).map((c) => c.read).sort(byAddr);
    t.strictSame([...s.destinations].sort(byAddr), want, `dump destinations of ${key?.save}`);
  }
});

t.test("forward 'local': the kernel keeps it, ipvsadm shows Local (and saves it as -g)", async (t) => {
  const env = await ipvsEnv(t);
  await env.ipvs.addService({ ...tcp80, scheduler: 'rr' });
  await env.ipvs.addDestination(tcp80, { address: '10.0.1.9', port: 80, forward: 'local' });
  t.same(await env.list('-Ln'), ['-> 10.0.1.9:80 Local 1 0 0', 'TCP 10.0.0.1:80 rr']);
  t.same(await env.save(), ['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.9:80 -g -w 1']);
  t.strictSame(await env.ipvs.listDestinations(tcp80), [dest('10.0.1.9', 80, { forward: 'local' })]);
});

t.test('updateDestination', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(['-A -t 10.0.0.1:80 -s wrr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 1', '-a -t 10.0.0.1:80 -r 10.0.1.3:80 -m -w 1']);
  await env.ipvs.updateDestination(tcp80, { address: '10.0.1.2', port: 80, weight: 9, upperThreshold: 50, lowerThreshold: 20 });
  await env.ipvs.updateDestination(tcp80, { address: '10.0.1.3', port: 80, forward: 'tunnel', tunnel: { type: 'gue', port: 7000, flags: 'csum' } });
  t.same(await env.save(), [
    '-A -t 10.0.0.1:80 -s wrr',
    '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 9',
    '-a -t 10.0.0.1:80 -r 10.0.1.3:80 -i -w 1 --tun-type gue --tun-port 7000 --tun-csum',
  ]);
  t.same(await env.list('-Ln', '--thresholds'), ['-> 10.0.1.2:80 50 20 0 0', '-> 10.0.1.3:80 0 0 0 0', 'TCP 10.0.0.1:80 wrr']);

  // ipvsadm edits; the library reads the change.
  await env.ipvsadm('-e', '-t', '10.0.0.1:80', '-r', '10.0.1.3:80', '-g', '-w', '4', '-x', '8');
  t.strictSame([...(await env.ipvs.listDestinations(tcp80))].sort(byAddr), [
    dest('10.0.1.2', 80, { weight: 9, upperThreshold: 50, lowerThreshold: 20 }),
    dest('10.0.1.3', 80, { weight: 4, forward: 'route', upperThreshold: 8 }),
  ]);

  const err = await env.ipvs.updateDestination(tcp80, { address: '10.0.1.99', port: 80 }).catch((e: unknown) => e);
  t.type(err, NetlinkError);
  t.match(err, { code: 'ENOENT', operation: 'updateDestination' }, 'updating a missing destination is ENOENT');
});

t.test('deleteDestination, and destinations of a missing service', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m', '-a -t 10.0.0.1:80 -r 10.0.1.3:80 -m', '-A -f 43 -6 -s rr', '-a -f 43 -6 -r [fd00:1::2]:0 -m']);
  await env.ipvs.deleteDestination(tcp80, { address: '10.0.1.2', port: 80 });
  await env.ipvs.deleteDestination(fw6, { address: 'fd00:1::2', port: 0 });
  t.same(await env.save(), ['-A -f 43 -6 -s rr', '-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.3:80 -m -w 1']);
  t.strictSame(await env.ipvs.listDestinations(fw6), [], 'a service without destinations lists none');

  const again = await env.ipvs.deleteDestination(tcp80, { address: '10.0.1.2', port: 80 }).catch((e: unknown) => e);
  t.match(again, { name: 'NetlinkError', code: 'ENOENT', operation: 'deleteDestination' }, 'deleting it twice is ENOENT');

  const missing = { protocol: 'udp', address: '10.0.0.1', port: 80 } as const;
  const err = await env.ipvs.listDestinations(missing).catch((e: unknown) => e);
  t.type(err, NetlinkError);
  t.match(err, { code: 'ESRCH', errno: 3, operation: 'listDestinations', subject: missing }, 'listDestinations of a missing service is ESRCH');
  const add = await env.ipvs.addDestination(missing, { address: '10.0.1.2', port: 80 }).catch((e: unknown) => e);
  t.match(add, { name: 'NetlinkError', code: 'ESRCH', operation: 'addDestination' }, 'addDestination to a missing service is ESRCH');
  t.same(await env.save(), ['-A -f 43 -6 -s rr', '-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.3:80 -m -w 1'], 'nothing else changed');
});
