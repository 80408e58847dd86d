// Deleting through the Conntrack client, checked with the conntrack tool:
// what the library deletes is gone from `conntrack -L`, and nothing else
// is; many deletes go in few sendmsg calls and each reports its own
// result, a refusal in the middle losing nothing; an id guards against
// deleting a newer entry with the same tuple; a family flush leaves the
// other family alone (the tool's `-F -f` does not). Host and sandbox.
import t from 'tap';

import { Conntrack } from '../../lib/index.js';
import { natNode, POD_IP, SERVICE_IP, toolIds, toolList, udpBurst } from '../support/conntrack-env.js';
import { freshNetns, type Netns } from '../support/netns.js';

async function write(ns: Netns, ...args: string[]): Promise<void> {
  await ns.exec('conntrack', ['-I', '-t', '500', ...args]);
}

const udp = (sport: number, src = '10.0.0.1', dst = '10.0.0.2') => ['-p', 'udp', '-s', src, '-d', dst, '--sport', String(sport), '--dport', '53'];

t.test('delete() and deleteMany(): gone from conntrack -L, each key its own result', async (t) => {
  const ns = await freshNetns(t, 'ct');
  for (let i = 0; i < 5; i++) await write(ns, ...udp(1000 + i));
  await write(ns, '-p', 'udp', '-s', 'fd00::1', '-d', 'fd00::2', '--sport', '1', '--dport', '2');
  const ct = await Conntrack.open({ netns: ns.path });
  t.teardown(() => ct.close());
  const all = await ct.list();
  const [a, b, c, d] = all.filter((e) => e.family === 'inet').sort((x, y) => x.orig.srcPort! - y.orig.srcPort!);

  t.equal(await ct.delete(a), true, 'delete() of an entry read back: deleted');
  t.notOk((await toolIds(ns)).includes(String(a.id)), 'the tool no longer lists it');
  t.equal(await ct.delete(a), false, 'deleting it again: false (no such entry)');

  // A batch with an entry already gone in the middle: the others still go.
  const report = await ct.deleteMany([b, a, { protocol: 'udp', orig: c.orig }, { ...d, id: (d.id! + 1) >>> 0 }]);
  t.same(report.missing, [1, 3], 'the gone entry, and the one whose id is not the key\'s, are missing');
  t.equal(report.deleted, 2, 'the other two were deleted');
  t.same(report.failures, [], 'no other failure');
  const left = await toolList(ns);
  t.same(left.map((e) => `${e.orig.src}:${e.orig.sport}`).sort(), ['10.0.0.1:1003', '10.0.0.1:1004', 'fd00::1:1'], 'conntrack -L shows exactly the entries not deleted');
});

t.test('deleteMatching(): one dump, every match deleted in few sendmsg calls, nothing else touched', async (t) => {
  const c = await natNode(t);
  const N = 300;
  await udpBurst(c.client, SERVICE_IP, 53, N);
  await udpBurst(c.client, POD_IP, 9, 1); // one more UDP flow, not to the service
  const ct = await Conntrack.open({ netns: c.node.path });
  t.teardown(() => ct.close());
  const before = await toolList(c.node);
  const toService = before.filter((e) => e.orig.dst === SERVICE_IP).length;
  t.ok(toService >= N, `the burst made ${toService} entries to the service`);

  const calls = ct.counters().sendmsgCalls;
  const r = await ct.deleteMatching({ protocol: 'udp', orig: { dst: SERVICE_IP, dstPort: 53 }, reply: { src: POD_IP } });
  const sendmsgs = ct.counters().sendmsgCalls - calls;
  t.equal(r.matched.length, toService, 'every entry to the service matched');
  t.equal(r.deleted, toService, 'and was deleted');
  t.same([r.missing, r.failures], [[], []], 'no entry missing or refused');
  t.ok(sendmsgs <= 1 + Math.ceil(N / 100), `${sendmsgs} sendmsg calls for a dump and ${r.deleted} deletes`);
  const after = await toolList(c.node);
  t.equal(after.filter((e) => e.orig.dst === SERVICE_IP).length, 0, 'conntrack -L shows none left to the service');
  t.same(after.map((e) => e.rest.id).sort(), before.filter((e) => e.orig.dst !== SERVICE_IP).map((e) => e.rest.id).sort(), 'and every other entry still there');
  t.equal((await ct.deleteMatching({ protocol: 'udp', orig: { dst: SERVICE_IP } })).matched.length, 0, 'a second pass finds nothing');
});

t.test('flush(family) empties one family only; flush() all', async (t) => {
  const ns = await freshNetns(t, 'ct');
  await write(ns, ...udp(1));
  await write(ns, ...udp(2));
  await write(ns, '-p', 'udp', '-s', 'fd00::1', '-d', 'fd00::2', '--sport', '1', '--dport', '2');
  const ct = await Conntrack.open({ netns: ns.path });
  t.teardown(() => ct.close());
  await ct.flush('inet6');
  t.same((await toolList(ns)).map((e) => e.family), ['ipv4', 'ipv4'], 'flush(\'inet6\'): conntrack -L shows the IPv4 entries only');
  await write(ns, '-p', 'udp', '-s', 'fd00::1', '-d', 'fd00::2', '--sport', '1', '--dport', '2');
  await ct.flush('inet');
  t.same((await toolList(ns)).map((e) => e.family), ['ipv6'], 'flush(\'inet\'): the IPv6 entry only');
  await ct.flush();
  t.same(await toolList(ns), [], 'flush(): nothing');
});
