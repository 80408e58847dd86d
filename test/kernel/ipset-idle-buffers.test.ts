/**
 * A handle gives back the memory a big call grew once its caller is idle:
 * the socket's receive slots past the first few (a dump fills many) and a
 * big send buffer (a bulk load's). Resident bytes as the kernel counts them
 * (mincore, through the handle's test hook), with ipset in a fresh network
 * namespace on the host; `ipset list -t` confirms the set the library wrote,
 * and the library's listing is checked against `ipset save`.
 */
import t from 'tap';

import { Ipset } from '../../lib/ipset/index.js';
import { freshNetns } from '../support/netns.js';

const ENTRIES = 100_000;
// The slots never given back (native/netlink/receive_slots.h: 4 of 64 KiB).
const KEPT = 4 * 64 * 1024;

const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Buffers {
  testBufferResidency(): number;
}

t.test('a big list fills the receive slots; once the caller is idle they are given back, and the next list reads whole', async (t) => {
  const ns = await freshNetns(t, 'idlebuf');
  const ipset = await Ipset.open({ netns: ns.path });
  t.teardown(() => ipset.close());
  const handle = (ipset as unknown as { handle: Buffers }).handle;

  await ipset.create('big', 'hash:ip', { maxElem: ENTRIES });
  await ipset.addMany('big', Array.from({ length: ENTRIES }, (_, i) => ip(i)));
  const header = await ns.exec('ipset', ['list', '-t', 'big']);
  t.match(header, new RegExp(`Number of entries: ${ENTRIES}\\b`), `ipset list -t: ${ENTRIES} entries`);
  await turn();
  t.ok(handle.testBufferResidency() <= KEPT, `after the bulk load, idle: ${handle.testBufferResidency()} bytes resident`);

  const saved = (await ns.exec('ipset', ['save', 'big'])).split('\n').filter((l) => l.startsWith('add big ')).length;
  for (const round of [1, 2]) {
    const listed = await ipset.list('big');
    t.equal(listed.entries.length, saved, `list ${round}: as many entries as ipset save shows (${saved})`);
    // Read before the event loop turns: the release waits for that.
    const busy = handle.testBufferResidency();
    t.ok(busy > 4 * KEPT, `list ${round}: the dump filled the slots (${busy} bytes resident)`);
    await turn();
    const idle = handle.testBufferResidency();
    t.ok(idle <= KEPT, `list ${round}: idle, ${idle} bytes resident (at most the ${KEPT} kept)`);
  }
});
