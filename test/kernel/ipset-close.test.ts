/**
 * close() while a bulk load is in flight: close() does not wait for it,
 * the load sends nothing more, and it rejects with an IpsetBulkError whose
 * counts are exact (what went out was answered, so nothing is left
 * unconfirmed); `ipset list -t` counts just what it says was applied.
 */
import t from 'tap';

import { Ipset, IpsetBulkError } from '../../lib/ipset/index.js';
import { freshNetns } from '../support/netns.js';

const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

t.test('close() during addMany: the load stops, and what it reports applied is what the set holds', async (t) => {
  const ns = await freshNetns(t, 'ipset');
  const entries = Array.from({ length: 100_000 }, (_, i) => ip(i));
  // On a loaded machine the JavaScript thread may not run again until the
  // worker has sent every window, and then the load rightly completes:
  // that attempt shows nothing, so another set is tried (at most five).
  let ipset!: Ipset;
  let name = '';
  let e: unknown;
  for (let attempt = 1; attempt <= 5 && e === undefined; attempt++) {
    // A small receive buffer (a test-only option) makes the load many
    // sendmsg calls of a few thousand entries, so close() lands between two
    // of them in any kernel: with the usual 8 MiB, one takes over 300,000.
    ipset = await Ipset.open({ netns: ns.path, testRcvbuf: 128 * 1024 } as Parameters<typeof Ipset.open>[0]);
    const handle = ipset;
    t.teardown(() => handle.close());
    name = `big${attempt}`;
    await ipset.create(name, 'hash:ip', { hashSize: 65536, maxElem: 1_000_000 });
    const before = ipset.counters().messagesSent;
    const load = ipset.addMany(name, entries);
    // Closed as soon as the first entries are on their way (the first
    // message is the set's header, read before the load).
    let sent = 0;
    while (sent < 2) {
      await new Promise((r) => setImmediate(r));
      sent = ipset.counters().messagesSent - before;
    }
    ipset.close();
    e = await load.then(
      () => undefined,
      (err: unknown) => err,
    );
  }
  t.ok(e instanceof IpsetBulkError, 'the load rejects with an IpsetBulkError');
  const err = e as IpsetBulkError;
  t.equal(err.code, 'EBADF');
  t.ok(err.applied > 0 && err.skipped.length > 0, `stopped mid-way: ${err.applied} applied, ${err.skipped.length} never sent`);
  t.same(err.unconfirmed, [], 'nothing sent was left unanswered');
  t.same(err.failures, [], 'nothing refused');
  t.equal(err.applied + err.skipped.length, entries.length, 'every entry is either applied or never sent');
  const out = await ns.exec('ipset', ['list', '-t', name]);
  t.equal(Number(/Number of entries: (\d+)/.exec(out)![1]), err.applied, 'ipset list -t counts exactly the entries applied');
  await t.rejects(ipset.listNames(), { code: 'EBADF' }, 'later calls fail');
});
