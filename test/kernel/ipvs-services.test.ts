/**
 * Virtual services against the kernel, cross-checked with ipvsadm both ways:
 * what the library writes, ipvsadm lists exactly; what ipvsadm writes, the
 * library reads back field for field.
 */
import t from 'tap';
import { NetlinkError, type Service, type ServiceSpec } from '../../lib/index.js';
import { ipvsEnv, ipvsModules } from '../support/ipvs-env.js';

const ZERO = { conns: 0n, inPackets: 0n, outPackets: 0n, inBytes: 0n, outBytes: 0n, cps: 0n, inPps: 0n, outPps: 0n, inBps: 0n, outBps: 0n };
const NOFLAGS = { onePacket: false, sched1: false, sched2: false, sched3: false };

const { schedulers, persistenceEngines } = ipvsModules();

interface Case {
  spec: ServiceSpec;
  /** The `ipvsadm -Sn` line. */
  save: string;
  /** The `ipvsadm -Ln` line (spaces collapsed). */
  list: string;
  /** The `ipvsadm -Ln --stats --exact --persistent-conn` line. */
  stats: string;
  /** What listServices reports. */
  read: Service;
}

const cases: Case[] = [
  {
    spec: { protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr', persistent: { timeout: 300, netmask: '255.255.255.0' } },
    save: '-A -t 10.0.0.1:80 -s rr -p 300 -M 255.255.255.0',
    list: 'TCP 10.0.0.1:80 rr persistent 300 mask 255.255.255.0',
    stats: 'TCP 10.0.0.1:80 0 0 0 0 0',
    read: { protocol: 'tcp', address: '10.0.0.1', port: 80, family: 'inet', scheduler: 'rr', flags: NOFLAGS, persistent: { timeout: 300, netmask: '255.255.255.0' }, stats: ZERO },
  },
  {
    // A prefix length for an IPv4 netmask, and the default scheduler.
    spec: { protocol: 'tcp', address: '10.0.0.2', port: 8080, persistent: { timeout: 30, netmask: 16 } },
    save: '-A -t 10.0.0.2:8080 -s wlc -p 30 -M 255.255.0.0',
    list: 'TCP 10.0.0.2:8080 wlc persistent 30 mask 255.255.0.0',
    stats: 'TCP 10.0.0.2:8080 0 0 0 0 0',
    read: { protocol: 'tcp', address: '10.0.0.2', port: 8080, family: 'inet', scheduler: 'wlc', flags: NOFLAGS, persistent: { timeout: 30, netmask: '255.255.0.0' }, stats: ZERO },
  },
  {
    // Persistence without a netmask: a host mask, which ipvsadm leaves out.
    spec: { protocol: 'tcp', address: '10.0.0.3', port: 443, scheduler: 'lc', persistent: { timeout: 7200 } },
    save: '-A -t 10.0.0.3:443 -s lc -p 7200',
    list: 'TCP 10.0.0.3:443 lc persistent 7200',
    stats: 'TCP 10.0.0.3:443 0 0 0 0 0',
    read: { protocol: 'tcp', address: '10.0.0.3', port: 443, family: 'inet', scheduler: 'lc', flags: NOFLAGS, persistent: { timeout: 7200, netmask: '255.255.255.255' }, stats: ZERO },
  },
  {
    spec: { protocol: 'udp', address: '10.0.0.1', port: 53, scheduler: 'rr', flags: { onePacket: true } },
    save: '-A -u 10.0.0.1:53 -s rr -o',
    list: 'UDP 10.0.0.1:53 rr ops',
    stats: 'UDP 10.0.0.1:53 0 0 0 0 0',
    read: { protocol: 'udp', address: '10.0.0.1', port: 53, family: 'inet', scheduler: 'rr', flags: { ...NOFLAGS, onePacket: true }, stats: ZERO },
  },
  {
    spec: { protocol: 'sctp', address: '10.0.0.1', port: 3868, scheduler: 'wlc' },
    save: '-A --sctp-service 10.0.0.1:3868 -s wlc',
    list: 'SCTP 10.0.0.1:3868 wlc',
    stats: 'SCTP 10.0.0.1:3868 0 0 0 0 0',
    read: { protocol: 'sctp', address: '10.0.0.1', port: 3868, family: 'inet', scheduler: 'wlc', flags: NOFLAGS, stats: ZERO },
  },
  {
    spec: { protocol: 'tcp', address: 'fd00::1', port: 80, scheduler: 'rr', persistent: { timeout: 60, netmask: 64 } },
    save: '-A -t [fd00::1]:80 -s rr -p 60 -M 64',
    list: 'TCP [fd00::1]:80 rr persistent 60 mask 64',
    stats: 'TCP [fd00::1]:80 0 0 0 0 0',
    read: { protocol: 'tcp', address: 'fd00::1', port: 80, family: 'inet6', scheduler: 'rr', flags: NOFLAGS, persistent: { timeout: 60, netmask: 64 }, stats: ZERO },
  },
  {
    // Written in full: the library sends (and reports) RFC 5952 text.
    spec: { protocol: 'udp', address: 'fd00:0:0:0:0:0:0:2', port: 443, scheduler: 'sh', flags: { sched1: true, sched2: true } },
    save: '-A -u [fd00::2]:443 -s sh -b sh-fallback,sh-port',
    list: 'UDP [fd00::2]:443 sh (sh-fallback,sh-port)',
    stats: 'UDP [fd00::2]:443 0 0 0 0 0',
    read: { protocol: 'udp', address: 'fd00::2', port: 443, family: 'inet6', scheduler: 'sh', flags: { ...NOFLAGS, sched1: true, sched2: true }, stats: ZERO },
  },
  {
    spec: { protocol: 'sctp', address: 'fd00::3', port: 3868, scheduler: 'rr' },
    save: '-A --sctp-service [fd00::3]:3868 -s rr',
    list: 'SCTP [fd00::3]:3868 rr',
    stats: 'SCTP [fd00::3]:3868 0 0 0 0 0',
    read: { protocol: 'sctp', address: 'fd00::3', port: 3868, family: 'inet6', scheduler: 'rr', flags: NOFLAGS, stats: ZERO },
  },
  {
    spec: { fwmark: 42, family: 'inet', scheduler: 'rr', persistent: { timeout: 120, netmask: 24 } },
    save: '-A -f 42 -s rr -p 120 -M 255.255.255.0',
    list: 'FWM 42 rr persistent 120 mask 255.255.255.0',
    stats: 'FWM 42 0 0 0 0 0',
    read: { fwmark: 42, family: 'inet', scheduler: 'rr', flags: NOFLAGS, persistent: { timeout: 120, netmask: '255.255.255.0' }, stats: ZERO },
  },
  {
    // ipvsadm prints fwmarks as signed ints (4294967295 shows as -1).
    spec: { fwmark: 2147483647, family: 'inet6', scheduler: 'wrr', persistent: { timeout: 10, netmask: 48 } },
    save: '-A -f 2147483647 -6 -s wrr -p 10 -M 48',
    list: 'FWM 2147483647 IPv6 wrr persistent 10 mask 48',
    stats: 'FWM 2147483647 IPv6 0 0 0 0 0',
    read: { fwmark: 2147483647, family: 'inet6', scheduler: 'wrr', flags: NOFLAGS, persistent: { timeout: 10, netmask: 48 }, stats: ZERO },
  },
];

if (schedulers.includes('mh'))
  cases.push({
    spec: { protocol: 'tcp', address: '10.0.0.4', port: 80, scheduler: 'mh', flags: { sched1: true, sched2: true } },
    save: '-A -t 10.0.0.4:80 -s mh -b mh-fallback,mh-port',
    list: 'TCP 10.0.0.4:80 mh (mh-fallback,mh-port)',
    stats: 'TCP 10.0.0.4:80 0 0 0 0 0',
    read: { protocol: 'tcp', address: '10.0.0.4', port: 80, family: 'inet', scheduler: 'mh', flags: { ...NOFLAGS, sched1: true, sched2: true }, stats: ZERO },
  });

if (persistenceEngines.includes('sip'))
  cases.push({
    spec: { protocol: 'udp', address: '10.0.0.1', port: 5060, scheduler: 'rr', persistent: { timeout: 60 }, peName: 'sip' },
    save: '-A -u 10.0.0.1:5060 -s rr -p 60 --pe sip',
    list: 'UDP 10.0.0.1:5060 rr persistent 60 pe sip',
    stats: 'UDP 10.0.0.1:5060 0 0 0 0 0',
    read: { protocol: 'udp', address: '10.0.0.1', port: 5060, family: 'inet', scheduler: 'rr', flags: NOFLAGS, persistent: { timeout: 60, netmask: '255.255.255.255' }, peName: 'sip', stats: ZERO },
  });

const byKey = (s: Service) => ('fwmark' in s ? `f${s.fwmark}/${s.family}` : `${s.protocol}/${s.address}/${s.port}`);
const sorted = (list: Service[]) => [...list].sort((a, b) => (byKey(a) < byKey(b) ? -1 : byKey(a) > byKey(b) ? 1 : 0));

t.test('the kernel has the modules these tests rely on', async (t) => {
  t.ok(schedulers.includes('rr') && schedulers.includes('wlc'), `schedulers found: ${schedulers.join(' ')}`);
});

t.test('library writes, ipvsadm reads', async (t) => {
  const env = await ipvsEnv(t);
  for (const c of cases) await env.ipvs.addService(c.spec);
  t.same(await env.save(), cases.map((c) => c.save).sort(), 'ipvsadm -Sn');
  t.same(await env.list('-Ln'), cases.map((c) => c.list).sort(), 'ipvsadm -Ln');
  t.same(await env.list('-Ln', '--stats', '--exact', '--persistent-conn'), cases.map((c) => c.stats).sort(), 'ipvsadm -Ln --stats --exact --persistent-conn');
});

t.test('ipvsadm writes, library reads', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(cases.map((c) => c.save));
  t.equal((await env.save()).length, cases.length, 'ipvsadm -R added every service');
  t.strictSame(sorted(await env.ipvs.listServices()), sorted(cases.map((c) => c.read)), 'listServices');
  for (const c of cases) t.strictSame(await env.ipvs.getService(c.spec), c.read, `getService ${c.save}`);
  const dumped = await env.ipvs.dump();
  t.strictSame(sorted(dumped), sorted(cases.map((c) => ({ ...c.read, destinations: [] }))), 'dump');
});

t.test(`every scheduler the kernel has (${schedulers.join(' ')})`, async (t) => {
  const env = await ipvsEnv(t);
  const lines = schedulers.map((s, i) => `-A -t 10.0.2.${i + 1}:80 -s ${s}`);
  for (const [i, s] of schedulers.entries()) await env.ipvs.addService({ protocol: 'tcp', address: `10.0.2.${i + 1}`, port: 80, scheduler: s });
  t.same(await env.save(), [...lines].sort(), 'library → ipvsadm -Sn');
  await env.ipvs.flush();
  // ipvsadm writes them on UDP this time; the library reads the names back.
  await env.restore(schedulers.map((s, i) => `-A -u 10.0.3.${i + 1}:53 -s ${s}`));
  const got = new Map((await env.ipvs.listServices()).map((s) => ['address' in s ? s.address : '', s.scheduler]));
  t.same(Object.fromEntries(got), Object.fromEntries(schedulers.map((s, i) => [`10.0.3.${i + 1}`, s])), 'ipvsadm → listServices');
});

t.test('updateService', async (t) => {
  const env = await ipvsEnv(t);
  await env.ipvs.addService({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' });
  await env.ipvs.addService({ fwmark: 7, family: 'inet6', scheduler: 'rr' });
  await env.ipvs.updateService({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'wrr', persistent: { timeout: 900, netmask: '255.255.0.0' } });
  await env.ipvs.updateService({ fwmark: 7, family: 'inet6', scheduler: 'sh', flags: { sched1: true }, persistent: { timeout: 5, netmask: 96 } });
  t.same(await env.save(), ['-A -f 7 -6 -s sh -p 5 -M 96 -b sh-fallback', '-A -t 10.0.0.1:80 -s wrr -p 900 -M 255.255.0.0']);
  // And back: dropping persistence and flags.
  await env.ipvs.updateService({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'lc' });
  t.same(await env.save(), ['-A -f 7 -6 -s sh -p 5 -M 96 -b sh-fallback', '-A -t 10.0.0.1:80 -s lc']);

  // ipvsadm edits, the library sees it.
  await env.ipvsadm('-E', '-f', '7', '-6', '-s', 'rr', '-o');
  t.strictSame(await env.ipvs.getService({ fwmark: 7, family: 'inet6' }), {
    fwmark: 7, family: 'inet6', scheduler: 'rr', flags: { ...NOFLAGS, onePacket: true }, stats: ZERO,
  });

  const err = await env.ipvs.updateService({ protocol: 'tcp', address: '10.0.0.9', port: 80, scheduler: 'rr' }).catch((e: unknown) => e);
  t.type(err, NetlinkError);
  t.match(err, { code: 'ESRCH', operation: 'updateService', subject: { address: '10.0.0.9' } }, 'updating a missing service is ESRCH');
});

t.test('deleteService and getService of a missing service', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(['-A -t 10.0.0.1:80 -s rr', '-A -u 10.0.0.1:80 -s rr', '-A -f 9 -s rr', '-A -f 9 -6 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m']);
  await env.ipvs.deleteService({ protocol: 'tcp', address: '10.0.0.1', port: 80 });
  await env.ipvs.deleteService({ fwmark: 9, family: 'inet' });
  t.same(await env.save(), ['-A -f 9 -6 -s rr', '-A -u 10.0.0.1:80 -s rr'], 'the right two are gone, with their destinations');
  t.equal(await env.ipvs.getService({ protocol: 'tcp', address: '10.0.0.1', port: 80 }), undefined, 'deleted service reads as undefined');
  t.equal(await env.ipvs.getService({ fwmark: 9, family: 'inet' }), undefined, 'deleted fwmark service reads as undefined');
  t.equal(await env.ipvs.getService({ protocol: 'sctp', address: '10.0.0.1', port: 80 }), undefined, 'never-added service reads as undefined');
  t.ok(await env.ipvs.getService({ fwmark: 9, family: 'inet6' }), 'the IPv6 fwmark service is still there');
  const err = await env.ipvs.deleteService({ protocol: 'tcp', address: '10.0.0.1', port: 80 }).catch((e: unknown) => e);
  t.match(err, { name: 'NetlinkError', code: 'ESRCH', operation: 'deleteService' }, 'deleting it again is ESRCH');
});
