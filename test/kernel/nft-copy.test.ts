// Rulesets nft wrote, copied by the library: read with ruleset(), written
// into a fresh namespace with the changes that make them, and listed by nft
// as the originals. Anonymous sets and maps (nft's inline `{ 22, 80 }` in a
// rule), each bound to its rule in the same transaction; and sets and maps
// made with `typeof`, whose types the library reads and whose description
// nft alone reads, kept as read.
import t, { type Test } from 'tap';

import { Nftables, type Ruleset, rulesetChanges } from '../../lib/nftables/index.js';
import { freshNetns } from '../support/netns.js';

/** Writes `ruleset` with nft, copies it with the library; what it read, and nft's listings of both. */
async function copied(t: Test, ruleset: string): Promise<{ rs: Ruleset; original: string; copy: string }> {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], ruleset);
  const [from, to] = await Promise.all([Nftables.open({ netns: src.path }), Nftables.open({ netns: dst.path })]);
  t.teardown(() => (from.close(), to.close()));
  const rs = await from.ruleset();
  await to.commit(rulesetChanges(rs));
  // Counters count what the source namespace saw.
  const listed = async (ns: typeof src) => (await ns.exec('nft', ['list', 'ruleset'])).replace(/packets \d+ bytes \d+/g, '');
  return { rs, original: await listed(src), copy: await listed(dst) };
}

t.test('anonymous sets and maps', async (t) => {
  const { rs, original, copy } = await copied(t, `
table inet f {
  chain input {
    type filter hook input priority 0; policy accept;
    ip saddr { 10.0.0.0/8, 192.168.0.0/16 } accept
    tcp dport { 22, 80, 443 } counter accept
    tcp dport vmap { 8080 : accept, 8443 : drop }
  }
}
`);
  t.same(
    rs.sets.map((s) => [s.name, s.flags, s.elements.length]),
    [['__set0', ['anonymous', 'constant', 'interval'], 2], ['__set1', ['anonymous', 'constant'], 3], ['__map0', ['anonymous', 'constant'], 2]],
  );
  t.equal(copy, original);
});

t.test('sets and maps made with typeof', async (t) => {
  const { rs, original, copy } = await copied(t, `
table ip f {
  set s1 { typeof ip saddr . tcp dport; elements = { 10.0.0.1 . 80 } }
  map m1 { typeof meta mark : ip daddr; elements = { 0x1 : 10.0.0.1 } }
  set plain { type ipv4_addr . inet_service; }
}
`);
  t.match(rs.sets, [
    { name: 's1', type: ['ipv4_addr', 'inet_service'], typeof: { key: Buffer } },
    { name: 'm1', type: 'mark', map: 'ipv4_addr', typeof: { key: Buffer, value: Buffer } },
    { name: 'plain', type: ['ipv4_addr', 'inet_service'] },
  ]);
  t.equal(rs.sets[2].typeof, undefined, "a set of plain types has none (the concatenation record is the library's own too)");
  t.match(original, /typeof ip saddr \. tcp dport/);
  t.equal(copy, original);
});
