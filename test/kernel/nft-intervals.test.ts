// Interval sets against the kernel and nft, both ways, with adjacent
// intervals (one ends where the next begins: 10.0.0.0/16 and 10.1.0.0/16,
// 192.168.1.1-192.168.1.5 and 192.168.1.6), an interval running to the top
// of the key space, and single addresses: what the library writes, `nft -j
// list` shows as it shows the same elements added by nft; what nft added,
// the library reads back as nft lists it; and what the library reads, it
// writes back to the same set. Overlapping intervals are refused as nft
// refuses them, and a refusal names the element as the caller wrote it.
// Marks (host order elsewhere) go big end first in interval sets, alone
// and in concatenations, both ways.
import t, { type Test } from 'tap';

import { type Element, type NftSet } from '../../lib/nftables/index.js';
import { freshNetns, type Netns } from '../support/netns.js';
import { openNftables } from '../support/nft-tool.js';

const SET: NftSet = { family: 'ip', table: 't', name: 'r', type: 'ipv4_addr', flags: ['interval'] };
/** nft's spelling and the library's of the same elements. */
const NFT_ELEMENTS = '10.0.0.0/16, 10.1.0.0/16, 10.3.0.0/16, 192.168.1.1-192.168.1.5, 192.168.1.6, 192.168.1.8, 240.0.0.0/4';
const ELEMENTS: Element[] = NFT_ELEMENTS.split(', ').map((key) => ({ key }));

async function withNft(t: Test, ns: Netns): Promise<void> {
  await ns.exec('nft', ['add', 'table', 'ip', 't']);
  await ns.exec('nft', ['add', 'set', 'ip', 't', 'r', '{ type ipv4_addr; flags interval; }']);
  await ns.exec('nft', ['add', 'element', 'ip', 't', 'r', `{ ${NFT_ELEMENTS} }`]);
  t.pass('nft added them');
}

/** The set as `nft -j list set` shows it, without its handle. */
async function listed(ns: Netns): Promise<unknown> {
  const j = JSON.parse(await ns.exec('nft', ['-j', 'list', 'set', 'ip', 't', 'r'])) as { nftables: Array<{ set?: Record<string, unknown> }> };
  const { handle, ...set } = j.nftables.find((o) => o.set)!.set!;
  return set;
}

t.test('what the library writes, nft lists as it lists the same elements added by nft', async (t) => {
  const [ours, theirs] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  const nft = await openNftables(t, ours);
  await nft.commit([{ op: 'addTable', table: { family: 'ip', name: 't' } }, { op: 'addSet', set: SET }, { op: 'addElements', set: SET, elements: ELEMENTS }]);
  await withNft(t, theirs);
  const mine = await listed(ours);
  t.same(mine, await listed(theirs));
  t.equal((mine as { elem: unknown[] }).elem.length, ELEMENTS.length, 'every interval on its own, none merged');
});

t.test('what nft added, the library reads back as nft lists it', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await withNft(t, ns);
  const nft = await openNftables(t, ns);
  t.same(await nft.listElements(SET), ELEMENTS);
  const [set] = (await nft.ruleset()).sets;
  t.same(set.elements.map((e) => e.key), ELEMENTS.map((e) => e.key), 'and in the ruleset');
});

t.test('what the library reads, it writes back to the same set', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await withNft(t, src);
  const read = await (await openNftables(t, src)).listElements(SET);
  const nft = await openNftables(t, dst);
  await nft.commit([{ op: 'addTable', table: { family: 'ip', name: 't' } }, { op: 'addSet', set: SET }, { op: 'addElements', set: SET, elements: read }]);
  t.same(await listed(dst), await listed(src));
});

t.test('intervals that overlap in one add: nft refuses them, and so does the library, before sending anything', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await withNft(t, ns);
  const before = await listed(ns);
  const theirs = await ns.tryExec('nft', ['add', 'element', 'ip', 't', 'r', '{ 172.16.0.0/12, 172.17.0.0/16 }']);
  t.not(theirs.code, 0, 'nft refuses');
  t.match(theirs.stderr, /conflicting intervals/);
  const nft = await openNftables(t, ns);
  await t.rejects(nft.commit([{ op: 'addElements', set: SET, elements: [{ key: '172.16.0.0/12' }, { key: '172.17.0.0/16' }] }]), {
    name: 'RangeError',
    code: 'ERR_OUT_OF_RANGE',
    field: 'changes[0].elements[1].key',
  });
  t.same(await listed(ns), before, 'the set is as it was');
});

t.test('an interval over one the set holds: the kernel refuses it, for nft and the library alike, and the error names the element as the caller wrote it', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await withNft(t, ns);
  const before = await listed(ns);
  // 10.0.0.0/8 takes in 10.0.0.0/16 and the rest nft added; each interval goes as a start and an end item.
  const theirs = await ns.tryExec('nft', ['add', 'element', 'ip', 't', 'r', '{ 10.0.0.0/8, 172.16.0.0/12 }']);
  t.not(theirs.code, 0, 'nft refuses');
  const nft = await openNftables(t, ns);
  const err = await nft.commit([{ op: 'addElements', set: SET, elements: [{ key: '10.0.0.0/8' }, { key: '172.16.0.0/12' }] }]).catch((e: unknown) => e);
  t.match(err, { name: 'NftablesTransactionError', code: 'EEXIST', index: 0, element: 0 });
  t.match((err as { attribute?: string }).attribute, /^elements\[0\]/, 'the attribute the kernel pointed at, under the same element');
  t.same(await listed(ns), before, 'the set is as it was');
});

t.test('marks in interval sets, alone and concatenated: big end first both ways, as nft keeps them', async (t) => {
  const [ours, theirs] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  const sets: Array<[NftSet, string, Element[]]> = [
    [{ family: 'ip', table: 't', name: 'mk', type: 'mark', flags: ['interval'] }, '0x1-0x5, 0x10, 0x100-0x1ff, 0xfffffff0-0xffffffff', [{ key: '1-5' }, { key: 16 }, { key: '256-511' }, { key: '4294967280-4294967295' }]],
    [{ family: 'ip', table: 't', name: 'mkc', type: ['mark', 'inet_service'], flags: ['interval'] }, '0x1-0x5 . 80, 0x7 . 90-95', [{ key: ['1-5', 80] }, { key: [7, '90-95'] }]],
  ];
  await theirs.exec('nft', ['add', 'table', 'ip', 't']);
  for (const [set, nftElements] of sets) {
    const type = Array.isArray(set.type) ? set.type.join(' . ') : set.type;
    await theirs.exec('nft', ['add', 'set', 'ip', 't', set.name, `{ type ${type}; flags interval; }`]);
    await theirs.exec('nft', ['add', 'element', 'ip', 't', set.name, `{ ${nftElements} }`]);
  }
  const nft = await openNftables(t, ours);
  await nft.commit([{ op: 'addTable', table: { family: 'ip', name: 't' } }, ...sets.flatMap(([set, , elements]) => [{ op: 'addSet' as const, set }, { op: 'addElements' as const, set, elements }])]);
  const theirsRead = await openNftables(t, theirs);
  for (const [set, , elements] of sets) {
    const list = async (ns: Netns) => {
      const j = JSON.parse(await ns.exec('nft', ['-j', 'list', 'set', 'ip', 't', set.name])) as { nftables: Array<{ set?: { elem?: unknown } }> };
      return j.nftables.find((o) => o.set)!.set!.elem;
    };
    t.same(await list(ours), await list(theirs), `${set.name}: nft lists the library's elements as its own`);
    t.same(await theirsRead.listElements(set), elements, `${set.name}: the library reads nft's as written`);
  }
});
