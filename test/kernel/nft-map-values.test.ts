// Maps whose values are concatenations (`type inet_service : ipv4_addr .
// inet_service`, as nat maps are written) against the kernel and nft, both
// ways: the map and its elements the library writes, `nft -j list` shows as
// it shows the same written by nft; what nft wrote, the library reads back
// with the value's types and each value as written. Object maps (`type
// ipv4_addr : counter`) the same way, each value an object's name.
import t from 'tap';

import { type Element, type NftSet } from '../../lib/nftables/index.js';
import { freshNetns, type Netns } from '../support/netns.js';
import { openNftables } from '../support/nft-tool.js';

const MAP: NftSet = { family: 'ip', table: 't', name: 'dn', type: 'inet_service', map: ['ipv4_addr', 'inet_service'] };
const ELEMENTS: Element[] = [{ key: 80, value: ['10.0.0.1', 8080] }, { key: 443, value: ['10.0.0.2', 8443] }];

async function withNft(ns: Netns): Promise<void> {
  await ns.exec('nft', ['add', 'table', 'ip', 't']);
  await ns.exec('nft', ['add', 'map', 'ip', 't', 'dn', '{ type inet_service : ipv4_addr . inet_service; }']);
  await ns.exec('nft', ['add', 'element', 'ip', 't', 'dn', '{ 80 : 10.0.0.1 . 8080, 443 : 10.0.0.2 . 8443 }']);
}

async function listed(ns: Netns): Promise<unknown> {
  const j = JSON.parse(await ns.exec('nft', ['-j', 'list', 'map', 'ip', 't', 'dn'])) as { nftables: Array<{ map?: Record<string, unknown> }> };
  const { handle, ...map } = j.nftables.find((o) => o.map)!.map!;
  return map;
}

t.test('what the library writes, nft lists as it lists the same map written by nft', async (t) => {
  const [ours, theirs] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  const nft = await openNftables(t, ours);
  await nft.commit([{ op: 'addTable', table: { family: 'ip', name: 't' } }, { op: 'addSet', set: MAP }, { op: 'addElements', set: MAP, elements: ELEMENTS }]);
  await withNft(theirs);
  const mine = await listed(ours);
  t.same(mine, await listed(theirs));
  t.match(mine, { map: 'ipv4_addr . inet_service' }, 'nft names the value types');
});

t.test('what nft wrote, the library reads back: the value types and each value', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await withNft(ns);
  const nft = await openNftables(t, ns);
  const [set] = (await nft.ruleset()).sets;
  const { handle, elements, ...rest } = set;
  t.same(rest, MAP);
  // A hash map lists in no fixed order.
  const byKey = (list: Element[]) => [...list].sort((a, b) => Number(a.key) - Number(b.key));
  t.same(byKey(elements), ELEMENTS);
  t.same(byKey(await nft.listElements(MAP)), ELEMENTS, 'listElements too');
});

t.test("object maps (`type ipv4_addr : counter`): each element's object by name, both ways", async (t) => {
  const OM: NftSet = { family: 'ip', table: 't', name: 'om', type: 'ipv4_addr', map: { object: 'counter' } };
  const OM_ELEMENTS: Element[] = [{ key: '10.0.0.1', value: 'hits' }, { key: '10.0.0.2', value: 'other' }];
  const [ours, theirs] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await theirs.exec('nft', ['-f', '-'], 'table ip t {\n counter hits { }\n counter other { }\n}\n');
  await theirs.exec('nft', ['add', 'map', 'ip', 't', 'om', '{ type ipv4_addr : counter; }']);
  await theirs.exec('nft', ['add', 'element', 'ip', 't', 'om', '{ 10.0.0.1 : "hits", 10.0.0.2 : "other" }']);
  const nft = await openNftables(t, ours);
  // The counters, the map and its elements in one transaction.
  await nft.commit([
    { op: 'addTable', table: { family: 'ip', name: 't' } },
    ...['hits', 'other'].map((name) => ({ op: 'addObject' as const, object: { family: 'ip' as const, table: 't', name, type: 'counter' as const } })),
    { op: 'addSet', set: OM },
    { op: 'addElements', set: OM, elements: OM_ELEMENTS },
  ]);
  const list = async (ns: Netns) => (await ns.exec('nft', ['list', 'map', 'ip', 't', 'om'])).replace(/handle \d+/g, '');
  t.equal(await list(ours), await list(theirs), 'nft lists the library\'s map as its own');
  const read = await openNftables(t, theirs);
  const [set] = (await read.ruleset()).sets;
  const { handle, elements, ...rest } = set;
  t.same(rest, OM);
  t.same([...elements].sort((a, b) => String(a.key).localeCompare(String(b.key))), OM_ELEMENTS, 'and reads nft\'s with each object\'s name');
});
