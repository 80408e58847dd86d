// Bulk add/del: 100,000 entries, a refused entry in the middle of a long
// call (reported by index, nothing after it applied), and a full set.
import t from 'tap';

import { Ipset, IpsetBulkError } from '../../lib/ipset/index.js';
import { freshNetns, type Netns } from '../support/netns.js';

async function count(ns: Netns, set: string): Promise<number> {
  const out = await ns.exec('ipset', ['list', '-t', set]);
  return Number(/Number of entries: (\d+)/.exec(out)![1]);
}

const ipPort = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},tcp:${1 + (i % 60000)}`;

t.test('100,000 entries in one call', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  await ipset.create('big', 'hash:ip,port', { hashSize: 65536, maxElem: 200000 });
  const entries = Array.from({ length: 100_000 }, (_, i) => ipPort(i));
  const before = ipset.counters().messagesSent;
  t.equal(await ipset.addMany('big', entries), 100_000, 'resolves to the count applied');
  const messages = ipset.counters().messagesSent - before;
  t.ok(messages < 150, `${messages} messages for 100k entries`);
  t.equal(await count(ns, 'big'), 100_000, 'ipset list -t counts 100000');
  const saved = (await ns.exec('ipset', ['save', 'big'])).split('\n').filter((l) => l.startsWith('add ')).map((l) => l.slice(8));
  t.same(saved.sort(), [...entries].sort(), 'ipset save shows exactly these entries');
  const listed = await ipset.list('big');
  t.equal(listed.entries.length, 100_000, 'list() returns all of them');
  t.equal(await ipset.delMany('big', entries.slice(0, 50_000)), 50_000, 'delMany');
  t.equal(await count(ns, 'big'), 50_000);
});

t.test('the 5,000th entry is refused: index 4999, 4999 applied, nothing after it', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  await ipset.create('s', 'hash:ip,port', { hashSize: 16384 });
  await ipset.add('s', '192.168.0.1,tcp:80');
  const entries = Array.from({ length: 10_000 }, (_, i) => ipPort(i));
  entries[4999] = '192.168.0.1,tcp:80'; // already there
  const err = await ipset.addMany('s', entries).then(
    () => t.fail('should reject'),
    (e: unknown) => e,
  );
  t.ok(err instanceof IpsetBulkError, 'IpsetBulkError (a NetlinkError)');
  const e = err as IpsetBulkError;
  t.match(e, { code: 'IPSET_ERR_EXIST', errno: 4103, index: 4999, entry: '192.168.0.1,tcp:80', applied: 4999 });
  t.match(e.message, /entry 4999 .* already in the set/);
  t.equal(await count(ns, 's'), 1 + 4999, 'the 4999 before it were applied');
  t.equal((await ns.tryExec('ipset', ['test', 's', entries[4998]])).code, 0, 'entry 4998 is in');
  t.not((await ns.tryExec('ipset', ['test', 's', entries[5000]])).code, 0, 'entry 5000 is not');
  t.not((await ns.tryExec('ipset', ['test', 's', entries[9999]])).code, 0, 'nor the last one (a later message)');
  // With exist, the duplicate is refreshed instead and everything goes in.
  t.equal(await ipset.addMany('s', entries, { exist: true }), 10_000);
  t.equal(await count(ns, 's'), 10_000);
  // delMany of an absent entry: same reporting.
  const del = await ipset.delMany('s', [entries[0], '172.16.0.1,tcp:1', entries[1]]).catch((x: IpsetBulkError) => x);
  t.match(del, { code: 'IPSET_ERR_EXIST', index: 1, applied: 1 });
  t.equal(await ipset.delMany('s', [entries[1], '172.16.0.1,tcp:1'], { exist: true }), 2);
});

t.test('a set that reaches maxelem: IPSET_ERR_HASH_FULL', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  await ipset.create('small', 'hash:ip', { maxElem: 100 });
  const entries = Array.from({ length: 150 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
  const err = (await ipset.addMany('small', entries).catch((x: unknown) => x)) as IpsetBulkError;
  t.match(err, { code: 'IPSET_ERR_HASH_FULL', errno: 4352, index: 100, applied: 100 });
  t.match(err.message, /maxelem/);
  t.equal(await count(ns, 'small'), 100);
  await t.rejects(ipset.add('small', '10.9.9.9'), { code: 'IPSET_ERR_HASH_FULL' });
});

t.test('bad entries throw before anything is sent', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  await ipset.create('s', 'hash:ip,port');
  await t.rejects(ipset.addMany('s', ['10.0.0.1,tcp:80', '10.0.0.2,tcp:99999']), {
    name: 'TypeError', message: /entry 1 .*port/,
  });
  await t.rejects(ipset.addMany('s', ['10.0.0.1,tcp:80 timeout 5']), { name: 'TypeError', message: /without timeout/ });
  await t.rejects(ipset.addMany('s', ['10.0.0.1']), { name: 'TypeError', message: /entry 0/ });
  t.equal(await count(ns, 's'), 0, 'nothing was added');
});
