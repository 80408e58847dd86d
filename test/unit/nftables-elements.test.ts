// Set elements as the bytes of their element list (lib/nftables/element-codec.ts,
// elements.ts): every key and value type written and read back as it was
// given, the element list split by the addon into messages as nft numbers
// them, bad input refused naming the element's field before a byte is
// encoded, and a malformed list in a reply an EBADMSG rather than a wrong
// element. (The bytes themselves are compared with nft's in
// nftables-golden.test.ts.)
import t from 'tap';

import { changesToRaw } from '../../lib/nftables/changes.js';
import { elementsFromRaw, elementsToRaw } from '../../lib/nftables/elements.js';
import { refusedChange } from '../../lib/nftables/errors.js';
import type { Change, Element, NftSet } from '../../lib/nftables/index.js';
import { addon } from '../../lib/nftables/native.js';
import { setShape } from '../../lib/nftables/objects.js';

const T = { family: 'ip', table: 't' } as const;
const shapeOf = (s: Omit<NftSet, 'family' | 'table' | 'name'>) => setShape({ ...T, name: 's', ...s } as NftSet, 'set');
const roundTrip = (s: Omit<NftSet, 'family' | 'table' | 'name'>, elements: Element[]) => {
  const shape = shapeOf(s);
  return elementsFromRaw(shape, [elementsToRaw(shape, elements, 'elements', true)]);
};

t.test('every key and value type reads back as written', async (t) => {
  const cases: Array<[Omit<NftSet, 'family' | 'table' | 'name'>, Element[]]> = [
    [{ type: 'ipv4_addr' }, [{ key: '10.0.0.1' }, { key: '255.255.255.255' }, { key: '0.0.0.0' }]],
    [{ type: 'ipv6_addr' }, [{ key: 'fd00::1' }, { key: '2001:db8::abcd:1' }]],
    [{ type: 'ether_addr' }, [{ key: '00:11:22:aa:bb:cc' }]],
    [{ type: 'inet_proto' }, [{ key: 'tcp' }, { key: 'udp' }, { key: 'sctp' }]],
    [{ type: 'inet_service' }, [{ key: 0 }, { key: 80 }, { key: 65535 }]],
    [{ type: 'mark' }, [{ key: 0x4000 }, { key: 0xffffffff }]],
    [{ type: 'ifname' }, [{ key: 'eth0' }, { key: 'a-fifteen-bytes' }]],
    [{ type: ['ipv4_addr', 'inet_proto', 'inet_service', 'ipv4_addr'] }, [{ key: ['10.244.1.10', 'tcp', 8080, '10.244.1.10'] }]],
    [{ type: ['ipv6_addr', 'inet_proto', 'inet_service'] }, [{ key: ['fd00::10', 'udp', 53] }]],
    [{ type: ['ipv4_addr', 'inet_service'], flags: ['interval'] }, [{ key: ['10.0.0.0/8', 80] }, { key: ['192.168.0.1-192.168.0.9', '1000-2000'] }]],
    [{ type: 'ipv4_addr', flags: ['interval'] }, [{ key: '10.0.0.0/8' }, { key: '192.168.1.1-192.168.1.5' }, { key: '255.255.255.0/24' }]],
    [{ type: 'ipv4_addr', flags: ['interval'] }, [{ key: '10.0.0.0/16' }, { key: '10.1.0.0/16' }, { key: '10.2.0.0' }, { key: '10.2.0.1-10.2.0.9' }]],
    [{ type: ['ipv4_addr', 'inet_service'], map: 'mark' }, [{ key: ['10.0.0.1', 80], value: 7 }]],
    [{ type: 'inet_service', map: ['ipv4_addr', 'inet_service'] }, [{ key: 80, value: ['10.0.0.1', 8080] }]],
    [{ type: 'ipv4_addr', map: { object: 'counter' } }, [{ key: '10.0.0.1', value: 'hits' }, { key: '10.0.0.2', value: 'a-longer-counter-name' }]],
    [{ type: 'inet_service', map: 'verdict' }, [{ key: 80, value: { verdict: 'accept' } }, { key: 81, value: { verdict: 'jump', chain: 'web' } }, { key: 82, value: { verdict: 'goto', chain: 'x' } }]],
    [{ type: 'ipv4_addr', flags: ['timeout'] }, [{ key: '10.0.0.1', timeout: 30_000, comment: 'thirty seconds' }, { key: '10.0.0.2', comment: 'no timeout' }]],
    [{ type: { id: 0xabcd, len: 5 } }, [{ key: Buffer.from([1, 2, 3, 4, 5]) }]],
  ];
  for (const [set, elements] of cases) t.same(roundTrip(set, elements), elements, JSON.stringify(set.type));
});

t.test('elements bigger than the first guess at their size: the buffer grows at every kind of attribute, nothing is lost', async (t) => {
  // The writer starts from 16 bytes plus the key per element; chains, comments, timeouts and interval ends
  // outgrow that, so with 1 to 40 elements the buffer grows in the middle of each kind of attribute somewhere.
  const cases: Array<[Omit<NftSet, 'family' | 'table' | 'name'>, (i: number) => Element]> = [
    [{ type: 'inet_service', map: 'verdict' }, (i) => ({ key: i, value: { verdict: 'jump', chain: `chain-${'x'.repeat(i % 9)}` }, comment: 'c'.repeat((i % 7) + 1) })],
    [{ type: 'ipv4_addr', flags: ['timeout'] }, (i) => ({ key: `10.0.0.${i}`, timeout: 1000 * (i + 1), comment: 'odd'.repeat((i % 5) + 1) })],
    [{ type: 'ipv4_addr', flags: ['interval'] }, (i) => ({ key: `10.${2 * i}.0.0/16`, comment: 'n'.repeat((i % 3) + 1) })],
    [{ type: 'inet_service', map: ['ipv4_addr', 'inet_service'] }, (i) => ({ key: i, value: [`10.1.0.${i}`, 8000 + i] })],
  ];
  for (const [set, element] of cases) {
    for (let n = 1; n <= 40; n++) {
      const elements = Array.from({ length: n }, (_, i) => element(i));
      const back = roundTrip(set, elements);
      if (JSON.stringify(back) !== JSON.stringify(elements)) t.same(back, elements, `${JSON.stringify(set)}, ${n} elements`);
    }
    t.pass(`${JSON.stringify(set)}: 1 to 40 elements read back as written`);
  }
});

t.test('a large list: split by the addon into messages of at most 64 KiB, numbered as nft numbers them, read back whole', async (t) => {
  const set: NftSet = { ...T, name: 's', type: ['ipv4_addr', 'inet_proto', 'inet_service'] };
  const elements: Element[] = Array.from({ length: 20_000 }, (_, i) => ({ key: [`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, 'tcp', 80 + (i % 3)] }));
  const changes: Change[] = [{ op: 'addSet', set }, { op: 'addElements', set, elements }];
  const messages = addon.nftEncode(changesToRaw(changes, () => undefined), {}).slice(2, -1);
  t.ok(messages.length >= 8, `${messages.length} messages`);
  const lists = messages.map((m) => addon.nftDecode(m).attrs.elements as Buffer);
  for (const [i, m] of messages.entries()) {
    t.ok(m.length <= 0xffff + 100, `message ${i}: ${m.length} bytes`);
    const types: number[] = [];
    for (let at = 0; at < lists[i].length; at += (lists[i].readUInt16LE(at) + 3) & ~3) types.push(lists[i].readUInt16LE(at + 2));
    if (!types.every((ty, k) => ty === (0x8000 | (k + 1)))) t.fail(`message ${i}: items numbered 1, 2, ... and nested`);
  }
  t.same(elementsFromRaw(setShape(set, 'set'), lists), elements, 'every element, in order');
});

t.test('bad input names the element and its field, before anything is encoded', async (t) => {
  const concat = shapeOf({ type: ['ipv4_addr', 'inet_proto', 'inet_service'] });
  const good = { key: ['10.0.0.1', 'tcp', 80] };
  const refusedAmong = (shape: ReturnType<typeof shapeOf>, ok: Element, bad: unknown, want: { name?: string; code: string; field: string }) =>
    t.throws(() => elementsToRaw(shape, [ok, ok, bad] as Element[], 'changes[1].elements', true), want);
  const refused = (shape: ReturnType<typeof shapeOf>, bad: unknown, want: { name?: string; code: string; field: string }) => refusedAmong(shape, good, bad, want);
  refused(concat, { key: ['10.0.0.1', 'tcp', 70000] }, { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', field: 'changes[1].elements[2].key[2]' });
  refused(concat, { key: ['10.0.0.01', 'tcp', 80] }, { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', field: 'changes[1].elements[2].key[0]' });
  refused(concat, { key: [167772161, 'tcp', 80] }, { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2].key[0]' });
  refused(concat, { key: ['10.0.0.1', 'tcpp', 80] }, { code: 'ERR_INVALID_ARG_VALUE', field: 'changes[1].elements[2].key[1]' });
  refused(concat, { key: ['10.0.0.1', 'tcp'] }, { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2].key' });
  refused(concat, { key: good.key, colour: 'red' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'changes[1].elements[2].colour' });
  refused(concat, 'ten', { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2]' });
  refused(concat, { key: good.key, value: 1 }, { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2].value' });
  refused(concat, { key: good.key, timeout: 0 }, { code: 'ERR_OUT_OF_RANGE', field: 'changes[1].elements[2].timeout' });
  refused(concat, { key: good.key, comment: 'x'.repeat(128) }, { code: 'ERR_OUT_OF_RANGE', field: 'changes[1].elements[2].comment' });
  const vmap = shapeOf({ type: ['ipv4_addr', 'inet_proto', 'inet_service'], map: 'verdict' });
  const accept = { key: good.key, value: { verdict: 'accept' as const } };
  refusedAmong(vmap, accept, { key: good.key }, { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2].value' });
  refusedAmong(vmap, accept, { key: good.key, value: { verdict: 'jump' } }, { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2].value.chain' });
  refusedAmong(vmap, accept, { key: good.key, value: { verdict: 'leap' } }, { code: 'ERR_INVALID_ARG_VALUE', field: 'changes[1].elements[2].value.verdict' });
  const omap = shapeOf({ type: 'ipv4_addr', map: { object: 'counter' } });
  refusedAmong(omap, { key: '10.0.0.1', value: 'hits' }, { key: '10.0.0.2', value: 7 }, { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2].value' });
  refusedAmong(omap, { key: '10.0.0.1', value: 'hits' }, { key: '10.0.0.2' }, { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[1].elements[2].value' });
  refusedAmong(shapeOf({ type: 'ipv4_addr', flags: ['interval'] }), { key: '10.0.0.0/8' }, { key: '10.0.0.1/8' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'changes[1].elements[2].key' });
  // Through a transaction: the change's index too, and no message made.
  const set: NftSet = { ...T, name: 's', type: ['ipv4_addr', 'inet_proto', 'inet_service'] };
  t.throws(() => changesToRaw([{ op: 'addSet', set }, { op: 'addElements', set, elements: [good, { key: ['10.0.0.1', 'tcp', -1] }] as Element[] }], () => undefined), {
    code: 'ERR_OUT_OF_RANGE',
    field: 'changes[1].elements[1].key[2]',
  });
  // A set's typeof records, kept as read: bytes of one userdata record.
  t.throws(() => changesToRaw([{ op: 'addSet', set: { ...set, typeof: { key: 'ip saddr' } } as never }], () => undefined), { code: 'ERR_INVALID_ARG_TYPE', field: 'changes[0].set.typeof.key' });
  t.throws(() => changesToRaw([{ op: 'addSet', set: { ...set, typeof: { value: Buffer.alloc(256) } } }], () => undefined), { code: 'ERR_OUT_OF_RANGE', field: 'changes[0].set.typeof.value' });
  t.throws(() => changesToRaw([{ op: 'addSet', set: { ...set, typeof: { keys: Buffer.alloc(2) } } as never }], () => undefined), { code: 'ERR_INVALID_ARG_VALUE', field: 'changes[0].set.typeof.keys' });
});

t.test('overlapping intervals in one add are refused naming both, before anything is encoded; equal and adjacent ones are not', async (t) => {
  const shape = shapeOf({ type: 'ipv4_addr', flags: ['interval'] });
  const add = (keys: string[]) => elementsToRaw(shape, keys.map((key) => ({ key })), 'changes[2].elements', true);
  const overlap = (keys: string[], field: string, other: string) =>
    t.throws(() => add(keys), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', field, message: new RegExp(`overlaps ${other.replace(/[[\]]/g, '\\$&')}, `) }, keys.join(' '));
  overlap(['10.0.0.0/8', '10.1.0.0/16'], 'changes[2].elements[1].key', 'changes[2].elements[0]');
  overlap(['10.1.0.0/16', '10.0.0.0/8'], 'changes[2].elements[0].key', 'changes[2].elements[1]');
  overlap(['192.168.1.1-192.168.1.5', '192.168.1.5'], 'changes[2].elements[1].key', 'changes[2].elements[0]');
  overlap(['10.0.0.0/8', '11.0.0.0/8', '12.0.0.0/8', '10.255.255.255-11.0.0.0'], 'changes[2].elements[3].key', 'changes[2].elements[0]');
  // Each case as nft takes it in one add: equal intervals, adjacent ones, one inside a gap.
  for (const keys of [['10.0.0.0/16', '10.0.0.0/16'], ['10.0.0.0/16', '10.1.0.0/16'], ['192.168.1.1-192.168.1.5', '192.168.1.6'], ['10.0.0.0/8', '12.0.0.0/8', '11.0.0.0/8']])
    t.doesNotThrow(() => add(keys), keys.join(' '));
  t.doesNotThrow(() => elementsToRaw(shape, [{ key: '10.0.0.0/8' }, { key: '10.1.0.0/16' }], 'elements', false), 'a delete is not checked: the kernel answers for what the set holds');
});

t.test('an interval set\'s items each name the element they came from, so a refused one is named as the caller wrote it', async (t) => {
  const set = { ...T, name: 's', type: 'ipv4_addr', flags: ['interval'] } as NftSet;
  const origins = new Map<number, number[]>();
  // A start and an end item each, in key order (where one interval ends and
  // the next begins, the end first); the last runs to the top (no end item).
  changesToRaw([{ op: 'addSet', set }, { op: 'addElements', set, elements: [{ key: '10.1.0.0/16' }, { key: '10.0.0.0/16' }, { key: '240.0.0.0/4' }] }], () => undefined, origins);
  t.same([...origins], [[1, [1, 1, 0, 0, 2]]]);
  const plain = new Map<number, number[]>();
  changesToRaw([{ op: 'addSet', set: { ...set, flags: [] } }, { op: 'addElements', set, elements: [{ key: '10.0.0.1' }] }], () => undefined, plain);
  t.same([...plain], [], 'items that are the elements one for one need no map');
  const refused = { change: 1, element: 3, path: 'elements[3].key', errno: 17, code: 'EEXIST', message: '', text: 'File exists' };
  t.same(refusedChange(refused, [1, 1, 0, 0, 2]), { index: 1, element: 0, errno: 17, code: 'EEXIST', attribute: 'elements[0].key' });
  t.same(refusedChange(refused, undefined), { index: 1, element: 3, errno: 17, code: 'EEXIST', attribute: 'elements[3].key' });
  t.same(refusedChange({ ...refused, element: -1, path: 'table' }, [1, 0]), { index: 1, errno: 17, code: 'EEXIST', attribute: 'table' });
});

t.test('the addon refuses element bytes that are not list items of attributes, naming the field', async (t) => {
  const raw = (elements: Uint8Array) => [{ type: 'newsetelem', family: 2, attrs: { table: 't', set: 's', elements } }];
  t.throws(() => addon.nftEncode(raw(Buffer.from([8, 0, 1, 0, 1, 2])), {}), { name: 'TypeError', message: /changes\[0\]\.attrs\.elements must be list items/ });
  t.throws(() => addon.nftEncode(raw(Buffer.from([8, 0, 1, 0, 9, 0, 1, 0])), {}), { name: 'TypeError', message: /elements\[0\]/ });
});

t.test('a malformed element list in a reply is an EBADMSG, not a wrong element', async (t) => {
  const shape = shapeOf({ type: ['ipv4_addr', 'inet_proto', 'inet_service'] });
  const list = elementsToRaw(shape, [{ key: ['10.0.0.1', 'tcp', 80] }], 'elements', true);
  const noKey = Buffer.from([4, 0, 1, 0x80]);
  const shortKeyNest = Buffer.from(list);
  shortKeyNest.writeUInt16LE(40, 4); // the key nest claims more than its item holds
  for (const [what, bytes] of [['an element without a key', noKey], ['an attribute past its item', shortKeyNest]] as const) {
    t.throws(() => elementsFromRaw(shape, [bytes]), { name: 'NetlinkError', code: 'EBADMSG' }, what);
  }
  t.same(elementsFromRaw(shapeOf({ type: 'inet_service' }), [elementsToRaw(shapeOf({ type: 'ipv4_addr' }), [{ key: '10.0.0.1' }], 'e', true)]), [{ key: Buffer.from([10, 0, 0, 1]) }], 'a key of another length: its bytes');
});
