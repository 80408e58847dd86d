// The shape of rules upstream kube-proxy writes in its nftables mode (an
// endpoint picked by `numgen random mod 2 vmap { 0 : goto ..., 1 : goto ...
// }`, session affinity by `update @affinity-... { ip saddr }`), with hash,
// integer keys and meters besides (test/fixtures/nft/
// kube-proxy-nftables-mode.nft), against the kernel and nft: what nft
// wrote, the library reads typed, with no expression left raw, and prints
// every rule as nft lists it; what it read, it writes into a fresh
// namespace, where nft lists the same ruleset (integer keys in host order,
// a type it has no name for in the byte order nft recorded, a set
// statement's timeout and element state kept).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { formatRule, rulesetChanges } from '../../lib/nftables/index.js';
import { freshNetns } from '../support/netns.js';
import { nftText, openNftables } from '../support/nft-tool.js';

const RULESET = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/nft/kube-proxy-nftables-mode.nft'), 'utf8');

t.test('what nft wrote, read typed and printed as nft lists it', async (t) => {
  const ns = await freshNetns(t, 'nft');
  await ns.exec('nft', ['-f', '-'], RULESET);
  const rs = await (await openNftables(t, ns)).ruleset();
  const raw = rs.rules.flatMap((r) => r.expressions.filter((e) => e.type === 'raw').map((e) => `${r.chain}: ${(e as { name: string }).name}`));
  t.same(raw, [], 'no expression left raw');
  const listed = (await ns.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  for (const r of rs.rules) {
    const text = formatRule(r, { sets: rs.sets });
    t.ok(listed.includes(text), text);
  }
  const pick = rs.rules.find((r) => r.expressions.some((e) => e.type === 'numgen'))!;
  t.match(pick.expressions[0], { type: 'numgen', mode: 'random', modulus: 2, dreg: 1 });
  const endpoints = rs.sets.find((s) => s.table === 'kube-proxy' && s.flags?.includes('anonymous'))!;
  t.match(endpoints, { type: 'integer', map: 'verdict' });
  t.same(endpoints.elements.map((e) => e.key).sort(), [0, 1], 'its keys as numbers');
  const byName = (name: string) => rs.sets.find((s) => s.name === name)!;
  t.equal(byName('ng').type, 'integer', '`typeof numgen random mod 2`');
  t.same(byName('zones').type, { id: 4, len: 2, byteorder: 'host' }, '`typeof ct zone`: an integer of 2 bytes, with the byte order nft recorded');
  t.same(byName('zones').elements.map((e) => Buffer.from(e.key as Uint8Array).readUInt16LE(0)).sort(), [1, 2]);
  const hashes = rs.rules.flatMap((r) => r.expressions.filter((e) => e.type === 'hash'));
  t.match(hashes, [{ hash: 'jhash', len: 8, modulus: 8, seed: 0xfeed, offset: 1 }, { hash: 'symhash', modulus: 2 }]);
  const updates = rs.rules.flatMap((r) => r.expressions.filter((e) => e.type === 'dynset'));
  t.match(updates, [
    { op: 'update', set: 'affinity-ep1' },
    { op: 'update', set: 'rl', timeout: 30000, expressions: [{ type: 'limit', rate: 10, over: true }] },
    { op: 'add', set: 'seen', expressions: [{ type: 'counter' }] },
    { op: 'update', set: 'lastport', sregData: 2 },
    { op: 'delete', set: 'seen' },
    { op: 'update', set: 'rl', timeout: 5_400_000, expressions: [{ type: 'counter' }, { type: 'limit', rate: 5 }] },
    { op: 'update', set: 'rl', timeout: 1500 },
  ]);
  t.notOk('timeout' in updates[0], "a set statement without its own timeout reads back without one (the kernel lists 0)");
});

t.test('what the library read, it writes elsewhere, and nft lists the same', async (t) => {
  const [src, dst] = await Promise.all([freshNetns(t, 'nft'), freshNetns(t, 'nft')]);
  await src.exec('nft', ['-f', '-'], RULESET);
  const [from, to] = await Promise.all([openNftables(t, src), openNftables(t, dst)]);
  await to.commit(rulesetChanges(await from.ruleset()));
  t.equal(await nftText(dst), await nftText(src));
});

t.test('numgen and hash written by the library, listed by nft as it writes them', async (t) => {
  const ns = await freshNetns(t, 'nft');
  const nft = await openNftables(t, ns);
  const T = { family: 'inet', table: 'g' } as const;
  await nft.commit([
    { op: 'addTable', table: { family: 'inet', name: 'g' } },
    { op: 'addChain', chain: { ...T, name: 'c' } },
    { op: 'addRule', rule: { ...T, chain: 'c', expressions: [{ type: 'numgen', dreg: 1, modulus: 4, mode: 'inc', offset: 100 }, { type: 'meta', key: 'mark', sreg: 1 }] } },
    { op: 'addRule', rule: { ...T, chain: 'c', expressions: [{ type: 'hash', hash: 'symhash', dreg: 1, modulus: 2 }, { type: 'meta', key: 'mark', sreg: 1 }] } },
  ]);
  const listed = await ns.exec('nft', ['list', 'chain', 'inet', 'g', 'c']);
  t.match(listed, /meta mark set numgen inc mod 4 offset 100\n/);
  t.match(listed, /meta mark set symhash mod 2\n/);
});
