// Rules with limit, quota and named objects (`counter name "hits"`, and
// one chosen by a map) against
// the kernel and nft, both ways: what nft wrote, the library reads back
// typed, each rule printed as nft lists it; what the library writes back,
// `nft -j list ruleset` shows exactly as it shows nft's.
import t from 'tap';

import { type Expression, Nftables, formatRule } from '../../lib/nftables/index.js';
import { freshNetns, type Netns } from '../support/netns.js';
import { nftJson } from '../support/nft-tool.js';

/** The table and its named objects; nft writes the rules below into it. */
const OBJECTS = `
table inet s {
  counter hits { }
  counter other { }
  quota q { over 2 mbytes }
  limit l { rate 100/second }
  map byaddr { type ipv4_addr : counter; elements = { 10.0.0.1 : "hits", 10.0.0.2 : "other" } }
  chain c { }
}
`;
/** Each rule as nft is given it, and as the library reads it. */
const RULES: Array<[string, Expression[]]> = [
  ['limit rate 10/second accept', [{ type: 'limit', rate: 10, unit: 1, limitType: 'packets', burst: 5 }, { type: 'verdict', verdict: 'accept' }]],
  ['limit rate over 1 mbytes/second burst 100 kbytes drop', [{ type: 'limit', rate: 1048576, unit: 1, limitType: 'bytes', burst: 102400, over: true }, { type: 'verdict', verdict: 'drop' }]],
  ['limit rate 5/minute burst 10 packets', [{ type: 'limit', rate: 5, unit: 60, limitType: 'packets', burst: 10 }]],
  ['quota over 100 mbytes drop', [{ type: 'quota', bytes: 104857600n, consumed: 0n, over: true }, { type: 'verdict', verdict: 'drop' }]],
  ['quota 1500 bytes', [{ type: 'quota', bytes: 1500n, consumed: 0n }]],
  ['counter name "hits" accept', [{ type: 'objref', objectType: 'counter', name: 'hits' }, { type: 'verdict', verdict: 'accept' }]],
  ['quota name "q"', [{ type: 'objref', objectType: 'quota', name: 'q' }]],
  ['limit name "l"', [{ type: 'objref', objectType: 'limit', name: 'l' }]],
  // The object a map gives for the packet's address (printed in nft's debug form).
  ['counter name ip saddr map @byaddr', [
    { type: 'meta', key: 'nfproto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([2]) },
    { type: 'payload', base: 'network', offset: 12, len: 4, dreg: 1 }, { type: 'objref', sreg: 1, set: 'byaddr' },
  ]],
];

async function withObjects(ns: Netns, rules: boolean): Promise<void> {
  await ns.exec('nft', ['-f', '-'], OBJECTS + (rules ? RULES.map(([r]) => `add rule inet s c ${r}\n`).join('') : ''));
}

t.test('what nft wrote, the library reads back typed, and prints each rule as nft lists it', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await withObjects(ns, true);
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  const rules = await nft.listRules({ family: 'inet', table: 's', chain: 'c' });
  t.same(rules.map((r) => r.expressions), RULES.map(([, e]) => e));
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  for (const r of rules.slice(0, -1)) t.ok(listed.includes(formatRule(r)), `nft lists: ${formatRule(r)}`);
});

t.test('what the library reads, it writes back, and nft lists the two rulesets the same', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await withObjects(src, true);
  await withObjects(dst, false);
  const [from, to] = await Promise.all([Nftables.open({ netns: src.path }), Nftables.open({ netns: dst.path })]);
  t.teardown(() => (from.close(), to.close()));
  const rules = await from.listRules({ family: 'inet', table: 's', chain: 'c' });
  await to.commit(rules.map(({ handle, ...rule }) => ({ op: 'addRule' as const, rule })));
  t.same(await nftJson(dst), await nftJson(src));
});
