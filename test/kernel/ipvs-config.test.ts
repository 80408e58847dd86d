/**
 * The table-wide IPVS commands against the kernel, cross-checked with
 * ipvsadm: info, timeouts, sync daemons, zero and flush.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { NetlinkError, type Ipvs, type ServiceKey } from '../../lib/index.js';
import { writeStopDaemon } from '../../lib/ipvs/client.js';
import { CMD } from '../../lib/ipvs/constants.js';
import { RequestWriter } from '../../lib/ipvs/request-writer.js';
import { type IpvsEnv, ipvsEnv } from '../support/ipvs-env.js';

t.test('info: version 1.2.1 and the connection table size ipvsadm prints', async (t) => {
  const env = await ipvsEnv(t);
  const info = await env.ipvs.info();
  t.equal(info.version, '1.2.1');
  const header = (await env.ipvsadm('-Ln')).split('\n')[0];
  t.equal(header, `IP Virtual Server version ${info.version} (size=${info.connTableSize})`, 'ipvsadm -Ln header');
  t.ok(info.connTableSize > 0 && Number.isInteger(info.connTableSize));
});

t.test('timeouts: library ↔ ipvsadm', async (t) => {
  const env = await ipvsEnv(t);
  const shown = async () => (await env.ipvsadm('-L', '--timeout')).trim();
  t.equal(await shown(), 'Timeout (tcp tcpfin udp): 900 120 300', 'a fresh namespace has the kernel defaults');
  t.strictSame(await env.ipvs.getTimeouts(), { tcp: 900, tcpFin: 120, udp: 300 });

  await env.ipvs.setTimeouts({ tcp: 3600, tcpFin: 30, udp: 45 });
  t.equal(await shown(), 'Timeout (tcp tcpfin udp): 3600 30 45', 'library → ipvsadm');

  await env.ipvs.setTimeouts({ udp: 77 });
  t.equal(await shown(), 'Timeout (tcp tcpfin udp): 3600 30 77', 'a timeout left out is unchanged');

  await env.ipvsadm('--set', '123', '45', '6');
  t.strictSame(await env.ipvs.getTimeouts(), { tcp: 123, tcpFin: 45, udp: 6 }, 'ipvsadm → library');

  await t.rejects(env.ipvs.setTimeouts({ tcp: -1 }), RangeError, 'a negative timeout is refused before sending');
  await t.rejects(env.ipvs.setTimeouts({ sctp: 5 } as never), { name: 'TypeError', message: /timeouts\.sctp/ });
  t.equal(await shown(), 'Timeout (tcp tcpfin udp): 123 45 6', 'refused calls changed nothing');
});

t.test('sync daemons: start, list and stop, both ways', async (t) => {
  const env = await ipvsEnv(t);
  const shown = async () => (await env.ipvsadm('-L', '--daemon')).split('\n').filter(Boolean).sort();
  t.strictSame(await env.ipvs.listDaemons(), [], 'none at first');

  await env.ipvs.startDaemon({ state: 'master', interface: 'lo', syncId: 3 });
  await env.ipvs.startDaemon({ state: 'backup', interface: 'lo', syncId: 4, maxLen: 1000, group: '239.1.1.1', port: 9000, ttl: 3 });
  // The kernel keeps at least 1024 for a backup's receive length (ipvsadm
  // --sync-maxlen 1000 gets the same); a master defaults to what the MTU allows.
  t.same(await shown(), [
    'backup sync daemon (mcast=lo, syncid=4, maxlen=1024, group=239.1.1.1, port=9000, ttl=3)',
    'master sync daemon (mcast=lo, syncid=3, maxlen=1472, group=224.0.0.81, port=8848, ttl=1)',
  ], 'library → ipvsadm -L --daemon');
  const byState = (a: { state: string }, b: { state: string }) => (a.state < b.state ? -1 : 1);
  t.strictSame([...(await env.ipvs.listDaemons())].sort(byState), [
    { state: 'backup', interface: 'lo', syncId: 4, maxLen: 1024, group: '239.1.1.1', port: 9000, ttl: 3 },
    { state: 'master', interface: 'lo', syncId: 3, maxLen: 1472, group: '224.0.0.81', port: 8848, ttl: 1 },
  ], 'listDaemons');

  const dup = await env.ipvs.startDaemon({ state: 'master', interface: 'lo' }).catch((e: unknown) => e);
  t.match(dup, { name: 'NetlinkError', code: 'EEXIST', operation: 'startDaemon' }, 'a second master is EEXIST');

  await env.ipvs.stopDaemon('master');
  t.same(await shown(), ['backup sync daemon (mcast=lo, syncid=4, maxlen=1024, group=239.1.1.1, port=9000, ttl=3)'], 'only the master stopped');
  await env.ipvsadm('--stop-daemon', 'backup');
  t.strictSame(await env.ipvs.listDaemons(), [], 'ipvsadm stopped the backup; the library sees none');

  await env.ipvsadm('--start-daemon', 'master', '--mcast-interface', 'lo', '--syncid', '9', '--sync-maxlen', '1200', '--mcast-group', '239.2.2.2', '--mcast-port', '7000', '--mcast-ttl', '2');
  t.strictSame(await env.ipvs.listDaemons(), [{ state: 'master', interface: 'lo', syncId: 9, maxLen: 1200, group: '239.2.2.2', port: 7000, ttl: 2 }], 'ipvsadm → listDaemons');
  await env.ipvs.stopDaemon('master');
  t.same(await shown(), [], 'the library stopped what ipvsadm started');
  await env.ipvs.startDaemon({ state: 'master', interface: 'lo', syncId: 200, maxLen: 1000, port: 8000, ttl: 9 });
  t.same(await shown(), ['master sync daemon (mcast=lo, syncid=200, maxlen=1000, group=224.0.0.81, port=8000, ttl=9)'], 'a master keeps its maxlen');
});

t.test('a stop that finds the daemon thread not yet run is answered, and the daemon is gone', async (t) => {
  // A start and a stop in one sendmsg: the stop comes before the new thread
  // has ever run, so kthread_stop returns EINTR and the kernel sends no
  // answer for the DEL_DAEMON itself. stopDaemon's requests (the same
  // writeStopDaemon) must still be answered, within the handle's timeout.
  const env = await ipvsEnv(t, { timeoutMs: 10_000 });
  const each = (env.ipvs as unknown as { each(w: RequestWriter, operation: string): Promise<unknown[]> }).each.bind(env.ipvs);
  for (let i = 1; i <= 3; i++) {
    const w = new RequestWriter();
    w.begin(CMD.NEW_DAEMON);
    w.daemonConfig({ state: 'master', interface: 'lo', syncId: i });
    writeStopDaemon(w, 'master');
    t.equal((await each(w, 'startAndStop')).length, w.count, `start and stop ${i}: every request answered`);
    t.strictSame(await env.ipvs.listDaemons(), [], `start and stop ${i}: no daemon left`);
  }
  t.equal((await env.ipvsadm('-L', '--daemon')).trim(), '', 'ipvsadm -L --daemon shows none');
  t.match(await env.ipvs.stopDaemon('master').catch((e: unknown) => e), { name: 'NetlinkError', code: 'ESRCH' }, 'a stop with nothing to stop is still ESRCH');
});

/** Sends UDP datagrams from inside the namespace to a virtual service. */
async function sendUdp(env: IpvsEnv, address: string, port: number, count: number): Promise<void> {
  const script = `for i in $(seq ${count}); do echo ping >/dev/udp/${address}/${port}; done`;
  await env.ns.exec('bash', ['-c', script]);
}

/**
 * The 6.1 kernel folds its per-CPU counters into what it reports from a
 * timer (every 2 s), so wait — not assert — until the traffic shows.
 */
async function untilCounted(ipvs: Ipvs, keys: ServiceKey[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const services = await Promise.all(keys.map((k) => ipvs.getService(k)));
    if (services.every((s) => s && s.stats.inPackets > 0n)) return;
    await sleep(100);
  }
  throw new Error('the kernel never counted the test traffic');
}

t.test('zero: one service, then all', async (t) => {
  const env = await ipvsEnv(t);
  // Local traffic to the virtual addresses goes through IPVS (LOCAL_OUT) to
  // the destinations on the dummy link, which swallows it.
  await env.ns.exec('ip', ['route', 'add', '10.0.0.0/24', 'dev', 'd0']);
  const a = { protocol: 'udp', address: '10.0.0.1', port: 53 } as const;
  const b = { protocol: 'udp', address: '10.0.0.2', port: 53 } as const;
  await env.restore(['-A -u 10.0.0.1:53 -s rr', '-a -u 10.0.0.1:53 -r 10.0.1.2:53 -m', '-A -u 10.0.0.2:53 -s rr', '-a -u 10.0.0.2:53 -r 10.0.1.3:53 -m']);
  await sendUdp(env, a.address, a.port, 3);
  await sendUdp(env, b.address, b.port, 4);
  await untilCounted(env.ipvs, [a, b]);

  const stats = async () => env.list('-Ln', '--stats', '--exact');
  t.same(await stats(), [
    '-> 10.0.1.2:53 3 3 0 99 0',
    '-> 10.0.1.3:53 4 4 0 132 0',
    'UDP 10.0.0.1:53 3 3 0 99 0',
    'UDP 10.0.0.2:53 4 4 0 132 0',
  ], 'ipvsadm sees the traffic: one connection per datagram (each from a new port), 33-byte packets (IP + UDP + "ping\\n")');
  const sa = await env.ipvs.getService(a);
  t.match(sa?.stats, { conns: 3n, inPackets: 3n, outPackets: 0n, inBytes: 99n, outBytes: 0n }, 'the library reads the same counters');
  t.match((await env.ipvs.listDestinations(b))[0].stats, { conns: 4n, inPackets: 4n, inBytes: 132n }, 'and the destination counters');

  await env.ipvs.zero(a);
  t.same(await stats(), [
    '-> 10.0.1.2:53 0 0 0 0 0',
    '-> 10.0.1.3:53 4 4 0 132 0',
    'UDP 10.0.0.1:53 0 0 0 0 0',
    'UDP 10.0.0.2:53 4 4 0 132 0',
  ], 'zero(key) cleared only that service and its destinations');
  t.match((await env.ipvs.getService(a))?.stats, { conns: 0n, inPackets: 0n, inBytes: 0n });

  await env.ipvs.zero();
  t.same(await stats(), [
    '-> 10.0.1.2:53 0 0 0 0 0',
    '-> 10.0.1.3:53 0 0 0 0 0',
    'UDP 10.0.0.1:53 0 0 0 0 0',
    'UDP 10.0.0.2:53 0 0 0 0 0',
  ], 'zero() cleared everything');
  t.match((await env.ipvs.getService(b))?.stats, { conns: 0n, inPackets: 0n, inBytes: 0n });

  const err = await env.ipvs.zero({ protocol: 'tcp', address: '10.0.0.1', port: 53 }).catch((e: unknown) => e);
  t.type(err, NetlinkError);
  t.match(err, { code: 'ESRCH', operation: 'zero' }, 'zeroing a missing service is ESRCH');
});

t.test('flush', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m', '-A -f 1 -6 -s rr', '-A -u [fd00::1]:53 -s wlc']);
  t.equal((await env.save()).length, 4);
  await env.ipvs.flush();
  t.same(await env.save(), [], 'ipvsadm -Sn is empty');
  t.same(await env.list('-Ln'), [], 'ipvsadm -Ln lists nothing');
  t.strictSame(await env.ipvs.listServices(), []);
  t.strictSame(await env.ipvs.dump(), []);
  await env.ipvs.flush();
  t.pass('flushing an empty table is fine');
  // ipvsadm -C, then the library sees an empty table too.
  await env.ipvs.addService({ protocol: 'tcp', address: '10.0.0.9', port: 80 });
  await env.ipvsadm('-C');
  t.strictSame(await env.ipvs.listServices(), [], 'after ipvsadm -C');
});
