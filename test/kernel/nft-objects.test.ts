// Named stateful objects (counters, quotas, limits, and a kind the library
// has no vocabulary for) against the kernel and nft, both ways: what nft
// made, the library reads back field for field (a counter's packets as nft
// counts them); what the library writes, `nft -j list ruleset` shows as it
// shows nft's own. Then the reset that reads, the refusal of a delete while
// a rule refers to the object, and a whole ruleset with objects copied.
import t from 'tap';

import { type Change, type NftObject, NftablesTransactionError, rulesetChanges } from '../../lib/nftables/index.js';
import { freshNetns } from '../support/netns.js';
import { nftJson, openNftables } from '../support/nft-tool.js';
import { udpBurst } from '../support/conntrack-env.js';

const OBJECTS = `
table inet t {
  counter hits { packets 10 bytes 1000 }
  counter cc { comment "x"; }
  quota q { over 100 mbytes used 1 kbytes }
  quota q2 { 5 kbytes }
  limit l { rate 10/second burst 20 packets }
  limit lb { rate over 1 mbytes/second burst 100 kbytes }
  limit lm { rate 5/minute; comment "per minute"; }
  ct helper ftp { type "ftp" protocol tcp; }
}
`;
const T = { family: 'inet', table: 't' } as const;
/** What the library reads of OBJECTS, handles aside; in the kernel's order, which is the order made. */
const READ: NftObject[] = [
  { ...T, name: 'hits', type: 'counter', packets: 10n, bytes: 1000n, use: 0 },
  { ...T, name: 'cc', type: 'counter', packets: 0n, bytes: 0n, comment: 'x', use: 0 },
  { ...T, name: 'q', type: 'quota', bytes: 104857600n, consumed: 1024n, over: true, use: 0 },
  { ...T, name: 'q2', type: 'quota', bytes: 5120n, consumed: 0n, use: 0 },
  { ...T, name: 'l', type: 'limit', rate: 10, unit: 1, limitType: 'packets', burst: 20, use: 0 },
  { ...T, name: 'lb', type: 'limit', rate: 1048576, unit: 1, limitType: 'bytes', burst: 102400, over: true, use: 0 },
  { ...T, name: 'lm', type: 'limit', rate: 5, unit: 60, limitType: 'packets', burst: 5, comment: 'per minute', use: 0 },
];

const withoutHandle = (objects: NftObject[]) => objects.map(({ handle, ...o }) => o);

t.test('what nft made, the library reads back field for field', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], OBJECTS);
  const nft = await openNftables(t, ns);
  const read = await nft.listObjects();
  t.same(withoutHandle(read.slice(0, READ.length)), READ);
  // The ct helper has no typed form here: its state is kept as the kernel's attributes.
  const helper = read[READ.length];
  t.match(helper, { ...T, name: 'ftp', type: 'ct helper' });
  t.ok('data' in helper && helper.data.length > 0, 'the helper keeps its state as bytes');
  t.ok(read.every((o) => typeof o.handle === 'number' && o.handle > 0), 'each has its handle');
  // The kernel filters by table and kind.
  t.same((await nft.listObjects({ table: 't', type: 'quota' })).map((o) => o.name), ['q', 'q2']);
  t.same(await nft.listObjects({ table: 'nosuch' }), []);
  t.same(withoutHandle((await nft.ruleset()).objects), withoutHandle(read));
});

t.test('a counter read while packets pass: the library reads what nft counts', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], `${OBJECTS}\nadd chain inet t out { type filter hook output priority 0; }\nadd rule inet t out ip daddr 127.0.0.1 counter name "hits"\n`);
  await udpBurst(ns, '127.0.0.1', 9, 3);
  const nft = await openNftables(t, ns);
  const ours = (await nft.listObjects({ type: 'counter' })).find((o) => o.name === 'hits');
  const theirs = (JSON.parse(await ns.exec('nft', ['-j', 'list', 'counter', 'inet', 't', 'hits'])) as { nftables: Array<{ counter?: { packets: number; bytes: number } }> })
    .nftables.find((x) => x.counter)?.counter;
  t.ok(theirs && theirs.packets >= 13, `nft counted the datagrams and their answers (${theirs?.packets} packets)`);
  // The counter started from nft's 10 packets and 1000 bytes.
  t.ok(theirs!.bytes > 1000, 'and their bytes');
  t.match(ours, { type: 'counter', packets: BigInt(theirs!.packets), bytes: BigInt(theirs!.bytes), use: 1 });
});

t.test('what the library writes, nft lists as it lists its own', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], OBJECTS);
  const [from, to] = await Promise.all([openNftables(t, src), openNftables(t, dst)]);
  // From typed objects written here, and the helper as the library read it.
  const helper = (await from.listObjects({ type: 'ct helper' }))[0];
  await to.commit([
    { op: 'addTable', table: { family: 'inet', name: 't' } },
    ...[...READ.map(({ use, ...o }) => o), helper].map((object) => ({ op: 'addObject' as const, object })),
  ]);
  t.same(await nftJson(dst), await nftJson(src));
  // Adding what exists leaves it; exclusive refuses it, as `nft create counter` does.
  await to.commit([{ op: 'addObject', object: { ...T, name: 'hits', type: 'counter' } }]);
  t.match((await to.listObjects({ type: 'counter' }))[0], { name: 'hits', packets: 10n });
  const err = await to.commit([{ op: 'addObject', object: { ...T, name: 'hits', type: 'counter' }, exclusive: true }]).catch((e: unknown) => e);
  t.ok(err instanceof NftablesTransactionError);
  t.match(err, { code: 'EEXIST', index: 0 });
});

t.test('resetObjects: what counters and quotas held, read and zeroed in one step', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], OBJECTS);
  const nft = await openNftables(t, ns);
  const held = await nft.resetObjects({ table: 't' });
  t.match(held.find((o) => o.name === 'hits'), { packets: 10n, bytes: 1000n });
  t.match(held.find((o) => o.name === 'q'), { consumed: 1024n });
  const after = await nftJson(ns);
  t.match(after, [{}, { counter: { name: 'hits', packets: 0, bytes: 0 } }]);
  t.match(after, [{}, {}, {}, { quota: { name: 'q', used: 0 } }]);
  t.match((await nft.listObjects({ type: 'counter' }))[0], { name: 'hits', packets: 0n, bytes: 0n });
});

t.test('a delete refused while a rule refers to the object applies nothing', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], `${OBJECTS}\nadd chain inet t c\nadd rule inet t c counter name "hits"\n`);
  const nft = await openNftables(t, ns);
  const before = await nftJson(ns);
  const [hits, q] = await Promise.all([nft.listObjects({ type: 'counter' }), nft.listObjects({ type: 'quota' })]);
  // An object as read deletes too.
  const err = await nft.commit([{ op: 'deleteObject', object: q[0] }, { op: 'deleteObject', object: hits[0] }]).catch((e: unknown) => e);
  t.ok(err instanceof NftablesTransactionError);
  t.match(err, { code: 'EBUSY', index: 1, change: { op: 'deleteObject' } });
  t.same(await nftJson(ns), before, 'the quota is still there');
  await nft.commit([{ op: 'flushChain', chain: { ...T, name: 'c' } }, { op: 'deleteObject', object: { ...T, type: 'counter', name: 'hits' } }, { op: 'deleteObject', object: q[0] }]);
  const left = (await nft.listObjects()).map((o) => o.name);
  t.same(left, ['cc', 'q2', 'l', 'lb', 'lm', 'ftp']);
  t.same((JSON.parse(await ns.exec('nft', ['-j', 'list', 'counters'])) as { nftables: Array<{ counter?: { name: string } }> }).nftables.flatMap((x) => (x.counter ? [x.counter.name] : [])), ['cc']);
});

t.test('a ruleset with objects, an object map and rules that name them copies whole', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], `${OBJECTS}
add map inet t byaddr { type ipv4_addr : counter; elements = { 10.0.0.1 : "hits", 10.0.0.2 : "cc" } }
add chain inet t c
add rule inet t c counter name "hits" accept
add rule inet t c quota name "q" drop
add rule inet t c counter name ip saddr map @byaddr
`);
  const [from, to] = await Promise.all([openNftables(t, src), openNftables(t, dst)]);
  await to.commit(rulesetChanges(await from.ruleset()));
  t.same(await nftJson(dst), await nftJson(src));
});

t.test('bad input: a typed error naming the field, and nothing sent', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], OBJECTS);
  const nft = await openNftables(t, ns);
  const before = await nftJson(ns);
  const refused = async (object: unknown, expected: { name: string; field: string }, op = 'addObject') => {
    const sent = nft.counters();
    // A good change first: the transaction is refused whole, before anything is sent.
    await t.rejects(nft.commit([{ op: 'addObject', object: { ...T, name: 'fine', type: 'counter' } }, { op, object } as Change]), expected);
    t.same(nft.counters(), sent, 'nothing sent');
  };
  await refused({ ...T, name: 'x', type: 'counters' }, { name: 'TypeError', field: 'changes[1].object.type' });
  await refused({ ...T, name: 'x', type: 'counter', packets: -1n }, { name: 'RangeError', field: 'changes[1].object.packets' });
  await refused({ ...T, name: 'x', type: 'counter', pakets: 1n }, { name: 'TypeError', field: 'changes[1].object.pakets' });
  await refused({ ...T, name: 'x', type: 'quota' }, { name: 'TypeError', field: 'changes[1].object.bytes' });
  await refused({ ...T, name: 'x', type: 'limit', rate: 10, unit: 0 }, { name: 'RangeError', field: 'changes[1].object.unit' });
  await refused({ ...T, name: 'x', type: 'ct helper' }, { name: 'TypeError', field: 'changes[1].object.data' });
  await refused({ ...T, name: 'x'.repeat(300), type: 'counter' }, { name: 'RangeError', field: 'changes[1].object.name' });
  await refused({ ...T, name: 'x', type: 'counter', comment: 'c'.repeat(200) }, { name: 'RangeError', field: 'changes[1].object.comment' });
  await refused({ family: 'inet', name: 'hits', type: 'counter' }, { name: 'TypeError', field: 'changes[1].object.table' }, 'deleteObject');
  await refused({ ...T, name: 'hits' }, { name: 'TypeError', field: 'changes[1].object.type' }, 'deleteObject');
  t.same(await nftJson(ns), before);
});
