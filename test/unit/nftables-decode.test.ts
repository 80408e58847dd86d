// The kernel's listing as nft received it (test/fixtures/nft/list-ruleset-json:
// the dump replies and nft's own JSON reading of them), decoded by us and
// compared field by field with nft's reading: tables, chains, sets with
// their elements, rules with their handles and comments.
import t from 'tap';

import { addon, type RawReply } from '../../lib/nftables/native.js';
import { elementsFromRaw } from '../../lib/nftables/elements.js';
import { chainFromRaw, ruleFromRaw, setFromRaw, tableFromRaw } from '../../lib/nftables/objects.js';
import type { Element, Key, KeyPart } from '../../lib/nftables/index.js';
import { loadFixture, messages } from '../support/fixtures.js';

const fx = loadFixture('nft', 'list-ruleset-json');
const nftJson = (JSON.parse(fx.stdout!) as { nftables: Array<Record<string, Record<string, unknown>>> }).nftables;
const of = (kind: string) => nftJson.filter((o) => kind in o).map((o) => o[kind]);
const replies: RawReply[] = messages(fx.received).filter((m) => m.type >> 8 === 10).map((m) => addon.nftDecode(m.bytes));
const byType = (type: string) => replies.filter((r) => r.type === type);

/** One key part as nft's JSON writes it. */
function partJson(p: KeyPart): unknown {
  if (typeof p === 'string' && p.includes('/')) {
    const [addr, len] = p.split('/');
    return { prefix: { addr, len: Number(len) } };
  }
  if (typeof p === 'string' && /^\d+\.\d+\.\d+\.\d+-/.test(p)) return { range: p.split('-') };
  return p;
}
const keyJson = (k: Key) => (Array.isArray(k) ? { concat: k.map(partJson) } : partJson(k));

function elementJson(e: Element): unknown {
  const key = keyJson(e.key as Key);
  if (e.value && typeof e.value === 'object' && 'verdict' in e.value) {
    const v = e.value;
    return [key, v.chain ? { [v.verdict]: { target: v.chain } } : { [v.verdict]: null }];
  }
  if (e.comment === undefined && e.counter === undefined && e.timeout === undefined) return key;
  const o: Record<string, unknown> = { val: key };
  if (e.expires !== undefined) o.expires = Math.floor(e.expires / 1000);
  if (e.comment !== undefined) o.comment = e.comment;
  if (e.counter) o.counter = { packets: Number(e.counter.packets), bytes: Number(e.counter.bytes) };
  return { elem: o };
}

t.test('tables', async (t) => {
  t.same(byType('newtable').map((m) => tableFromRaw(m.family, m.attrs)).map(({ family, name, handle }) => ({ family, name, handle })), of('table'));
});

t.test('chains', async (t) => {
  const ours = byType('newchain').map((m) => chainFromRaw(m.family, m.attrs));
  t.same(
    ours.map((c) => ({ family: c.family, table: c.table, name: c.name, handle: c.handle, ...(c.hook ? { type: c.type, hook: c.hook, prio: c.priority, policy: c.policy } : {}) })),
    of('chain'),
  );
});

t.test('sets and maps, with their elements', async (t) => {
  const elems = byType('newsetelem');
  const ours = byType('newset').map((m) => {
    const { set, shape } = setFromRaw(m.family, m.attrs);
    const raw = elems.filter((e) => e.attrs.set === set.name).flatMap((e) => e.attrs.elements as never[]);
    return { set, elements: elementsFromRaw(shape, raw) };
  });
  const theirs = [...of('set'), ...of('map')].sort((a, b) => (a.handle as number) - (b.handle as number));
  t.equal(ours.length, theirs.length);
  ours.forEach(({ set, elements }, i) => {
    const n = theirs[i];
    t.equal(set.name, n.name);
    t.same(set.type, n.type, `${set.name}: type`);
    t.same(set.flags, n.flags, `${set.name}: flags`);
    t.equal(set.handle, n.handle);
    t.equal(set.comment, n.comment);
    t.equal(set.map, n.map, `${set.name}: map`);
    t.equal(set.timeout === undefined ? undefined : set.timeout / 1000, n.timeout);
    t.equal(set.counter ?? false, Boolean((n.stmt as unknown[] | undefined)?.some((s) => 'counter' in (s as object))), `${set.name}: counter`);
    // The kernel lists a hash set in its own order; nft keeps that order.
    t.same(new Set(elements.map(elementJson).map((e) => JSON.stringify(e))), new Set((n.elem as unknown[]).map((e) => JSON.stringify(e))), `${set.name}: elements`);
  });
});

t.test('rules: chain, handle and comment', async (t) => {
  const ours = byType('newrule').map((m) => ruleFromRaw(m.family, m.attrs));
  t.same(ours.map((r) => ({ chain: r.chain, handle: r.handle, comment: r.comment })), of('rule').map((r) => ({ chain: r.chain, handle: r.handle, comment: r.comment })));
  t.same(ours[0].expressions.map((e) => e.type), ['meta', 'cmp', 'payload', 'cmp', 'meta', 'cmp', 'payload', 'cmp', 'counter', 'verdict']);
});
