// Nftables against the kernel and nft, both ways: what the library writes,
// `nft -j list ruleset` shows exactly as it shows the same ruleset written
// by `nft -f`; what `nft -f` wrote, the library reads back field by field;
// and what the library reads, it writes back to the same ruleset.
import t from 'tap';

import { Nftables, formatRule, rulesetChanges, type Expression, type Rule } from '../../lib/nftables/index.js';
import { freshNetns } from '../support/netns.js';
import { nftJson, openNftables } from '../support/nft-tool.js';
import { KP_CHANGES, KP_NFT, KP_RULES } from '../support/nft-ruleset.js';

/** A rule as the kernel lists it: counters counted, bitwise with its op, lookups without the set id. */
function asListed(e: Expression): Expression {
  if (e.type === 'counter') return { type: 'counter', packets: 0n, bytes: 0n };
  if (e.type === 'bitwise' && e.op === undefined) return { ...e, op: 'bool' };
  return e;
}

t.test('what the library writes, nft lists as it lists the same ruleset written by nft -f', async (t) => {
  const [ours, theirs] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  const nft = await openNftables(t, ours);
  const messages = await nft.commit(KP_CHANGES);
  t.equal(messages, KP_CHANGES.length + 2, 'one message per change, and BEGIN and END');
  await theirs.exec('nft', ['-f', '-'], KP_NFT);
  const mine = await nftJson(ours);
  t.same(mine, await nftJson(theirs));
  t.equal(mine.length, 1 + 5 + 4 + KP_RULES.length, 'a table, 5 sets, 4 chains and every rule');
});

t.test('what nft -f wrote, the library reads back field by field', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], KP_NFT);
  const nft = await openNftables(t, ns);
  const rs = await nft.ruleset();
  t.equal(rs.generation, await nft.generation());
  t.match(rs.tables, [{ family: 'inet', name: 'kp', handle: Number, use: Number }]);
  t.same(rs.tables.length, 1);
  const chains = rs.chains.map(({ handle, use, ...c }) => c);
  // A base chain written without a policy has the kernel's: accept.
  const written = KP_CHANGES.flatMap((c) => (c.op === 'addChain' ? [c.chain] : []));
  t.same(chains, written.map((c) => (c.hook && !c.policy ? { ...c, policy: 'accept' } : c)));
  const sets = rs.sets.map(({ handle, elements, ...s }) => s);
  t.same(sets, KP_CHANGES.filter((c) => c.op === 'addSet').map((c) => (c as { set: object }).set));
  const elements = Object.fromEntries(rs.sets.map((s) => [s.name, s.elements.map(({ expires, counter, ...e }) => e)]));
  for (const c of KP_CHANGES) if (c.op === 'addElements') t.same(new Set(elements[c.set.name]), new Set(c.elements), `elements of ${c.set.name}`);
  t.ok(rs.sets.find((s) => s.name === 'tc')!.elements[0].expires! <= 30_000, 'time left on the element with a timeout');
  t.same(rs.sets.find((s) => s.name === 'tc')!.elements[0].counter, { packets: 0n, bytes: 0n });
  const rules = rs.rules.map(({ handle, ...r }) => r);
  t.same(rules, KP_RULES.map((r): Rule => ({ family: 'inet', table: 'kp', ...r, expressions: r.expressions.map(asListed) })));
  t.ok(rs.rules.every((r) => Number.isInteger(r.handle)), 'rules come with their handles');
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  for (const r of rs.rules) t.ok(listed.includes(formatRule(r)), `nft lists: ${formatRule(r)}`);
  const rules2 = await nft.listRules({ family: 'inet', table: 'kp', chain: 'n' });
  t.same(rules2.map((r) => r.chain), ['n', 'n'], 'listRules of one chain');
  t.same((await nft.listElements({ family: 'inet', table: 'kp', name: 'ranges' })).map((e) => e.key), [['10.0.0.0/8', 80], ['192.168.0.1-192.168.0.9', '1000-2000']]);
});

t.test('what the library reads, it writes back to the same ruleset', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], KP_NFT);
  const rs = await (await openNftables(t, src)).ruleset();
  const nft = await openNftables(t, dst);
  await nft.commit(rulesetChanges(rs));
  t.same(await nftJson(dst), await nftJson(src));
});
