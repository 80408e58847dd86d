// Transactions against the kernel: all or nothing (checked with nft), the
// refused change named by index, element and attribute, the generation
// guard against a concurrent nft, bad input refused before anything is
// sent, incremental changes by handle and key, and element lists too large
// for one message.
import t, { type Test } from 'tap';

import { GenerationChangedError, Nftables, NftablesTransactionError, type Change } from '../../lib/nftables/index.js';
import { freshNetns, type Netns } from '../support/netns.js';
import { KP_NFT } from '../support/nft-ruleset.js';

const kp = { family: 'inet', table: 'kp' } as const;

async function setup(t: Test): Promise<{ ns: Netns; nft: Nftables }> {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], KP_NFT);
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  return { ns, nft };
}

/** nft's listing, less the time left on elements (it runs down between two listings). */
const list = async (ns: Netns) => (await ns.exec('nft', ['list', 'ruleset'])).replace(/ expires \S+/g, '');

t.test('a refused change: nothing of the transaction is applied, and the error names it', async (t) => {
  const { ns, nft } = await setup(t);
  const before = await list(ns);
  const changes: Change[] = [
    { op: 'addChain', chain: { ...kp, name: 'fresh' } },
    { op: 'addElements', set: { ...kp, name: 's' }, elements: [{ key: ['10.9.0.1', 'tcp', 1] }] },
    { op: 'addRule', rule: { ...kp, chain: 'fresh', expressions: [
      { type: 'payload', base: 'network', offset: 12, len: 4, dreg: 1 },
      { type: 'lookup', set: 'nosuch', sreg: 1 },
    ] } },
    { op: 'addChain', chain: { ...kp, name: 'fresh2' } },
  ];
  const err = await nft.commit(changes).then(() => undefined, (e: unknown) => e);
  t.type(err, NftablesTransactionError);
  const e = err as NftablesTransactionError;
  t.equal(e.index, 2, 'the rule with the lookup of a missing set');
  t.equal(e.code, 'ENOENT');
  t.equal(e.attribute, 'expressions[1](lookup)', 'the expression the kernel pointed at');
  t.same(e.change, changes[2]);
  t.match(e.message, /^commit failed: ENOENT: the kernel refused change 2 \(addRule, at expressions\[1\]\(lookup\)\); nothing of the 4 changes was applied/, 'the message, from its parts');
  t.equal(await list(ns), before, 'nft lists the ruleset unchanged');
});

t.test('a refused element is named by its index in the change', async (t) => {
  const { ns, nft } = await setup(t);
  const before = await list(ns);
  const elements = Array.from({ length: 5000 }, (_, i) => ({ key: ['10.20.' + (i >> 8) + '.' + (i & 255), 'udp', 53] as [string, string, number] }));
  elements[4321] = { key: ['10.0.0.1', 'tcp', 80] }; // already in the set: refused with exclusive
  const err = await nft.commit([
    { op: 'addChain', chain: { ...kp, name: 'fresh' } },
    { op: 'addElements', set: { ...kp, name: 's' }, elements, exclusive: true },
  ]).then(() => undefined, (e: unknown) => e);
  t.type(err, NftablesTransactionError);
  const e = err as NftablesTransactionError;
  t.equal(e.code, 'EEXIST');
  t.equal(e.index, 1);
  t.equal(e.element, 4321, 'the element, across the messages the list was split into');
  t.equal(await list(ns), before, 'nothing applied');
});

t.test('the generation guard: a concurrent nft change refuses the whole transaction', async (t) => {
  const { ns, nft } = await setup(t);
  const rs = await nft.ruleset({ family: 'inet', table: 'kp' });
  await ns.exec('nft', ['add', 'table', 'ip', 'other']);
  const before = await list(ns);
  const change: Change = { op: 'addElements', set: { ...kp, name: 'r' }, elements: [{ key: '172.16.0.0/12' }] };
  await t.rejects(nft.commit([change], { generation: rs.generation }), GenerationChangedError);
  await t.rejects(nft.commit([change], { generation: rs.generation }), { code: 'ERESTART', expected: rs.generation, message: /changed since generation/ });
  t.equal(await list(ns), before, 'nothing applied');
  await nft.commit([change], { generation: await nft.generation() });
  t.match(await ns.exec('nft', ['list', 'set', 'inet', 'kp', 'r']), /172\.16\.0\.0\/12/, 'applied at the current generation');
});

t.test('bad input: a typed error naming the field, and nothing sent', async (t) => {
  const { nft } = await setup(t);
  // Element changes are checked against their set's types: the handle knows them once it has read the sets.
  await nft.listSets();
  const refused = async (changes: unknown, expected: { name: string; code?: string; field: string }) => {
    const before = nft.counters();
    await t.rejects(nft.commit(changes as Change[]), expected);
    t.same(nft.counters(), before, 'nothing sent');
  };
  await refused([{ op: 'addTable', table: { family: 'ipv4', name: 'x' } }], { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', field: 'changes[0].table.family' });
  await refused([{ op: 'addChain', chain: { ...kp, name: 'c2', hook: 'input', priority: 1.5 } }], { name: 'RangeError', field: 'changes[0].chain.priority' });
  await refused([{ op: 'addRule', rule: { ...kp, chain: 'c', expressions: [{ type: 'cmp', op: 'eq', sreg: 5, data: Buffer.from([1]) }] } }], { name: 'RangeError', field: 'changes[0].rule.expressions[0].sreg' });
  await refused([{ op: 'addRule', rule: { ...kp, chain: 'c', expressions: [{ type: 'meta', key: 'marks', dreg: 1 }] } }], { name: 'TypeError', field: 'changes[0].rule.expressions[0].key' });
  await refused([{ op: 'addRule', rule: { ...kp, chain: 'c', expressions: [{ type: 'verdict', verdict: 'jump' }] } }], { name: 'TypeError', field: 'changes[0].rule.expressions[0].chain' });
  await refused([{ op: 'addElements', set: { ...kp, name: 's' }, elements: [{ key: ['10.0.0.1', 'tcp'] }] }], { name: 'TypeError', field: 'changes[0].elements[0].key' });
  await refused([{ op: 'addElements', set: { ...kp, name: 'r' }, elements: [{ key: '10.0.0.0/33' }] }], { name: 'TypeError', field: 'changes[0].elements[0].key' });
  await refused([{ op: 'addElements', set: { ...kp, name: 's' }, elements: [{ key: ['10.0.0.256', 'tcp', 80] }] }], { name: 'TypeError', field: 'changes[0].elements[0].key[0]' });
  await refused([{ op: 'addSet', set: { ...kp, name: 'x', type: 'ipv4_addr', flgas: ['interval'] } }], { name: 'TypeError', field: 'changes[0].set.flgas' });
  await refused([{ op: 'addSet', set: { ...kp, name: 'x', type: ['ipv4_addr', 'integer'] } }], { name: 'TypeError', field: 'changes[0].set.type[1]' });
  await refused([{ op: 'addTable', table: { family: 'inet', name: 'x'.repeat(256) } }], { name: 'RangeError', field: 'changes[0].table.name' });
});

t.test('incremental changes: rules by handle, elements by key, flushes', async (t) => {
  const { ns, nft } = await setup(t);
  const rules = await nft.listRules({ family: 'inet', table: 'kp', chain: 'c' });
  const reject = rules.find((r) => r.expressions[0].type === 'reject')!;
  await nft.commit([
    { op: 'replaceRule', rule: { ...reject, handle: reject.handle!, expressions: [{ type: 'counter' }, { type: 'verdict', verdict: 'drop' }], comment: 'was reject' } },
    { op: 'insertRule', rule: { ...kp, chain: 'c', expressions: [{ type: 'notrack' }] } },
    { op: 'deleteRule', rule: { ...kp, chain: 'c', handle: rules[0].handle! } },
    { op: 'deleteElements', set: { ...kp, name: 's' }, elements: [{ key: ['10.0.0.1', 'tcp', 80] }] },
    { op: 'deleteElements', set: { ...kp, name: 'r' }, elements: [{ key: '192.168.1.1-192.168.1.5' }] },
    { op: 'addElements', set: { ...kp, name: 'm' }, elements: [{ key: ['10.0.0.3', 'sctp', 3868], value: { verdict: 'goto', chain: 'r1' } }] },
    { op: 'flushChain', chain: { ...kp, name: 'n' } },
    { op: 'flushSet', set: { ...kp, name: 'ranges' } },
  ]);
  const c = await ns.exec('nft', ['list', 'chain', 'inet', 'kp', 'c']);
  t.match(c, /counter packets 0 bytes 0 drop comment "was reject"/);
  t.notMatch(c, /\n\s*reject|ip saddr != @r/);
  t.match(c.split('\n').find((l) => l.includes('notrack') || l.includes('ip daddr')), /notrack/, 'inserted first');
  t.same((await nft.listElements({ ...kp, name: 's' })).map((e) => e.key), [['10.0.0.2', 'udp', 53]]);
  t.same((await nft.listElements({ ...kp, name: 'r' })).map((e) => e.key), ['10.0.0.0/8']);
  t.match(await ns.exec('nft', ['list', 'map', 'inet', 'kp', 'm']), /10\.0\.0\.3 \. sctp \. 3868 : goto r1/);
  t.same(await nft.listRules({ family: 'inet', table: 'kp', chain: 'n' }), []);
  t.same(await nft.listElements({ ...kp, name: 'ranges' }), []);
  await nft.commit([{ op: 'flushTable', table: { family: 'inet', name: 'kp' } }, { op: 'deleteSet', set: { ...kp, name: 'tc' } }]);
  t.same(await nft.listRules({ family: 'inet', table: 'kp' }), []);
  t.same((await nft.listSets({ family: 'inet', table: 'kp' })).map((s) => s.name), ['s', 'r', 'ranges', 'm']);
  await nft.commit([{ op: 'deleteTable', table: { family: 'inet', name: 'kp' } }]);
  t.equal((await list(ns)).trim(), '', 'the table is gone');
});

t.test('elements in bulk: 100,000 in one transaction, split across messages, read back whole', async (t) => {
  const ns = await freshNetns(t, 'nft');
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  const n = 100_000;
  const elements = Array.from({ length: n }, (_, i) => ({ key: [`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, i & 1 ? 'tcp' : 'udp', 30000 + (i % 2768)] as [string, string, number] }));
  const messages = await nft.commit([
    { op: 'addTable', table: { family: 'ip', name: 'big' } },
    { op: 'addSet', set: { family: 'ip', table: 'big', name: 'eps', type: ['ipv4_addr', 'inet_proto', 'inet_service'], size: 200_000 } },
    { op: 'addElements', set: { family: 'ip', table: 'big', name: 'eps' }, elements },
  ]);
  t.ok(messages > 40, `${messages} messages`);
  const read = await nft.listElements({ family: 'ip', table: 'big', name: 'eps' });
  t.equal(read.length, n);
  const listed = (await ns.exec('nft', ['list', 'set', 'ip', 'big', 'eps'])).match(/\d+\.\d+\.\d+\.\d+ \. (tcp|udp) \. \d+/g) ?? [];
  t.equal(listed.length, n, 'nft lists every one');
  t.same(new Set(read.map((e) => (e.key as Array<string | number>).join(' . '))), new Set(listed));
});
