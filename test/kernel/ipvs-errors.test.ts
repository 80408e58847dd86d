/**
 * Errors against the kernel: what the kernel refuses comes back as a
 * NetlinkError with the right code; what is invalid never reaches it (a
 * TypeError/RangeError naming the field, no system call, ipvsadm unchanged).
 * Also: opening, closing, two handles, and many concurrent callers.
 */
import { constants } from 'node:os';
import t from 'tap';
import { Ipvs, NetlinkError } from '../../lib/index.js';
import { ipvsEnv, sortedLines } from '../support/ipvs-env.js';
import { freshNetns } from '../support/netns.js';

const tcp80 = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;
const BASE = ['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 1'];

t.test('kernel refusals: EEXIST, ESRCH, ENOENT, ERANGE', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(BASE);
  const cases: Array<[string, () => Promise<unknown>, string, string]> = [
    ['a service twice', () => env.ipvs.addService({ ...tcp80, scheduler: 'wlc' }), 'EEXIST', 'addService'],
    ['a destination twice', () => env.ipvs.addDestination(tcp80, { address: '10.0.1.2', port: 80 }), 'EEXIST', 'addDestination'],
    ['a destination for a missing service', () => env.ipvs.addDestination({ ...tcp80, port: 81 }, { address: '10.0.1.2', port: 80 }), 'ESRCH', 'addDestination'],
    ['an unknown scheduler', () => env.ipvs.addService({ ...tcp80, port: 82, scheduler: 'nosuchsched' }), 'ENOENT', 'addService'],
    ['an unknown persistence engine', () => env.ipvs.addService({ ...tcp80, port: 83, scheduler: 'rr', persistent: { timeout: 5 }, peName: 'nosuchpe' }), 'ENOENT', 'addService'],
    ['lowerThreshold above upperThreshold', () => env.ipvs.addDestination(tcp80, { address: '10.0.1.3', port: 80, upperThreshold: 5, lowerThreshold: 6 }), 'ERANGE', 'addDestination'],
    ['updating a missing destination', () => env.ipvs.updateDestination(tcp80, { address: '10.0.1.9', port: 80 }), 'ENOENT', 'updateDestination'],
  ];
  for (const [what, call, code, operation] of cases) {
    const err = await call().then(() => undefined, (e: unknown) => e);
    t.type(err, NetlinkError, what);
    t.match(err, { code, errno: constants.errno[code as keyof typeof constants.errno], operation, message: new RegExp(code) }, `${what}: ${code}`);
  }
  t.same(await env.save(), [...BASE].sort(), 'nothing changed');
});

t.test('EINVAL for a destination the namespace does not route as unicast, as ipvsadm is refused it', async (t) => {
  const env = await ipvsEnv(t);
  const v6 = { protocol: 'tcp', address: 'fd00::1', port: 80 } as const;
  await env.restore(['-A -t [fd00::1]:80 -s rr']);
  const linkLocal = await env.ipvs.addDestination(v6, { address: 'fe80::5', port: 80 }).then(() => undefined, (e: unknown) => e);
  t.match(linkLocal, { code: 'EINVAL', operation: 'addDestination', hint: /does not route as unicast \(multicast, IPv4 broadcast, IPv6 link-local/ }, 'an IPv6 link-local destination');
  // ipvsadm words the kernel's EINVAL for a destination its own way.
  const notUnicast = { code: 255, stderr: /address not unicast/ };
  t.match(await env.ns.tryExec('ipvsadm', ['-a', '-t', '[fd00::1]:80', '-r', '[fe80::5]:80', '-m']), notUnicast, 'ipvsadm is refused the same destination');
  await env.restore(['-A -t 10.0.0.1:80 -s rr']);
  const multicast = await env.ipvs.addDestination(tcp80, { address: '224.0.0.5', port: 80 }).then(() => undefined, (e: unknown) => e);
  t.match(multicast, { code: 'EINVAL' }, 'an IPv4 multicast destination');
  t.match(await env.ns.tryExec('ipvsadm', ['-a', '-t', '10.0.0.1:80', '-r', '224.0.0.5:80', '-m']), notUnicast, 'ipvsadm too');

  // `ip netns add` leaves lo down and the namespace without a routing table.
  const bare = await freshNetns(t, 'ipvslo', { loopback: 'down' });
  const ipvs = await Ipvs.open({ netns: bare.path });
  t.teardown(() => ipvs.close());
  await bare.exec('ipvsadm', ['-A', '-t', '10.0.0.1:80', '-s', 'rr']);
  const dest = { address: '10.0.1.2', port: 80, forward: 'masq' } as const;
  const before = await ipvs.addDestination(tcp80, dest).then(() => undefined, (e: unknown) => e);
  t.match(before, { code: 'EINVAL', hint: /`ip link set lo up` there/ }, 'an IPv4 destination while lo was never up');
  t.match(await bare.tryExec('ipvsadm', ['-a', '-t', '10.0.0.1:80', '-r', '10.0.1.3:80', '-m']), notUnicast, 'ipvsadm is refused one too');
  await bare.exec('ip', ['link', 'set', 'lo', 'up']);
  await ipvs.addDestination(tcp80, dest);
  await bare.exec('ipvsadm', ['-a', '-t', '10.0.0.1:80', '-r', '10.0.1.3:80', '-m']);
  t.same(sortedLines(await bare.exec('ipvsadm', ['-Sn'])), ['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 1', '-a -t 10.0.0.1:80 -r 10.0.1.3:80 -m -w 1'], 'both take it once lo is up');
});

t.test('invalid input throws before anything is sent', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(BASE);
  const before = env.ipvs.counters();
  const v6 = { protocol: 'tcp', address: 'fd00::1', port: 80 } as const;
  // The rule (lib/util/check.ts): the wrong kind, a value the field does not take, a number out of range.
  const TYPE = ['TypeError', 'ERR_INVALID_ARG_TYPE'] as const;
  const VALUE = ['TypeError', 'ERR_INVALID_ARG_VALUE'] as const;
  const RANGE = ['RangeError', 'ERR_OUT_OF_RANGE'] as const;
  const cases: Array<[string, () => Promise<unknown>, readonly [string, string], string]> = [
    ['bad service address', () => env.ipvs.addService({ protocol: 'tcp', address: '10.0.0.256', port: 80 }), VALUE, 'service.address'],
    ['IPv6 zone', () => env.ipvs.addService({ protocol: 'tcp', address: 'fe80::1%eth0', port: 80 }), VALUE, 'service.address'],
    ['port 70000', () => env.ipvs.addService({ protocol: 'tcp', address: '10.0.0.2', port: 70000 }), RANGE, 'service.port'],
    ['bad protocol', () => env.ipvs.addService({ protocol: 'icmp', address: '10.0.0.2', port: 1 } as never), VALUE, 'service.protocol'],
    ['fwmark 0', () => env.ipvs.addService({ fwmark: 0, family: 'inet' }), RANGE, 'service.fwmark'],
    ['persistence timeout 0', () => env.ipvs.addService({ ...tcp80, port: 81, persistent: { timeout: 0 } }), RANGE, 'service.persistent.timeout'],
    ['bad IPv4 netmask', () => env.ipvs.addService({ ...tcp80, port: 81, persistent: { timeout: 5, netmask: '255.0.255.0' } }), VALUE, 'service.persistent.netmask'],
    ['IPv6 prefix 129', () => env.ipvs.addService({ ...v6, persistent: { timeout: 5, netmask: 129 } }), RANGE, 'service.persistent.netmask'],
    ['bad destination address', () => env.ipvs.addDestination(tcp80, { address: 'backend', port: 80 }), VALUE, 'destination.address'],
    ['destination port 70000', () => env.ipvs.addDestination(tcp80, { address: '10.0.1.3', port: 70000 }), RANGE, 'destination.port'],
    ['unknown forward method', () => env.ipvs.addDestination(tcp80, { address: '10.0.1.3', port: 80, forward: 'nat' as never }), VALUE, 'destination.forward'],
    ['IPv4 service, IPv6 destination, masq', () => env.ipvs.addDestination(tcp80, { address: 'fd00:1::2', port: 80, forward: 'masq' }), VALUE, 'destination.address'],
    ['IPv6 service, IPv4 destination, route', () => env.ipvs.addDestination(v6, { address: '10.0.1.3', port: 80, forward: 'route' }), VALUE, 'destination.address'],
    ['negative weight', () => env.ipvs.updateDestination(tcp80, { address: '10.0.1.2', port: 80, weight: -1 }), RANGE, 'destination.weight'],
    ['tunnel details without tunnel forwarding', () => env.ipvs.addDestination(tcp80, { address: '10.0.1.3', port: 80, tunnel: { type: 'gre' } }), VALUE, 'destination.tunnel'],
    ['GUE without a port', () => env.ipvs.addDestination(tcp80, { address: '10.0.1.3', port: 80, forward: 'tunnel', tunnel: { type: 'gue' } }), TYPE, 'destination.tunnel.port'],
    ['unknown tunnel type', () => env.ipvs.addDestination(tcp80, { address: '10.0.1.3', port: 80, forward: 'tunnel', tunnel: { type: 'vxlan' as never } }), VALUE, 'destination.tunnel.type'],
    ['scheduler name with a slash', () => env.ipvs.addService({ ...tcp80, port: 81, scheduler: '../rr' }), VALUE, 'service.scheduler'],
    ['bad key for getService', () => env.ipvs.getService({ protocol: 'tcp', address: '::g', port: 1 }), VALUE, 'service.address'],
    ['bad key for deleteService', () => env.ipvs.deleteService({ protocol: 'tcp', address: '10.0.0.1', port: -1 }), RANGE, 'service.port'],
    ['bad op in a batch', () => env.ipvs.apply([{ op: 'addService', service: { ...tcp80, port: 81 } }, { op: 'addService', service: { ...tcp80, port: 99999 } }]), RANGE, 'ops[1].service.port'],
    ['unknown batch op', () => env.ipvs.apply([{ op: 'addThing' } as never]), VALUE, 'ops[0].op'],
    ['daemon state', () => env.ipvs.startDaemon({ state: 'primary' as never, interface: 'lo' }), VALUE, 'daemon.state'],
  ];
  for (const [what, call, [name, code], field] of cases) {
    const err = await call().then(() => undefined, (e: unknown) => e);
    t.match(err, { name, code, field }, `${what}: ${name} ${code} at ${field}`);
    t.ok(String((err as Error)?.message).startsWith(`${field} must be `), `${what}: the message names ${field}`);
  }
  const after = env.ipvs.counters();
  t.equal(after.sendmsgCalls, before.sendmsgCalls, 'no system call was made');
  t.equal(after.messagesSent, before.messagesSent, 'no message was sent');
  t.same(await env.save(), [...BASE].sort(), 'ipvsadm -Sn unchanged (the valid first op of the bad batch was not sent either)');
});

t.test('open and close', async (t) => {
  const missing = '/run/netns/ipvs-no-such-namespace';
  const err = await Ipvs.open({ netns: missing }).catch((e: unknown) => e);
  t.type(err, NetlinkError, 'a missing namespace path');
  t.match(err, { code: 'ENOENT', errno: constants.errno.ENOENT, operation: 'Ipvs.open' });

  await t.rejects(Ipvs.open({ netns: '' }), TypeError, 'an empty netns path');
  await t.rejects(Ipvs.open({ timeoutMs: 0 }), RangeError, 'timeoutMs 0');

  const env = await ipvsEnv(t);
  // A second handle on the same namespace sees and changes the same table.
  const other = await Ipvs.open({ netns: env.ns.path });
  t.teardown(() => other.close());
  await env.ipvs.addService({ ...tcp80, scheduler: 'rr' });
  t.match(await other.getService(tcp80), { scheduler: 'rr' }, 'the second handle sees the first one\'s service');
  await other.addDestination(tcp80, { address: '10.0.1.2', port: 80 });
  t.equal((await env.ipvs.listDestinations(tcp80)).length, 1, 'and the first sees the second one\'s destination');

  other.close();
  other.close();
  t.pass('closing twice is harmless');
  for (const [what, call] of [
    ['listServices', () => other.listServices()],
    ['addService', () => other.addService({ ...tcp80, port: 81 })],
    ['apply', () => other.apply([{ op: 'deleteService', service: tcp80 }])],
    ['info', () => other.info()],
  ] as const) {
    await t.rejects(call().then(() => undefined), { message: /closed/ }, `${what} on a closed handle rejects, saying so`);
  }
  t.same(await env.save(), ['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 1'], 'the closed handle sent nothing; the open one still works');
  t.ok(await env.ipvs.getService(tcp80));
});

t.test('200 concurrent callers on one handle', async (t) => {
  const env = await ipvsEnv(t);
  const expected: string[] = [];
  const calls: Array<Promise<unknown>> = [];
  for (let i = 0; i < 100; i++) {
    const key = { protocol: i % 2 ? 'udp' : 'tcp', address: `10.4.0.${i + 1}`, port: 80 } as const;
    // Not awaited: all 200 changes (and some reads) are in flight at once.
    calls.push(env.ipvs.addService({ ...key, scheduler: 'rr' }));
    calls.push(env.ipvs.addDestination(key, { address: `10.0.1.${(i % 200) + 2}`, port: 8080, weight: i }));
    if (i % 10 === 0) calls.push(env.ipvs.listServices());
    expected.push(`-A -${i % 2 ? 'u' : 't'} 10.4.0.${i + 1}:80 -s rr`, `-a -${i % 2 ? 'u' : 't'} 10.4.0.${i + 1}:80 -r 10.0.1.${(i % 200) + 2}:8080 -m -w ${i}`);
  }
  const settled = await Promise.allSettled(calls);
  t.same(settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason)), [], 'every call succeeded');
  t.same(await env.save(), expected.sort(), 'ipvsadm shows all 100 services and 100 destinations');
  t.equal((await env.ipvs.listServices()).length, 100);
});
