// Anonymous sets and maps (`ip saddr { 10.0.0.0/8, 192.168.0.0/16 }`,
// `tcp dport vmap { 80 : accept }`), which nft makes for every inline set
// in a rule, against the kernel and nft: the library reads them with their
// flags and elements, and what it read it writes back (each set bound to
// its rule in the same transaction), so that nft lists the copy as the
// original.
import t from 'tap';

import { type Change, Nftables } from '../../lib/nftables/index.js';
import { freshNetns } from '../support/netns.js';

const RULESET = `
table inet f {
  chain input {
    type filter hook input priority 0; policy accept;
    ip saddr { 10.0.0.0/8, 192.168.0.0/16 } accept
    tcp dport { 22, 80, 443 } counter accept
    tcp dport vmap { 8080 : accept, 8443 : drop }
  }
}
`;

t.test('what nft made inline, the library reads and writes back: nft lists the copy as the original', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], RULESET);
  const [from, to] = await Promise.all([Nftables.open({ netns: src.path }), Nftables.open({ netns: dst.path })]);
  t.teardown(() => (from.close(), to.close()));
  const rs = await from.ruleset();
  t.same(
    rs.sets.map((s) => [s.name, s.flags, s.elements.length]),
    [['__set0', ['anonymous', 'constant', 'interval'], 2], ['__set1', ['anonymous', 'constant'], 3], ['__map0', ['anonymous', 'constant'], 2]],
  );
  const changes: Change[] = [
    ...rs.tables.map(({ handle, use, ...table }) => ({ op: 'addTable' as const, table })),
    ...rs.chains.map(({ handle, use, ...chain }) => ({ op: 'addChain' as const, chain })),
    ...rs.sets.flatMap(({ handle, elements, ...set }) => [
      { op: 'addSet' as const, set },
      { op: 'addElements' as const, set, elements: elements.map(({ counter, expires, ...e }) => e) },
    ]),
    ...rs.rules.map(({ handle, ...rule }) => ({ op: 'addRule' as const, rule })),
  ];
  await to.commit(changes);
  const listed = async (ns: typeof src) => (await ns.exec('nft', ['list', 'ruleset'])).replace(/packets \d+ bytes \d+/g, '');
  t.equal(await listed(dst), await listed(src));
});
