// Bad filters and keys: each is a TypeError or RangeError naming the
// field (lib/util/check.ts's rule), thrown before anything is sent.
// Opening a handle sends nothing, so its counters show that none of these
// calls reached the kernel.
import t from 'tap';

import { Conntrack, STATUS_FLAGS } from '../../lib/index.js';
import { CT } from '../../lib/conntrack/constants.js';

t.test('status flag names are the header\'s', async (t) => {
  t.same([...STATUS_FLAGS].sort(), Object.keys(CT.status).sort(), 'STATUS_FLAGS lists exactly the IPS_*_BIT names the addon was built with');
});

t.test('bad input is refused, naming the field, with nothing sent', async (t) => {
  const ct = await Conntrack.open();
  t.teardown(() => ct.close());
  const udp = { protocol: 'udp', orig: { src: '10.0.0.1', dst: '10.0.0.2', srcPort: 1, dstPort: 2 } } as const;
  const cases: Array<[string, () => Promise<unknown>, RegExp, string]> = [
    ['bad address', () => ct.list({ orig: { src: '10.0.0.256' } }), /filter\.orig\.src must be an IPv4 or IPv6 address/, 'ERR_INVALID_ARG_VALUE'],
    ['family mismatch', () => ct.list({ family: 'inet6', reply: { dst: '10.0.0.1' } }), /filter\.reply\.dst must be an IPv6 address, as filter\.family is/, 'ERR_INVALID_ARG_VALUE'],
    ['addresses of two families', () => ct.list({ orig: { src: '10.0.0.1', dst: 'fd00::1' } }), /filter\.orig\.dst must be an IPv4 address, as filter\.orig\.src is/, 'ERR_INVALID_ARG_VALUE'],
    ['port out of range', () => ct.list({ protocol: 'tcp', orig: { dstPort: 70000 } }), /filter\.orig\.dstPort must be an integer from 0 to 65535, got 70000/, 'ERR_OUT_OF_RANGE'],
    ['port without a protocol', () => ct.list({ orig: { dstPort: 53 } }), /filter\.orig\.dstPort must be given only with a protocol that has ports/, 'ERR_INVALID_ARG_VALUE'],
    ['port with icmp', () => ct.list({ protocol: 'icmp', orig: { srcPort: 1 } }), /filter\.orig\.srcPort must be given only with a protocol that has ports/, 'ERR_INVALID_ARG_VALUE'],
    ['icmp field with udp', () => ct.list({ protocol: 'udp', orig: { icmpType: 8 } }), /filter\.orig\.icmpType must be given only with protocol icmp or icmpv6/, 'ERR_INVALID_ARG_VALUE'],
    ['unknown protocol', () => ct.list({ protocol: 'udpp' as never }), /filter\.protocol must be one of "tcp", "udp"/, 'ERR_INVALID_ARG_VALUE'],
    ['protocol number out of range', () => ct.list({ protocol: 300 }), /filter\.protocol must be an integer from 0 to 255/, 'ERR_OUT_OF_RANGE'],
    ['unknown field', () => ct.list({ orgi: {} } as never), /filter\.orgi must be left out \(not a field it takes/, 'ERR_INVALID_ARG_VALUE'],
    ['unknown tuple field', () => ct.list({ orig: { sport: 1 } } as never), /filter\.orig\.sport must be left out \(not a field it takes/, 'ERR_INVALID_ARG_VALUE'],
    ['unknown status flag', () => ct.list({ status: ['ASURED' as never] }), /filter\.status\[0\] must be one of/, 'ERR_INVALID_ARG_VALUE'],
    ['mark value outside its mask', () => ct.list({ mark: { value: 0x100, mask: 0xff } }), /filter\.mark\.value must be bits within mark\.mask/, 'ERR_INVALID_ARG_VALUE'],
    ['zone out of range', () => ct.list({ zone: 65536 }), /filter\.zone must be an integer from 0 to 65535/, 'ERR_OUT_OF_RANGE'],
    ['bad family', () => ct.list({ family: 'ipv4' as never }), /filter\.family must be one of "inet", "inet6"/, 'ERR_INVALID_ARG_VALUE'],
    ['key without tuple', () => ct.get({ protocol: 'udp' }), /key\.orig must be a tuple/, 'ERR_INVALID_ARG_TYPE'],
    ['key without dst', () => ct.get({ protocol: 'udp', orig: { src: '10.0.0.1' } as never }), /key\.orig\.dst must be an IPv4 or IPv6 address/, 'ERR_INVALID_ARG_TYPE'],
    ['key family mismatch', () => ct.delete({ ...udp, family: 'inet6' }), /key\.orig\.src must be an IPv6 address, as key\.family is/, 'ERR_INVALID_ARG_VALUE'],
    ['key id out of range', () => ct.delete({ ...udp, id: -1 }), /key\.id must be an integer from 0 to 4294967295/, 'ERR_OUT_OF_RANGE'],
    ['bad key in a batch', () => ct.deleteMany([udp, { ...udp, orig: { ...udp.orig, src: 'x' } }]), /keys\[1\]\.orig\.src must be an IPv4 or IPv6 address/, 'ERR_INVALID_ARG_VALUE'],
    ['keys not an array', () => ct.deleteMany(udp as never), /keys must be an array of keys/, 'ERR_INVALID_ARG_TYPE'],
    ['deleteMatching without a filter', () => ct.deleteMatching({}), /filter must be a filter that names something/, 'ERR_INVALID_ARG_VALUE'],
    ['bad flush family', () => ct.flush('ipv6' as never), /family must be one of "inet", "inet6"/, 'ERR_INVALID_ARG_VALUE'],
    ['bad event type', () => ct.events({ types: ['create' as never] }), /options\.types\[0\] must be one of "new", "update", "destroy"/, 'ERR_INVALID_ARG_VALUE'],
    ['bad event option', () => ct.events({ max: 1 } as never), /options\.max must be left out \(not a field it takes/, 'ERR_INVALID_ARG_VALUE'],
    ['maxQueued out of range', () => ct.events({ maxQueued: 0 }), /options\.maxQueued must be an integer from 1/, 'ERR_OUT_OF_RANGE'],
  ];
  for (const [name, call, message, code] of cases) {
    await t.rejects(call, { message, code }, name);
  }
  t.equal(ct.counters().messagesSent, 0, 'nothing was sent');
});

t.test('an entry read back is a key, and its tuples are tuple filters', async (t) => {
  const { key, filter } = await import('../../lib/conntrack/validate.js');
  const entry = {
    family: 'inet6', protocol: 'udp', protonum: 17,
    orig: { src: 'fd00::1', dst: 'fd00::2', srcPort: 1, dstPort: 2 },
    reply: { src: 'fd00::2', dst: 'fd00::1', srcPort: 2, dstPort: 1 },
    status: ['SEEN_REPLY'], timeout: 30, mark: 0, zone: 4, id: 99, use: 1,
    counters: { orig: { packets: 1n, bytes: 2n }, reply: { packets: 0n, bytes: 0n } },
  };
  t.same(key(entry), { family: 10, protocol: 17, direction: 'orig', tuple: { src: 'fd00::1', dst: 'fd00::2', srcPort: 1, dstPort: 2 }, zone: 4, id: 99 });
  t.same(filter({ protocol: entry.protocol, reply: entry.reply }), {
    family: 10, protocol: 17, reply: { src: 'fd00::2', dst: 'fd00::1', srcPort: 2, dstPort: 1 },
  });
});
