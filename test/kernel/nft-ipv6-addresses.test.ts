// IPv6 addresses that carry an IPv4 one, as set elements, against nft both
// ways: ::a.b.c.d (IPv4-compatible, ::0:a.b.c.d) is another address than
// ::ffff:a.b.c.d (IPv4-mapped). What the library writes, `nft -j list set`
// shows as it shows the same elements added by nft; what nft added, the
// library reads back as the same addresses.
import t from 'tap';

import { canonicalAddress } from '../../lib/util/cidr.js';
import type { NftSet } from '../../lib/nftables/index.js';
import { freshNetns, type Netns } from '../support/netns.js';
import { openNftables } from '../support/nft-tool.js';

const SET: NftSet = { family: 'ip6', table: 't', name: 's', type: 'ipv6_addr' };
const ADDRESSES = ['::10.0.0.1', '::ffff:10.0.0.2', '::a00:4'];

async function listed(ns: Netns): Promise<unknown> {
  const j = JSON.parse(await ns.exec('nft', ['-j', 'list', 'set', 'ip6', 't', 's'])) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
  return j.nftables.find((o) => o.set)!.set!.elem;
}

t.test('::a.b.c.d and ::ffff:a.b.c.d, written by the library and by nft, listed alike and read back', async (t) => {
  const [ours, theirs] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  const nft = await openNftables(t, ours);
  await nft.commit([{ op: 'addTable', table: { family: 'ip6', name: 't' } }, { op: 'addSet', set: SET }, { op: 'addElements', set: SET, elements: ADDRESSES.map((key) => ({ key })) }]);
  await theirs.exec('nft', ['add', 'table', 'ip6', 't']);
  await theirs.exec('nft', ['add', 'set', 'ip6', 't', 's', '{ type ipv6_addr; }']);
  await theirs.exec('nft', ['add', 'element', 'ip6', 't', 's', `{ ${ADDRESSES.join(', ')} }`]);
  const mine = await listed(ours);
  t.same(mine, await listed(theirs), 'nft -j list set: the same elements');
  t.equal((mine as unknown[]).length, 3, 'three addresses, none taken for another');

  const fromNft = await openNftables(t, theirs);
  const read = (await fromNft.listElements(SET)).map((e) => canonicalAddress(String(e.key)));
  t.same(read.sort(), ADDRESSES.map((a) => canonicalAddress(a)).sort(), "the library reads nft's elements back as the same addresses");
  t.same(['::10.0.0.1', '::0:10.0.0.1', '::a00:1', '::ffff:10.0.0.1'].map((a) => canonicalAddress(a)), ['::a00:1', '::a00:1', '::a00:1', '::ffff:a00:1'], 'canonical text: every spelling of the compatible one alike, the mapped one apart');
});
