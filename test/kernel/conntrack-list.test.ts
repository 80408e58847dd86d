// The Conntrack client against a real table filled by real packets and by
// the conntrack tool, both ways: what the library lists is what
// `conntrack -L -o extended` prints, field by field (timeouts may differ
// by the seconds between the two reads); what the tool writes
// (`conntrack -I`) the library reads back; the counters are those of
// `conntrack -S` and `-C`. Runs on the host kernel and in the sandbox.
import t, { type Test } from 'tap';

import { Conntrack, type ConntrackEntry, type ConntrackFilter } from '../../lib/index.js';
import { natNode, POD_IP, SERVICE_IP, toolIds, toolList, udpBurst } from '../support/conntrack-env.js';
import { parseToolStats, sideBySide } from '../support/conntrack-tool.js';
import { freshNetns, type Netns } from '../support/netns.js';
import { openConnection } from '../support/connection.js';

// Seconds a timeout may count down between our read and the tool's: starting the tool takes seconds on a slow kernel.
const SLACK = 10;

/**
 * The library's whole table against the tool's listing of it: the same
 * entries (by id), each the same field by field. Returns ours by id.
 */
async function sameAsTool(t: Test, ct: Conntrack, ns: Netns): Promise<Map<string, ConntrackEntry>> {
  const ours = new Map((await ct.list()).map((e) => [String(e.id), e]));
  const theirs = await toolList(ns);
  t.ok(theirs.length >= 2, `the tool lists ${theirs.length} entries`);
  t.same([...ours.keys()].sort(), theirs.map((e) => e.rest.id).sort(), 'the same entries (by id)');
  for (const tool of theirs) {
    const e = ours.get(tool.rest.id);
    if (!e) continue;
    const { ours: a, theirs: b } = sideBySide(e, tool, SLACK);
    t.same(a, b, tool.line.trim());
  }
  return ours;
}

t.test('real NATed traffic: list() equals conntrack -L field by field, filters equal the tool\'s', async (t) => {
  const c = await natNode(t);
  t.equal(await udpBurst(c.client, SERVICE_IP, 53, 1, 3000), 1, 'UDP through the DNAT is answered');
  const conn = await openConnection(t, c.client, SERVICE_IP, 80);
  t.equal(await conn.ask(), 'pod', 'TCP through the DNAT, kept open');

  const ct = await Conntrack.open({ netns: c.node.path });
  t.teardown(() => ct.close());
  const ours = await sameAsTool(t, ct, c.node);

  const udp = [...ours.values()].find((e) => e.protocol === 'udp' && e.orig.dst === SERVICE_IP)!;
  t.equal(udp.reply.src, POD_IP, 'the UDP entry\'s reply source is the pod');
  t.ok(udp.status.includes('DST_NAT'), 'and it is DST_NAT');
  const tcp = [...ours.values()].find((e) => e.protocol === 'tcp' && e.orig.dst === SERVICE_IP)!;
  t.equal(tcp.state, 'ESTABLISHED', 'the open TCP connection is ESTABLISHED');
  t.ok(tcp.counters && tcp.counters.orig.packets >= 3n, 'with packet counters (accounting on)');

  // Filters, against the same filter given to the tool.
  const cases: Array<[ConntrackFilter, string[]]> = [
    [{ family: 'inet', protocol: 'udp' }, ['-f', 'ipv4', '-p', 'udp']],
    [{ protocol: 'udp', orig: { dst: SERVICE_IP, dstPort: 53 } }, ['-p', 'udp', '--orig-dst', SERVICE_IP, '--dport', '53']],
    [{ family: 'inet', protocol: 'tcp', reply: { src: POD_IP, srcPort: 8080 } }, ['-p', 'tcp', '--reply-src', POD_IP, '--reply-port-src', '8080']],
    [{ family: 'inet', reply: { src: POD_IP } }, ['--reply-src', POD_IP]],
    [{ status: ['ASSURED'] }, ['-u', 'ASSURED']],
    [{ mark: 0 }, ['-m', '0']],
    [{ family: 'inet6' }, ['-f', 'ipv6']],
  ];
  for (const [filter, args] of cases) {
    const got = (await ct.list(filter)).map((e) => String(e.id)).sort();
    t.same(got, await toolIds(c.node, ...args), `${JSON.stringify(filter)} = conntrack -L ${args.join(' ')}`);
  }
  const again = await ct.get(udp);
  t.same({ ...again, timeout: udp.timeout, use: udp.use }, udp, 'get() of an entry read back returns it (its timeout counting down)');
  await conn.close();
});

t.test('what conntrack -I writes, the library reads back field by field', async (t) => {
  const ns = await freshNetns(t, 'ct');
  const I = ['-I', '-t', '500'];
  const writes = [
    ['-p', 'udp', '-s', '10.0.0.1', '-d', '10.0.0.2', '--sport', '1234', '--dport', '53', '-u', 'ASSURED,SEEN_REPLY', '-m', '7'],
    ['-p', 'tcp', '-s', '10.0.0.1', '-d', '10.0.0.2', '--sport', '40000', '--dport', '80', '--state', 'TIME_WAIT', '-u', 'SEEN_REPLY', '-m', '0x1f'],
    ['-p', 'icmp', '-s', '10.0.0.1', '-d', '10.0.0.2', '--icmp-type', '8', '--icmp-code', '0', '--icmp-id', '77'],
    ['-p', 'udp', '-s', 'fd00::1', '-d', 'fd00::2', '--sport', '1', '--dport', '2'],
    ['-p', 'icmpv6', '-s', 'fd00::1', '-d', 'fd00::2', '--icmpv6-type', '128', '--icmpv6-code', '0', '--icmpv6-id', '5'],
    ['-p', 'udp', '-s', '10.0.0.3', '-d', SERVICE_IP, '--sport', '5', '--dport', '53', '-r', '10.244.1.10', '-q', '10.0.0.3', '--reply-port-src', '8080', '--reply-port-dst', '5'],
    ['-p', 'sctp', '-s', '10.0.0.1', '-d', '10.0.0.2', '--sport', '9', '--dport', '9', '--state', 'ESTABLISHED', '--orig-vtag', '1', '--reply-vtag', '2'],
  ];
  for (const w of writes) await ns.exec('conntrack', [...I, ...w]);
  const ct = await Conntrack.open({ netns: ns.path });
  t.teardown(() => ct.close());
  const ours = await sameAsTool(t, ct, ns);
  t.equal(ours.size, writes.length, 'the library lists every entry the tool wrote');
  for (const e of ours.values()) t.same(await ct.get(e).then((g) => g?.id), e.id, `get() finds ${e.protocol} ${e.orig.src} by its key`);
  t.equal(await ct.get({ protocol: 'udp', orig: { src: '10.9.9.9', dst: '10.0.0.2', srcPort: 1, dstPort: 2 } }), undefined, 'get() of no entry is undefined');

  const zones = await ns.tryExec('conntrack', [...I, '-p', 'tcp', '-s', '10.0.0.7', '-d', '10.0.0.8', '--sport', '1', '--dport', '2', '--state', 'ESTABLISHED', '-w', '3']);
  if (zones.code === 0) {
    const inZone = await ct.list({ zone: 3 });
    t.same(inZone.map((e) => String(e.id)), await toolIds(ns, '-w', '3'), 'zone 3: list({ zone }) = conntrack -L -w 3');
    t.equal(inZone[0]?.zone, 3, 'the entry reports its zone');
    t.equal((await ct.get(inZone[0]))?.id, inZone[0].id, 'get() finds it in its zone');
    t.equal(await ct.get({ ...inZone[0], zone: 0 }), undefined, 'and not in zone 0');
  } else {
    // This kernel has no conntrack zones (the sandbox's 6.1 build).
    t.match(zones.stderr, /not supported/, 'the tool too finds no zones in this kernel');
    await t.rejects(ct.get({ protocol: 'udp', zone: 3, orig: { src: '10.0.0.1', dst: '10.0.0.2', srcPort: 1234, dstPort: 53 } }), { code: 'EOPNOTSUPP' }, 'a key in a zone is refused by the kernel with EOPNOTSUPP');
  }
});

t.test('stats() and count() are what conntrack -S and -C print', async (t) => {
  const ns = await freshNetns(t, 'ct');
  for (let i = 0; i < 3; i++) await ns.exec('conntrack', ['-I', '-t', '500', '-p', 'udp', '-s', '10.0.0.1', '-d', '10.0.0.2', '--sport', String(1000 + i), '--dport', '53']);
  const ct = await Conntrack.open({ netns: ns.path });
  t.teardown(() => ct.close());
  t.equal(await ct.count(), Number((await ns.exec('conntrack', ['-C'])).trim()), 'count() = conntrack -C');
  t.equal(await ct.count(), 3, 'three entries');
  const s = await ct.stats();
  const tool = parseToolStats(await ns.exec('conntrack', ['-S']));
  t.equal(s.cpus.length, tool.length, 'one object per CPU, as -S prints');
  t.same(s.cpus.map((c) => c.insert ?? 0).reduce((a, b) => a + b, 0), tool.reduce((a, l) => a + (l.insert ?? 0), 0), 'the same inserts in total');
  t.ok(s.maxEntries === undefined || s.maxEntries > 0, 'the table\'s limit, when the kernel reports it');
});
