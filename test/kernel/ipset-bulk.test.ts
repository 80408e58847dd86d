// Bulk add/del against the kernel, checked with the ipset tool: 100,000
// entries in fewer sendmsg calls than messages; a refused entry in the
// middle loses nothing (every other entry is applied, every refusal is
// reported); a set that reaches maxelem stops the load and reports what was
// never attempted, with the kernel holding exactly `applied` entries; a set
// that vanishes; replace() that fails changes nothing; bad entries send
// nothing.
import t from 'tap';

import { Ipset, IpsetBulkError } from '../../lib/ipset/index.js';
import { freshNetns, type Netns } from '../support/netns.js';

async function count(ns: Netns, set: string): Promise<number> {
  const out = await ns.exec('ipset', ['list', '-t', set]);
  return Number(/Number of entries: (\d+)/.exec(out)![1]);
}

/** The elements `ipset save` shows for a set (what follows "add NAME "). */
async function saved(ns: Netns, set: string): Promise<string[]> {
  const out = await ns.exec('ipset', ['save', set]);
  return out
    .split('\n')
    .filter((l) => l.startsWith(`add ${set} `))
    .map((l) => l.slice(`add ${set} `.length))
    .sort();
}

async function rejection(p: Promise<unknown>): Promise<IpsetBulkError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof IpsetBulkError)) throw new Error(`expected an IpsetBulkError, got ${String(err)}`);
  return err;
}

const ipPort = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},tcp:${1 + (i % 60000)}`;
const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

async function setup(t: { teardown(fn: () => unknown): void }) {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  return { ns, ipset };
}

t.test('100,000 entries in one call, several messages per sendmsg', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('big', 'hash:ip,port', { hashSize: 65536, maxElem: 200000 });
  const entries = Array.from({ length: 100_000 }, (_, i) => ipPort(i));
  const before = ipset.counters();
  t.equal(await ipset.addMany('big', entries), 100_000, 'resolves to the count applied');
  const after = ipset.counters();
  const messages = after.messagesSent - before.messagesSent;
  const sendmsgs = after.sendmsgCalls - before.sendmsgCalls;
  t.ok(messages > 1 && messages < 150, `${messages} messages for 100k entries`);
  t.ok(sendmsgs < messages, `${sendmsgs} sendmsg calls carried the ${messages} messages`);
  t.equal(await count(ns, 'big'), 100_000, 'ipset list -t counts 100000');
  t.same(await saved(ns, 'big'), [...entries].sort(), 'ipset save shows exactly these entries');
  const listed = await ipset.list('big');
  t.equal(listed.entries.length, 100_000, 'list() returns all of them');
  t.equal(await ipset.delMany('big', entries.slice(0, 50_000)), 50_000, 'delMany');
  t.same(await saved(ns, 'big'), entries.slice(50_000).sort(), 'ipset save shows the other half');
});

t.test('the 5,000th entry is refused: every other entry is applied', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('s', 'hash:ip,port', { hashSize: 16384 });
  await ipset.add('s', '192.168.0.1,tcp:80');
  const entries = Array.from({ length: 10_000 }, (_, i) => ipPort(i));
  entries[4999] = '192.168.0.1,tcp:80'; // already there
  const before = ipset.counters();
  const e = await rejection(ipset.addMany('s', entries));
  const sent = ipset.counters().messagesSent - before.messagesSent;
  t.match(e, { name: 'IpsetBulkError', code: 'IPSET_ERR_EXIST', errno: 4103, index: 4999, entry: '192.168.0.1,tcp:80', applied: 9999 });
  t.same(e.failures, [{ index: 4999, entry: '192.168.0.1,tcp:80', errno: 4103, code: 'IPSET_ERR_EXIST', message: 'the element is already in the set' }]);
  t.same(e.skipped, [], 'nothing was skipped');
  t.same(e.unconfirmed, []);
  t.equal(e.message, 'addMany s failed: IPSET_ERR_EXIST: entry 4999 (192.168.0.1,tcp:80) was refused: the element is already in the set; 9999 of 10000 entries were applied');
  const expected = ['192.168.0.1,tcp:80', ...entries.filter((_, i) => i !== 4999)].sort();
  t.same(await saved(ns, 's'), expected, 'ipset save: the entry before it, every entry after it, nothing lost');
  t.ok(sent >= 2, `the rest of the refused message was sent again (${sent} messages)`);
  // With exist, the duplicate is refreshed instead and the call resolves.
  t.equal(await ipset.addMany('s', entries, { exist: true }), 10_000);
  t.equal(await count(ns, 's'), 10_000);
});

t.test('several refused entries in several messages: each reported, in order', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('s', 'hash:ip', { hashSize: 16384 });
  const entries = Array.from({ length: 20_000 }, (_, i) => ip(i));
  const refused = [0, 1, 2, 4999, 5000, 12_345, 19_999];
  await ns.exec('ipset', ['restore'], refused.map((i) => `add s ${entries[i]}\n`).join(''));
  const e = await rejection(ipset.addMany('s', entries));
  t.equal(e.index, 0, 'index names the first refused entry');
  t.same(e.failures.map((f) => f.index), refused, 'failures: every refused entry, in order');
  t.ok(e.failures.every((f) => f.code === 'IPSET_ERR_EXIST' && f.entry === entries[f.index]));
  t.equal(e.applied, entries.length - refused.length);
  t.same(e.skipped, []);
  t.match(e.message, /^addMany s failed: IPSET_ERR_EXIST: 7 entries were refused, the first being entry 0 \(10\.0\.0\.0\): the element is already in the set; 19993 of 20000 entries were applied; every refused entry is in \.failures$/);
  t.same(await saved(ns, 's'), [...entries].sort(), 'the set holds every entry');
  // delMany of absent entries: the same reporting, the others are deleted.
  const del = await rejection(ipset.delMany('s', [entries[7], '172.16.0.1', entries[8], '172.16.0.2', entries[9]]));
  t.match(del, { code: 'IPSET_ERR_EXIST', index: 1, applied: 3, skipped: [] });
  t.same(del.failures.map((f) => [f.index, f.message]), [[1, 'the element is not in the set'], [3, 'the element is not in the set']]);
  t.equal(await count(ns, 's'), entries.length - 3, 'entries 7, 8 and 9 were deleted');
  t.equal(await ipset.delMany('s', [entries[10], '172.16.0.1'], { exist: true }), 2, 'exist: absent entries are no error');
});

t.test('a set that reaches maxelem: the load stops, skipped says what was never attempted', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('small', 'hash:ip', { maxElem: 1000 });
  const entries = Array.from({ length: 6000 }, (_, i) => ip(i));
  const e = await rejection(ipset.addMany('small', entries));
  t.match(e, { code: 'IPSET_ERR_HASH_FULL', errno: 4352, index: 1000, entry: entries[1000], applied: 1000 });
  t.match(e.halt, { code: 'IPSET_ERR_HASH_FULL' }, 'halt says why sending stopped');
  t.ok(e.failures.length >= 1 && e.failures.every((f) => f.code === 'IPSET_ERR_HASH_FULL'), `${e.failures.length} refusal(s), all HASH_FULL`);
  t.ok(e.skipped.length > 0, `${e.skipped.length} entries never attempted`);
  t.equal(e.applied + e.failures.length + e.skipped.length, entries.length, 'every entry is accounted for');
  t.match(e.message, /^addMany small failed: IPSET_ERR_HASH_FULL: \d+ entries were refused, the first being entry 1000 \(10\.0\.3\.232\): the set is full: maxelem is reached; 1000 of 6000 entries were applied; \d+ entries were never attempted: sending stopped because nothing more can go in \(see \.skipped\); every refused entry is in \.failures$/);
  t.equal(await count(ns, 'small'), e.applied, 'the kernel holds exactly `applied` entries');
  const notIn = new Set([...e.skipped, ...e.failures.map((f) => f.index)]);
  t.same(await saved(ns, 'small'), entries.filter((_, i) => !notIn.has(i)).sort(), 'exactly the entries neither refused nor skipped');
  await t.rejects(ipset.add('small', '10.9.9.9'), { code: 'IPSET_ERR_HASH_FULL' });
});

t.test('type-specific codes are read for the set kind: out-of-range bitmap entries do not stop the load', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('ports', 'bitmap:port', { range: '1000-2000' });
  // IPSET_ERR_BITMAP_RANGE has the number of IPSET_ERR_HASH_FULL.
  const e = await rejection(ipset.addMany('ports', ['80', '1000', '1500', '3000', '1999']));
  t.match(e, { code: 'IPSET_ERR_BITMAP_RANGE', index: 0, applied: 3, skipped: [] });
  t.same(e.failures.map((f) => f.index), [0, 3]);
  t.same(await saved(ns, 'ports'), ['1000', '1500', '1999']);
});

t.test('list:set: a missing member set is refused alone (its code shares the number of HASH_FULL)', async (t) => {
  const { ns, ipset } = await setup(t);
  for (let i = 0; i < 3; i++) await ipset.create(`m${i}`, 'hash:ip');
  await ipset.create('l', 'list:set');
  const e = await rejection(ipset.addMany('l', ['m0', 'missing', 'm1', 'm2']));
  t.match(e, { code: 'IPSET_ERR_NAME', errno: 4352, index: 1, applied: 3, skipped: [] });
  t.match(e.message, /entry 1 \(missing\) was refused: the member set does not exist/);
  t.same(await saved(ns, 'l'), ['m0', 'm1', 'm2']);
});

t.test('a set that vanishes: the request fails as a whole, every entry skipped', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('s', 'hash:ip');
  t.equal(await ipset.addMany('s', ['10.0.0.1']), 1, 'the handle now knows the set');
  await ns.exec('ipset', ['destroy', 's']);
  const e = await rejection(ipset.addMany('s', ['10.0.0.2', '10.0.0.3', '10.0.0.4']));
  t.match(e, { code: 'ENOENT', errno: 2, index: -1, entry: undefined, applied: 0, failures: [], skipped: [0, 1, 2] });
  t.equal(e.message, 'addMany s failed: ENOENT: the request was refused: the set does not exist; 0 of 3 entries were applied; 3 entries were never attempted: sending stopped because nothing more can go in (see .skipped)');
  // A set that is missing from the start: the same shape, nothing sent.
  const before = ipset.counters().messagesSent;
  const missing = await rejection(ipset.delMany('nope', ['10.0.0.1']));
  t.match(missing, { code: 'ENOENT', index: -1, applied: 0, skipped: [0] });
  t.equal(ipset.counters().messagesSent - before, 1, 'only the header lookup went out');
});

t.test('replace() with a refused entry swaps nothing in and leaves no temporary set', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('s', 'hash:ip', { maxElem: 10 });
  await ipset.addMany('s', ['10.9.0.1', '10.9.0.2']);
  const e = await rejection(ipset.replace('s', Array.from({ length: 20 }, (_, i) => ip(i))));
  t.match(e, { code: 'IPSET_ERR_HASH_FULL', index: 10, applied: 10 });
  t.match(e.message, /replace s swapped nothing in: s is unchanged and the temporary set s~[0-9a-f]+ is destroyed$/);
  t.same(await saved(ns, 's'), ['10.9.0.1', '10.9.0.2'], 'the set is unchanged');
  t.same((await ns.exec('ipset', ['list', '-n'])).trim().split('\n'), ['s'], 'no temporary set is left');
});

t.test('bad entries throw before anything is sent', async (t) => {
  const { ns, ipset } = await setup(t);
  await ipset.create('s', 'hash:ip,port');
  await ipset.addMany('s', ['10.0.0.9,tcp:80']);
  /** The call rejects as `expected` and uses no system call at all. */
  const refused = async (call: () => Promise<unknown>, expected: { name: string; message: RegExp }) => {
    // Entries are parsed against the set's type: make sure the handle knows
    // it (a bad entry makes it forget, in case the set was re-created).
    await ipset.test('s', '10.0.0.9,tcp:80');
    const before = ipset.counters();
    await t.rejects(call(), expected);
    t.same(ipset.counters(), before, 'counters(): nothing sent');
  };
  await refused(() => ipset.addMany('s', ['10.0.0.1,tcp:80', '10.0.0.2,tcp:99999']), { name: 'RangeError', message: /entry 1 .*port/ });
  await refused(() => ipset.addMany('s', ['10.0.0.1,tcp:80 timeout 5']), { name: 'TypeError', message: /without timeout/ });
  await refused(() => ipset.addMany('s', ['10.0.0.1']), { name: 'TypeError', message: /entry 0/ });
  await refused(() => ipset.delMany('s', ['10.0.0.1,tcp:80', 42 as never]), { name: 'TypeError', message: /entries\[1\] must be a string or an object/ });
  await refused(() => ipset.addMany('s', 'x' as never), { name: 'TypeError', message: /entries must be an array/ });
  await refused(() => ipset.addMany('s', [], { exist: 1 } as never), { name: 'TypeError', message: /exist must be a boolean/ });
  t.same(await saved(ns, 's'), ['10.0.0.9,tcp:80'], 'nothing was added');
});
