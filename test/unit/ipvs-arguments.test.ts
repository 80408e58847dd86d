// Ipvs's argument checks without a kernel: an Ipvs over a stub of the
// addon's handle that counts what reaches it. Each bad call throws the
// checking module's error (its class, code and field per the rule in
// lib/util/check.ts) and nothing reaches the stub; batches name the op.
// The kernel tests (ipvs-bad-input, ipvs-errors) show the same against
// the real kernel, with ipvsadm's view unchanged.
import t from 'tap';

import { Ipvs, type BatchOp, type Destination, type ServiceWithDestinations } from '../../lib/index.js';
import { ArgumentRangeError, ArgumentTypeError } from '../../lib/util/check.js';
import { openHandle } from '../../lib/netlink/client.js';
import { stubIpvs } from '../support/ipvs-stub.js';

function stubbed(): { ipvs: Ipvs; calls: () => number } {
  let calls = 0;
  const counted = async () => {
    calls++;
    return { failures: [], records: new ArrayBuffer(0), strings: [] };
  };
  return { ipvs: stubIpvs({ execute: counted, dump: counted }), calls: () => calls };
}

const key = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;
const dest = { address: '10.0.1.2', port: 80 } as const;
const bad = (v: unknown) => v as never;

type Code = 'ERR_INVALID_ARG_TYPE' | 'ERR_INVALID_ARG_VALUE' | 'ERR_OUT_OF_RANGE';
const rows: Array<[string, (ipvs: Ipvs) => Promise<unknown>, Code, string]> = [
  ["port '80'", (i) => i.addService(bad({ ...key, port: '80' })), 'ERR_INVALID_ARG_TYPE', 'service.port'],
  ['port 1.5', (i) => i.addService({ ...key, port: 1.5 }), 'ERR_OUT_OF_RANGE', 'service.port'],
  ['destination port 1.5', (i) => i.updateDestination(key, { ...dest, port: 1.5 }), 'ERR_OUT_OF_RANGE', 'destination.port'],
  ['no port', (i) => i.getService(bad({ protocol: 'tcp', address: '10.0.0.1' })), 'ERR_INVALID_ARG_TYPE', 'service.port'],
  ["protocol 'icmp'", (i) => i.addService(bad({ ...key, protocol: 'icmp' })), 'ERR_INVALID_ARG_VALUE', 'service.protocol'],
  ['address 10.0.0.300', (i) => i.deleteService({ ...key, address: '10.0.0.300' }), 'ERR_INVALID_ARG_VALUE', 'service.address'],
  ['address 5', (i) => i.deleteService(bad({ ...key, address: 5 })), 'ERR_INVALID_ARG_TYPE', 'service.address'],
  ['fwmark and address', (i) => i.addService(bad({ fwmark: 5, family: 'inet', address: '10.0.0.1' })), 'ERR_INVALID_ARG_VALUE', 'service.address'],
  ['family contradicting the address', (i) => i.addService(bad({ ...key, family: 'inet6' })), 'ERR_INVALID_ARG_VALUE', 'service.family'],
  ["flags.onePacket 'yes'", (i) => i.addService(bad({ ...key, flags: { onePacket: 'yes' } })), 'ERR_INVALID_ARG_TYPE', 'service.flags.onePacket'],
  ['flags.bogus', (i) => i.addService(bad({ ...key, flags: { bogus: true } })), 'ERR_INVALID_ARG_VALUE', 'service.flags.bogus'],
  ['schedular (misspelt)', (i) => i.addService(bad({ ...key, schedular: 'rr' })), 'ERR_INVALID_ARG_VALUE', 'service.schedular'],
  ['scheduler 16 bytes', (i) => i.addService({ ...key, scheduler: 'x'.repeat(16) }), 'ERR_OUT_OF_RANGE', 'service.scheduler'],
  ["scheduler '../rr'", (i) => i.addService({ ...key, scheduler: '../rr' }), 'ERR_INVALID_ARG_VALUE', 'service.scheduler'],
  ['persistent.timeout 0', (i) => i.addService({ ...key, persistent: { timeout: 0 } }), 'ERR_OUT_OF_RANGE', 'service.persistent.timeout'],
  ["IPv4 netmask '255.0.255.0'", (i) => i.addService({ ...key, persistent: { timeout: 5, netmask: '255.0.255.0' } }), 'ERR_INVALID_ARG_VALUE', 'service.persistent.netmask'],
  ['IPv6 netmask as a mask', (i) => i.addService({ ...key, address: 'fd00::1', persistent: { timeout: 5, netmask: '255.255.255.0' } }), 'ERR_INVALID_ARG_TYPE', 'service.persistent.netmask'],
  ['IPv6 prefix 129', (i) => i.addService({ ...key, address: 'fd00::1', persistent: { timeout: 5, netmask: 129 } }), 'ERR_OUT_OF_RANGE', 'service.persistent.netmask'],
  ['IPv6 destination for an IPv4 service, masq', (i) => i.addDestination(key, { address: 'fd00::2', port: 80 }), 'ERR_INVALID_ARG_VALUE', 'destination.address'],
  ["forward 'nat'", (i) => i.addDestination(key, bad({ ...dest, forward: 'nat' })), 'ERR_INVALID_ARG_VALUE', 'destination.forward'],
  ['tunnel without tunnel forwarding', (i) => i.addDestination(key, { ...dest, tunnel: { type: 'gre' } }), 'ERR_INVALID_ARG_VALUE', 'destination.tunnel'],
  ['GUE without its port', (i) => i.addDestination(key, { ...dest, forward: 'tunnel', tunnel: { type: 'gue' } }), 'ERR_INVALID_ARG_TYPE', 'destination.tunnel.port'],
  ['GUE port 0', (i) => i.addDestination(key, { ...dest, forward: 'tunnel', tunnel: { type: 'gue', port: 0 } }), 'ERR_OUT_OF_RANGE', 'destination.tunnel.port'],
  ['weight -1', (i) => i.addDestination(key, { ...dest, weight: -1 }), 'ERR_OUT_OF_RANGE', 'destination.weight'],
  ["apply('x')", (i) => i.apply(bad('x')), 'ERR_INVALID_ARG_TYPE', 'ops'],
  ['apply([null])', (i) => i.apply(bad([null])), 'ERR_INVALID_ARG_TYPE', 'ops[0]'],
  ["apply([{ op: 'frob' }])", (i) => i.apply(bad([{ op: 'frob', service: key }])), 'ERR_INVALID_ARG_VALUE', 'ops[0].op'],
  ['apply([{ op: 5 }])', (i) => i.apply(bad([{ op: 5, service: key }])), 'ERR_INVALID_ARG_TYPE', 'ops[0].op'],
  ['apply([good, port 1.5])', (i) => i.apply([{ op: 'addService', service: key }, { op: 'addService', service: { ...key, port: 1.5 } }]), 'ERR_OUT_OF_RANGE', 'ops[1].service.port'],
  ['apply([read, no service])', (i) => i.apply(bad([{ op: 'listDestinations', service: key }, { op: 'deleteService' }])), 'ERR_INVALID_ARG_TYPE', 'ops[1].service'],
  ["dump({ stats: 'no' })", (i) => i.dump(bad({ stats: 'no' })), 'ERR_INVALID_ARG_TYPE', 'options.stats'],
  ['dump({ stat: false }) (misspelt)', (i) => i.dump(bad({ stat: false })), 'ERR_INVALID_ARG_VALUE', 'options.stat'],
  ['dump(null)', (i) => i.dump(bad(null)), 'ERR_INVALID_ARG_TYPE', 'options'],
  ['setTimeouts({ tcp: 1.5 })', (i) => i.setTimeouts({ tcp: 1.5 }), 'ERR_OUT_OF_RANGE', 'timeouts.tcp'],
  ['setTimeouts({ sctp })', (i) => i.setTimeouts(bad({ sctp: 5 })), 'ERR_INVALID_ARG_VALUE', 'timeouts.sctp'],
  ["startDaemon({ state: 'primary' })", (i) => i.startDaemon(bad({ state: 'primary', interface: 'lo' })), 'ERR_INVALID_ARG_VALUE', 'daemon.state'],
  ["startDaemon({ interface: 'a/b' })", (i) => i.startDaemon({ state: 'master', interface: 'a/b' }), 'ERR_INVALID_ARG_VALUE', 'daemon.interface'],
  ['startDaemon({ ttl: 256 })', (i) => i.startDaemon({ state: 'master', interface: 'lo', ttl: 256 }), 'ERR_OUT_OF_RANGE', 'daemon.ttl'],
  ['stopDaemon(1)', (i) => i.stopDaemon(bad(1)), 'ERR_INVALID_ARG_TYPE', 'state'],
];

t.test('each bad argument: the rule\'s error, naming the field, and nothing reaches the addon', async (t) => {
  const { ipvs, calls } = stubbed();
  for (const [what, call, code, field] of rows) {
    const err = await call(ipvs).then(
      () => undefined,
      (e: unknown) => e,
    );
    const kind = code === 'ERR_OUT_OF_RANGE' ? ArgumentRangeError : ArgumentTypeError;
    t.type(err, kind, `${what}: ${kind.name}`);
    t.match(err, { code, field }, `${what}: ${code} at ${field}`);
    t.ok((err as Error).message.startsWith(`${field} must be `), `${what}: "${(err as Error).message}"`);
  }
  t.equal(calls(), 0, 'no call reached the addon');
});

t.test('what a read returns is taken back by the writes', async (t) => {
  const { ipvs, calls } = stubbed();
  const stats = { conns: 0n, inPackets: 0n, outPackets: 0n, inBytes: 0n, outBytes: 0n, cps: 0n, inPps: 0n, outPps: 0n, inBps: 0n, outBps: 0n };
  // The shapes dump() returns, every field as the reply reader fills it.
  const destination: Destination = { ...dest, family: 'inet', weight: 1, forward: 'masq', upperThreshold: 0, lowerThreshold: 0, activeConns: 0, inactiveConns: 0, persistentConns: 0, stats };
  const service: ServiceWithDestinations = {
    ...key,
    family: 'inet',
    scheduler: 'rr',
    flags: { onePacket: false, sched1: false, sched2: false, sched3: false },
    persistent: { timeout: 60, netmask: '255.255.255.0' },
    stats,
    destinations: [destination],
  };
  const ops: BatchOp[] = [
    { op: 'addService', service },
    { op: 'addDestination', service, destination },
    { op: 'updateDestination', service, destination },
  ];
  t.same(await ipvs.apply(ops), [{ ok: true }, { ok: true }, { ok: true }]);
  await ipvs.addService(service);
  t.equal(calls(), 2, 'both calls were sent');
});

t.test('open options: checked before anything is opened', async (t) => {
  let made = 0;
  const make = () => {
    made++;
    return {
      open: async () => undefined,
      close() {},
      counters: () => ({ sendmsgCalls: 0, recvCalls: 0, messagesSent: 0, messagesReceived: 0, dumpsRestarted: 0 }),
      releaseBuffers: () => 0,
      testBufferResidency: () => 0,
    };
  };
  const cases: Array<[unknown, Code, string]> = [
    [null, 'ERR_INVALID_ARG_TYPE', 'options'],
    [{ netns: 5 }, 'ERR_INVALID_ARG_TYPE', 'options.netns'],
    [{ netns: '' }, 'ERR_INVALID_ARG_VALUE', 'options.netns'],
    [{ timeoutMs: 0 }, 'ERR_OUT_OF_RANGE', 'options.timeoutMs'],
    [{ timeoutMs: 1.5 }, 'ERR_OUT_OF_RANGE', 'options.timeoutMs'],
    [{ timeoutMs: 'fast' }, 'ERR_INVALID_ARG_TYPE', 'options.timeoutMs'],
    [{ netNs: '/run/netns/x' }, 'ERR_INVALID_ARG_VALUE', 'options.netNs'],
  ];
  for (const [options, code, field] of cases) {
    await t.rejects(openHandle(make, options, 'Ipvs.open'), { code, field }, `${JSON.stringify(options)}: ${code} at ${field}`);
  }
  const unknown = await openHandle(make, { netNs: 'x' }, 'Ipvs.open').catch((e: Error) => e);
  t.notMatch((unknown as Error).message, /test/, 'the test-only options are not named to callers');
  t.equal(made, 0, 'no handle was made');
  await openHandle(make, { netns: '/run/netns/x', timeoutMs: 100 }, 'Ipvs.open');
  t.equal(made, 1, 'good options open a handle');
});
