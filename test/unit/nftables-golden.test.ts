// The bytes we send, compared with the bytes `nft` sent (test/fixtures/nft,
// captured with strace; see test/fixtures/README.md). Ignored: nlmsg_seq and
// nlmsg_pid (both differ between any two runs), NLM_F_REQUEST (our socket
// sets it on send) and the batch's generation id (absent from both here).
// Besides, our socket asks for an ack on a transaction's last change (nft
// reads what is queued once sendmsg returns); that flag is set on send too,
// so it is not in these bytes either.
import t from 'tap';

import { addon } from '../../lib/nftables/native.js';
import { changesToRaw } from '../../lib/nftables/changes.js';
import type { Change, Expression } from '../../lib/nftables/index.js';
import { setShape } from '../../lib/nftables/objects.js';
import { loadFixture, messages } from '../support/fixtures.js';
import { KP_CHANGES } from '../support/nft-ruleset.js';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const NLM_F_REQUEST = 1;
const NFT = 10;
const NFNL_MSG_BATCH_BEGIN = 0x10;
const NFNL_MSG_BATCH_END = 0x11;
/** NFT_MSG_NEW/DEL of tables, chains, rules, sets, elements and objects. */
const CHANGES = new Set([0, 2, 3, 5, 6, 8, 9, 11, 12, 14, 18, 20]);

function normalize(msg: Buffer): string {
  const b = Buffer.from(msg);
  b.fill(0, 8, 16);
  b.writeUInt16LE(b.readUInt16LE(6) & ~NLM_F_REQUEST, 6);
  return b.toString('hex');
}

/** nft's transaction: BEGIN ... END, the last batch of the command. */
function batchOf(name: string): Buffer[] {
  const msgs = messages(loadFixture('nft', name).sent).map((m) => m.bytes);
  const begin = msgs.map((m) => m.readUInt16LE(4)).lastIndexOf(NFNL_MSG_BATCH_BEGIN);
  const end = msgs.map((m) => m.readUInt16LE(4)).lastIndexOf(NFNL_MSG_BATCH_END);
  return msgs.slice(begin, end + 1);
}

const encode = (changes: Change[], shapes = new Map<string, ReturnType<typeof setShape>>()) =>
  addon.nftEncode(changesToRaw(changes, (k) => shapes.get(k)), {});

t.test('every change nft sent decodes and encodes back to the same bytes', async (t) => {
  const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/nft');
  let n = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    for (const m of messages(loadFixture('nft', file.replace(/\.json$/, '')).sent)) {
      if (m.type >> 8 !== NFT || !CHANGES.has(m.type & 0xff)) continue;
      const d = addon.nftDecode(m.bytes);
      const [, ours] = addon.nftEncode([{ type: d.type, family: d.family, flags: m.flags, attrs: d.attrs }], {});
      t.equal(normalize(ours), normalize(m.bytes), `${file}: ${d.type}`);
      n++;
    }
  }
  t.ok(n >= 50, `${n} messages`);
});

t.test('a whole ruleset as one transaction: the same bytes as nft -f', async (t) => {
  const theirs = batchOf('transaction');
  // nft sends the interval set r's elements twice: once right after the set
  // (with an end at zero below the lowest interval, nft's own marker), once
  // where the file adds them. We send them where the caller adds them.
  const prefill = theirs.findIndex((m, i) => i > 0 && addon.nftDecode(m).type === 'newsetelem');
  t.equal(addon.nftDecode(theirs[prefill]).attrs.set, 'r');
  theirs.splice(prefill, 1);
  const ours = encode(KP_CHANGES);
  t.equal(ours.length, theirs.length, 'as many messages');
  ours.forEach((m, i) => t.equal(normalize(m), normalize(theirs[i]), `message ${i} (${i && i < ours.length - 1 ? addon.nftDecode(m).type : 'batch'})`));
});

t.test('single commands', async (t) => {
  const T = { family: 'inet', table: 't' } as const;
  const ip4: Expression[] = [{ type: 'meta', key: 'nfproto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([2]) }];
  const saddr: Expression = { type: 'payload', base: 'network', offset: 12, len: 4, dreg: 1 };
  const cases: Array<[string, Change]> = [
    ['table-add', { op: 'addTable', table: { family: 'inet', name: 't' } }],
    ['table-comment', { op: 'addTable', table: { family: 'ip', name: 't', comment: 'owned' } }],
    ['table-delete', { op: 'deleteTable', table: { family: 'inet', name: 't' } }],
    ['chain-base-filter', { op: 'addChain', chain: { ...T, name: 'c', type: 'filter', hook: 'input', priority: 0, policy: 'drop' } }],
    ['chain-regular', { op: 'addChain', chain: { ...T, name: 'r1' } }],
    ['chain-flush', { op: 'flushChain', chain: { ...T, name: 'c' } }],
    ['set-ipv6-interval', { op: 'addSet', set: { ...T, name: 'r6', type: 'ipv6_addr', flags: ['interval'] } }],
    ['map-object', { op: 'addSet', set: { ...T, name: 'om', type: 'ipv4_addr', map: { object: 'counter' } } }],
    ['map-concat-value', { op: 'addSet', set: { ...T, name: 'dn', type: 'inet_service', map: ['ipv4_addr', 'inet_service'] } }],
    ['rule-delete', { op: 'deleteRule', rule: { ...T, chain: 'c', handle: 12 } }],
    ['rule-match-counter-accept', { op: 'addRule', rule: { ...T, chain: 'c', comment: 'hi', expressions: [
      { type: 'meta', key: 'nfproto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([2]) },
      { type: 'payload', base: 'network', offset: 12, len: 1, dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([10]) },
      { type: 'meta', key: 'l4proto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([6]) },
      { type: 'payload', base: 'transport', offset: 2, len: 2, dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([0, 80]) },
      { type: 'counter' }, { type: 'verdict', verdict: 'accept' },
    ] } }],
    ['rule-limit', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [{ type: 'limit', rate: 10, unit: 1 }, { type: 'verdict', verdict: 'accept' }] } }],
    ['rule-limit-bytes-over', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [
      { type: 'limit', rate: 1048576, unit: 1, limitType: 'bytes', burst: 102400, over: true }, { type: 'verdict', verdict: 'drop' },
    ] } }],
    ['rule-quota', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [{ type: 'quota', bytes: 104857600n, over: true }, { type: 'verdict', verdict: 'drop' }] } }],
    ['rule-objref-counter', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [{ type: 'objref', objectType: 'counter', name: 'hits' }, { type: 'verdict', verdict: 'accept' }] } }],
    // nft names sets of its earlier commands by their ids too: given here as nft sent them.
    ['rule-dynset-meter', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [
      ...ip4, saddr,
      { type: 'dynset', set: 'rl', setId: 1, op: 'update', sregKey: 1, timeout: 30000, expressions: [{ type: 'limit', rate: 10, unit: 1, over: true }] },
      { type: 'verdict', verdict: 'drop' },
    ] } }],
    ['rule-dynset-counter', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [
      ...ip4, saddr, { type: 'dynset', set: 'seen', setId: 2, op: 'add', sregKey: 1, expressions: [{ type: 'counter' }] },
    ] } }],
    ['rule-dynset-delete', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [...ip4, saddr, { type: 'dynset', set: 'seen', setId: 2, op: 'delete', sregKey: 1 }] } }],
    ['rule-dynset-two', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [
      ...ip4, saddr,
      { type: 'dynset', set: 'rl', setId: 1, op: 'update', sregKey: 1, expressions: [{ type: 'counter' }, { type: 'limit', rate: 5, unit: 1 }] },
    ] } }],
    ['rule-numgen-inc', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [
      { type: 'numgen', dreg: 1, modulus: 4, mode: 'inc', offset: 100 }, { type: 'meta', key: 'mark', sreg: 1 },
    ] } }],
    ['rule-jhash', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [
      { type: 'meta', key: 'nfproto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([2]) },
      { type: 'meta', key: 'l4proto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([6]) },
      { type: 'payload', base: 'network', offset: 12, len: 4, dreg: 2 }, { type: 'payload', base: 'transport', offset: 2, len: 2, dreg: 13 },
      { type: 'hash', hash: 'jhash', sreg: 2, len: 8, dreg: 1, modulus: 8, seed: 0xfeed, offset: 1 }, { type: 'meta', key: 'mark', sreg: 1 },
    ] } }],
    ['rule-symhash', { op: 'addRule', rule: { ...T, chain: 'c', expressions: [
      { type: 'hash', hash: 'symhash', dreg: 1, modulus: 2 }, { type: 'meta', key: 'mark', sreg: 1 },
    ] } }],
    ['obj-counter', { op: 'addObject', object: { ...T, name: 'hits', type: 'counter' } }],
    ['obj-counter-values', { op: 'addObject', object: { ...T, name: 'c2', type: 'counter', packets: 10n, bytes: 1000n } }],
    ['obj-counter-comment', { op: 'addObject', object: { ...T, name: 'cc', type: 'counter', comment: 'x' } }],
    ['obj-quota', { op: 'addObject', object: { ...T, name: 'q', type: 'quota', bytes: 104857600n, consumed: 1024n, over: true } }],
    ['obj-limit', { op: 'addObject', object: { ...T, name: 'l', type: 'limit', rate: 10, unit: 1, burst: 20 } }],
    ['obj-limit-bytes', { op: 'addObject', object: { ...T, name: 'lb', type: 'limit', rate: 1048576, unit: 1, limitType: 'bytes', burst: 102400, over: true } }],
    ['obj-delete', { op: 'deleteObject', object: { ...T, name: 'q', type: 'quota' } }],
    ['rule-goto-return', { op: 'addRule', rule: { ...T, chain: 'r1', expressions: [
      { type: 'meta', key: 'l4proto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: Buffer.from([17]) },
      { type: 'verdict', verdict: 'goto', chain: 'r1' },
    ] } }],
  ];
  for (const [name, change] of cases) {
    const theirs = batchOf(name);
    const ours = encode([change]);
    t.same(ours.map(normalize), theirs.map(normalize), name);
  }
});

/** An element list (its items' bytes, as the addon gives it) without item `index`. */
function withoutItem(items: Buffer, index: number): Buffer {
  const kept: Buffer[] = [];
  for (let at = 0, i = 0; at < items.length; i++) {
    const next = at + ((items.readUInt16LE(at) + 3) & ~3);
    if (i !== index) kept.push(items.subarray(at, next));
    at = next;
  }
  return Buffer.concat(kept);
}

t.test('element changes of sets made earlier: the same bytes, but for the set id nft gives from its cache', async (t) => {
  const T = { family: 'inet', table: 't' } as const;
  const shapes = new Map([
    ['1\0t\0s', setShape({ ...T, name: 's', type: ['ipv4_addr', 'inet_proto', 'inet_service'] }, 's')],
    ['1\0t\0r', setShape({ ...T, name: 'r', type: 'ipv4_addr', flags: ['interval'] }, 'r')],
    ['1\0t\0ranges', setShape({ ...T, name: 'ranges', type: ['ipv4_addr', 'inet_service'], flags: ['interval'] }, 'ranges')],
    ['1\0t\0om', setShape({ ...T, name: 'om', type: 'ipv4_addr', map: { object: 'counter' } }, 'om')],
    ['1\0t\0dn', setShape({ ...T, name: 'dn', type: 'inet_service', map: ['ipv4_addr', 'inet_service'] }, 'dn')],
    ['1\0t\0mk', setShape({ ...T, name: 'mk', type: 'mark', flags: ['interval'] }, 'mk')],
    ['1\0t\0mkc', setShape({ ...T, name: 'mkc', type: ['mark', 'inet_service'], flags: ['interval'] }, 'mkc')],
  ]);
  const cases: Array<[string, Change, number?]> = [
    ['elem-concat', { op: 'addElements', set: { ...T, name: 's' }, elements: [{ key: ['10.0.0.1', 'tcp', 80] }, { key: ['10.0.0.2', 'udp', 53] }] }],
    ['elem-concat-interval', { op: 'addElements', set: { ...T, name: 'ranges' }, elements: [{ key: ['10.0.0.0/8', 80] }, { key: ['192.168.0.1-192.168.0.9', '1000-2000'] }] }],
    ['elem-delete', { op: 'deleteElements', set: { ...T, name: 's' }, elements: [{ key: ['10.0.0.1', 'tcp', 80] }] }],
    // nft adds an end at zero below the lowest interval on this first fill.
    ['elem-interval', { op: 'addElements', set: { ...T, name: 'r' }, elements: [{ key: '10.0.0.0/8' }, { key: '192.168.1.1-192.168.1.5' }] }, 0],
    ['elem-map-object', { op: 'addElements', set: { ...T, name: 'om' }, elements: [{ key: '10.0.0.1', value: 'hits' }, { key: '10.0.0.2', value: 'other' }] }],
    ['elem-map-concat-value', { op: 'addElements', set: { ...T, name: 'dn' }, elements: [{ key: 80, value: ['10.0.0.1', 8080] }, { key: 443, value: ['10.0.0.2', 8443] }] }],
    // Marks, host order elsewhere, go big end first in interval sets.
    ['elem-mark-interval', { op: 'addElements', set: { ...T, name: 'mk' }, elements: [{ key: '1-5' }, { key: 0x10 }, { key: '4294967280-4294967295' }] }, 0],
    ['elem-mark-concat-interval', { op: 'addElements', set: { ...T, name: 'mkc' }, elements: [{ key: ['1-5', 80] }, { key: [7, '90-95'] }] }],
  ];
  for (const [name, change, skipElement] of cases) {
    const theirs = batchOf(name).map((m, i, all) => {
      if (i === 0 || i === all.length - 1) return m;
      const d = addon.nftDecode(m);
      delete d.attrs.setId;
      if (skipElement !== undefined) d.attrs.elements = withoutItem(d.attrs.elements as Buffer, skipElement);
      return addon.nftEncode([{ ...d, flags: m.readUInt16LE(6) }], {})[1];
    });
    t.same(encode([change], shapes).map(normalize), theirs.map(normalize), name);
  }
});
