// Sets and maps nft made with `typeof` (`typeof ip saddr . tcp dport`,
// `typeof meta mark : ip daddr`): the library reads their types and keeps
// nft's descriptions as read, and what it read it writes back, so that nft
// lists the copy as it lists the original, `typeof` included.
import t from 'tap';

import { type Change, Nftables } from '../../lib/nftables/index.js';
import { freshNetns } from '../support/netns.js';

const RULESET = `
table ip f {
  set s1 { typeof ip saddr . tcp dport; elements = { 10.0.0.1 . 80 } }
  map m1 { typeof meta mark : ip daddr; elements = { 0x1 : 10.0.0.1 } }
  set plain { type ipv4_addr . inet_service; }
}
`;

t.test("what nft made with typeof, the library reads and writes back: nft lists the copy as the original", async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], RULESET);
  const [from, to] = await Promise.all([Nftables.open({ netns: src.path }), Nftables.open({ netns: dst.path })]);
  t.teardown(() => (from.close(), to.close()));
  const rs = await from.ruleset();
  t.match(rs.sets, [
    { name: 's1', type: ['ipv4_addr', 'inet_service'], typeof: { key: Buffer } },
    { name: 'm1', type: 'mark', map: 'ipv4_addr', typeof: { key: Buffer, value: Buffer } },
    { name: 'plain', type: ['ipv4_addr', 'inet_service'] },
  ]);
  t.equal(rs.sets[2].typeof, undefined, 'a set of plain types has none (the concatenation record is the library\'s own too)');
  const changes: Change[] = [
    ...rs.tables.map(({ handle, use, ...table }) => ({ op: 'addTable' as const, table })),
    ...rs.sets.flatMap(({ handle, elements, ...set }) => [
      { op: 'addSet' as const, set },
      ...(elements.length ? [{ op: 'addElements' as const, set, elements }] : []),
    ]),
  ];
  await to.commit(changes);
  const listed = async (ns: typeof src) => ns.exec('nft', ['list', 'ruleset']);
  const original = await listed(src);
  t.match(original, /typeof ip saddr \. tcp dport/);
  t.equal(await listed(dst), original);
});
