/**
 * Native memory stays flat over many open / batch / list / error / close
 * cycles of an ipset handle: malloc'd bytes in use, measured as
 * test/support/leak.ts explains (with a control that shows the measure
 * catches a leak).
 */
import t from 'tap';

import { Ipset } from '../../lib/ipset/index.js';
import { NetlinkError } from '../../lib/netlink/errors.js';
import { assertNoLeak } from '../support/leak.js';
import { freshNetns } from '../support/netns.js';

const WARMUP = 1000;
const CYCLES = 2000;

const entries = Array.from({ length: 32 }, (_, i) => `10.0.0.${i},tcp:${80 + i}`);

function expect(ok: boolean, what: string) {
  if (!ok) throw new Error(what);
}

/** One cycle: a handle opened, used on success and error paths, closed. */
async function cycle(netns: string): Promise<void> {
  const ipset = await Ipset.open({ netns });
  try {
    await ipset.create('s', 'hash:ip,port', { timeout: 600, comment: true });
    await ipset.addMany('s', entries);
    await ipset.add('s', '10.9.0.1,udp:53', { timeout: 5, comment: 'leak check' });
    // A kernel error (with the echoed request) and a parser error thrown natively.
    const dup = await ipset.add('s', '10.9.0.1,udp:53').catch((e: unknown) => e);
    expect(dup instanceof NetlinkError && dup.code === 'IPSET_ERR_EXIST', `duplicate add: ${String(dup)}`);
    const bad = await ipset.add('s', 'not-an-address,tcp:1').catch((e: unknown) => e);
    expect(bad instanceof TypeError, `bad entry: ${String(bad)}`);
    const listing = await ipset.list('s');
    expect(listing.entries.length === entries.length + 1, `listed ${listing.entries.length}`);
    await ipset.destroy('s');
  } finally {
    ipset.close();
  }
}


t.test('open/create/addMany/errors/list/destroy/close cycles keep memory flat', async (t) => {
  const ns = await freshNetns(t, 'ipsetleak');
  await assertNoLeak(t, () => cycle(ns.path), WARMUP, CYCLES);
});
