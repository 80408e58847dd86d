// formatRule() against nft on rules nft wrote: where it prints nft's own
// text, that line is in `nft list ruleset`; where it falls back to nft's
// raw payload syntax (`@th,104,8`), nft takes the text back and makes a
// rule of the same expressions, so the text means what the rule does; and
// given the table's sets, anonymous ones print inline, as nft lists them.
import t from 'tap';

import { Nftables, type Rule, formatRule } from '../../lib/nftables/index.js';
import { freshNetns } from '../support/netns.js';

/** Rules whose text formatRule() prints as nft does. */
const AS_NFT = [
  'ip saddr @allowed tcp dport 8080-8090 accept',
  'iifname "eth*" accept',
  'oifname "eth0" drop',
  'ct mark set meta mark',
  'ip ttl 1 drop',
  'ip6 saddr fd00::/8 drop',
  'ip6 daddr ::1 accept',
  'ip saddr 10.0.0.0/8 ip daddr != 10.1.2.3 udp dport 53 accept',
  // Neighbouring fields nft merges into one comparison, listed field by field.
  'tcp sport 1024 tcp dport 22 accept',
  'ether saddr 00:11:22:33:44:55 ether type ip accept',
  // A protocol match nft wrote for a field later in the rule: left out, other matches between or not.
  'meta mark 0x00000005 ip saddr 1.2.3.4 accept',
  'iifname "lo" ip saddr 1.2.3.4 accept',
  'ct state new tcp dport 22 accept',
  // ... and kept where a statement comes between.
  'meta l4proto tcp counter packets 0 bytes 0 tcp dport 22 accept',
  // The link layer: meta iiftype ether before an ether field, ether type ip before ip saddr.
  'ether daddr 00:11:22:33:44:55 ip saddr 1.2.3.4 accept',
  'ether type 8021q accept',
  'meta iiftype loopback accept',
];
/** Rules it prints in raw payload syntax. */
const RAW = [
  'ip protocol icmp icmp type echo-request accept',
  'meta l4proto tcp tcp flags & (syn|ack) == syn',
  'ip6 nexthdr icmpv6 accept',
  'ip dscp cs1 drop',
  // Neighbouring fields nft merged, compared otherwise than whole for equality: raw, their protocol match kept.
  'meta l4proto tcp @th,0,32 != 0x04000016 accept',
];
/**
 * Rules written otherwise than nft lists them (a protocol match written
 * out, or before other matches): formatRule prints nft's listing.
 */
const WRITTEN = [
  'meta l4proto tcp fib daddr type local tcp dport 22 accept',
  'meta l4proto tcp numgen inc mod 2 1 tcp dport 22 accept',
  'meta nfproto ipv4 meta l4proto tcp meta mark 5 ip saddr 1.2.3.4 tcp dport 22 accept',
  'ip protocol tcp tcp dport 22 accept',
  'meta protocol ip ip saddr 1.2.3.4 accept',
  'ip protocol esp th dport 1 accept',
  'meta l4proto tcp counter tcp dport 22 accept',
  'meta mark set ip saddr . tcp dport map { 1.1.1.1 . 22 : 0x5 }',
  'meta mark set tcp dport map { 22 : 0x5, 80 : 0x6 }',
];

const table = (rules: string[]) =>
  `table inet f {\n set allowed { type ipv4_addr; flags interval; elements = { 10.0.0.0/8 } }\n chain c {\n${rules.map((r) => `  ${r}\n`).join('')} }\n}\n`;

const expressionsOf = async (nft: Nftables): Promise<Rule['expressions'][]> =>
  (await nft.listRules({ family: 'inet', table: 'f', chain: 'c' })).map((r) => r.expressions);

t.test("nft's own text, where formatRule() prints it", async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], table(AS_NFT));
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  const rules = await nft.listRules({ family: 'inet', table: 'f', chain: 'c' });
  t.same(rules.map((r) => formatRule(r)), AS_NFT.map((r) => (listed.includes(r) ? r : `(nft lists it otherwise) ${r}`)));
});

t.test('rules written otherwise than nft lists them: as nft lists them', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], table(WRITTEN));
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  const rs = await nft.ruleset();
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  const inChain = listed.slice(listed.indexOf('chain c {') + 1, listed.indexOf('chain c {') + 1 + WRITTEN.length);
  t.same(rs.rules.map((r) => formatRule(r, { sets: rs.sets })), inChain);
});

t.test('raw payload syntax: nft makes the same rule from the text', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], table(RAW));
  const from = await Nftables.open({ netns: src.path });
  t.teardown(() => from.close());
  const texts = (await from.listRules({ family: 'inet', table: 'f', chain: 'c' })).map((r) => formatRule(r));
  t.ok(texts.every((x) => x.includes('@')), 'each falls back to raw payload syntax');
  await dst.exec('nft', ['-f', '-'], table(texts));
  const to = await Nftables.open({ netns: dst.path });
  t.teardown(() => to.close());
  t.same(await expressionsOf(to), await expressionsOf(from));
});

t.test("anonymous sets of one key type, inline as nft prints them, given the table's sets", async (t) => {
  const inline = [
    'tcp dport { 22, 80, 443 } accept',
    'ip saddr { 1.2.3.4, 10.0.0.0/8, 192.168.0.0/16 } accept',
    'ip saddr { 10.0.0.1-10.0.0.9, 10.0.1.0/24 } drop',
    'meta mark { 0x00000002, 0x00000010 } accept',
    'tcp dport vmap { 8080 : accept, 8443 : drop }',
    'iifname { "eth0", "eth1" } accept',
    'meta l4proto { tcp, udp } accept',
    'tcp dport != { 1, 2 } drop',
  ];
  const ns = await freshNetns(t, 'nft');
  // Written in another order: nft lists the elements in its own.
  await ns.exec('nft', ['-f', '-'], table(inline).replace('{ 22, 80, 443 }', '{ 443, 22, 80 }').replace('{ tcp, udp }', '{ udp, tcp }'));
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  const rs = await nft.ruleset();
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  t.same(rs.rules.map((r) => formatRule(r, { sets: rs.sets })), inline.map((r) => (listed.includes(r) ? r : `(nft lists it otherwise) ${r}`)));
  t.match(formatRule(rs.rules[0]), /^tcp dport @__set\d+ accept$/, 'without the sets, the set by name');
});

t.test('anonymous concatenations, inline in the order nft lists them', async (t) => {
  // Each written in another order than nft's: nft orders a concatenation by
  // its last part first (its bytes read as one host-order number).
  const written = [
    'ip saddr . tcp dport { 10.0.0.9 . 22, 10.0.0.1 . 80, 10.0.0.1 . 22, 192.168.1.1 . 443, 10.0.0.10 . 1 } accept',
    'ip daddr . meta mark { 1.2.3.4 . 0x100, 1.2.3.5 . 0x2, 9.9.9.9 . 0x1, 1.2.3.4 . 0x1000000 } accept',
    'ip6 saddr . tcp dport { ::1 . 80, fe80::1 . 22, 2001:db8::ff . 22, ::2 . 443 } accept',
    'ether saddr . ip saddr { 00:11:22:33:44:55 . 10.0.0.1, 00:11:22:33:44:56 . 10.0.0.1, ff:00:00:00:00:01 . 9.0.0.1 } accept',
    'meta l4proto . th dport { tcp . 22, udp . 53, tcp . 53, udp . 22 } accept',
    'iifname . ip saddr { "eth0" . 10.0.0.1, "lo" . 10.0.0.1, "eth1" . 10.0.0.2 } accept',
    'ip saddr . tcp dport . ip daddr { 10.0.0.1 . 80 . 1.1.1.1, 10.0.0.2 . 80 . 1.1.1.0 } accept',
    'ip saddr . tcp dport vmap { 10.0.0.9 . 22 : accept, 10.0.0.1 . 80 : drop }',
  ];
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], table(written));
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  const rs = await nft.ruleset();
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  const inChain = listed.slice(listed.indexOf('chain c {') + 1, listed.indexOf('chain c {') + 1 + written.length);
  t.same(
    rs.rules.map((r) => formatRule(r, { sets: rs.sets })),
    inChain,
    "every rule as nft lists it",
  );
  t.not(inChain[0], written[0], "nft's order is not the order written");
  t.same(formatRule({ ...rs.rules[0] }, { sets: rs.sets.map((s) => (s.name === rs.rules[0].expressions.find((e) => e.type === 'lookup')?.set ? { ...s, flags: [...(s.flags ?? []), 'interval'] } : s)) }).includes('@__set'), true, 'a concatenation of intervals by name');
});

t.test('network fields loaded with no protocol match before them: raw in an inet table, named in an ip table, as nft lists them', async (t) => {
  const ns = await freshNetns(t, 'nft');
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  // Written by this library, as a program may write them: nft itself would put `meta nfproto ipv4` first in an inet table.
  const daddr = [
    { type: 'payload', base: 'network', offset: 16, len: 4, dreg: 1 },
    { type: 'meta', key: 'l4proto', dreg: 9 },
    { type: 'payload', base: 'transport', offset: 2, len: 2, dreg: 10 },
    { type: 'lookup', set: 'svc', sreg: 1, dreg: 0 },
  ] as const;
  const v6saddr = [
    { type: 'payload', base: 'network', offset: 8, len: 16, dreg: 1 },
    { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from('fd000000000000000000000000000001', 'hex') },
    { type: 'verdict', verdict: 'accept' },
  ] as const;
  const changes = (family: 'inet' | 'ip') => [
    { op: 'addTable', table: { family, name: 'g' } },
    { op: 'addSet', set: { family, table: 'g', name: 'svc', type: ['ipv4_addr', 'inet_proto', 'inet_service'], map: 'verdict' } },
    { op: 'addChain', chain: { family, table: 'g', name: 'c' } },
    { op: 'addRule', rule: { family, table: 'g', chain: 'c', expressions: daddr } },
    ...(family === 'inet' ? [{ op: 'addRule', rule: { family, table: 'g', chain: 'c', expressions: v6saddr } }] : []),
  ];
  await nft.commit([...changes('inet'), ...changes('ip')] as never);
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  const inet = await nft.listRules({ family: 'inet', table: 'g', chain: 'c' });
  const ip = await nft.listRules({ family: 'ip', table: 'g', chain: 'c' });
  const texts = [...inet, ...ip].map((r) => formatRule(r));
  t.same(texts, ['@nh,128,32 . meta l4proto . th dport vmap @svc', '@nh,64,128 0xfd000000000000000000000000000001 accept', 'ip daddr . meta l4proto . th dport vmap @svc'].map((r) => (listed.includes(r) ? r : `(nft lists it otherwise) ${r}`)));
  t.equal(formatRule({ expressions: inet[0].expressions }), 'ip daddr . meta l4proto . th dport vmap @svc', "without the table's family, the load is taken for IPv4's");
});
