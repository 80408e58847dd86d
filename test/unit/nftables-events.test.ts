// The event stream's own logic over a stand-in for the addon's reader: a
// transaction's announcements held until its end, a set's consecutive
// element announcements as one change, a gap flushing what came before it,
// kinds without a schema passed on by number, a set's layout looked up
// only when the stream has not seen the set made.
import t from 'tap';

import { NftablesEventStream, type NftablesEvent } from '../../lib/nftables/index.js';
import { type NativeNftablesEvents, type RawEvent, addon } from '../../lib/nftables/native.js';
import { changesToRaw } from '../../lib/nftables/changes.js';
import type { Change } from '../../lib/nftables/index.js';
import { setShape } from '../../lib/nftables/objects.js';

const SET = { family: 'inet', table: 't', name: 's' } as const;

/** Our own encoding of `changes`, decoded as the kernel's announcements would be. */
function announced(changes: Change[]): RawEvent[] {
  const shapes = new Map([['1\0t\0s', setShape({ ...SET, type: 'ipv4_addr' }, 'set')]]);
  const msgs = addon.nftEncode(changesToRaw(changes, (k) => shapes.get(k.replace(/^\d+/, '1'))), {});
  return msgs.slice(1, -1).map((m) => ({ ...addon.nftDecode(m), portId: 0, flags: m.readUInt16LE(6) }));
}
const gen = (id: number): RawEvent => ({ type: 'newgen', family: 0, resId: 0, portId: 0, flags: 0, attrs: { id, procPid: 7, procName: 'nft' } });

function stream(batches: RawEvent[][], lookUp: () => Promise<undefined> = async () => undefined): { s: NftablesEventStream; looked: string[] } {
  const looked: string[] = [];
  // As the addon does, a wake when there is more to take.
  const native: NativeNftablesEvents = {
    open: async () => {},
    take: () => {
      const events = batches.shift() ?? [];
      if (batches.length) setImmediate(() => s.readable());
      return { events };
    },
    close: () => {},
  };
  const s = new NftablesEventStream(native, async (family, table, name) => {
    looked.push(`${family} ${table} ${name}`);
    return lookUp();
  });
  return { s, looked };
}

async function read(s: NftablesEventStream, n: number): Promise<NftablesEvent[]> {
  const out: NftablesEvent[] = [];
  for (let i = 0; i < n; i++) out.push((await s.next()).value as NftablesEvent);
  return out;
}

t.test("a transaction's changes come at its end, a set's elements as one change", async (t) => {
  const adds = announced([
    { op: 'addSet', set: { ...SET, type: 'ipv4_addr' } },
    { op: 'addElements', set: SET, elements: [{ key: '10.0.0.1' }] },
    { op: 'addElements', set: SET, elements: [{ key: '10.0.0.2' }] },
  ]);
  // The first batch holds no end: nothing is yielded until the second.
  const { s, looked } = stream([adds.slice(0, 2), [...adds.slice(2), gen(5)]]);
  const events = await read(s, 3);
  t.match(events[0], { type: 'change', change: { op: 'addSet', set: { name: 's', type: 'ipv4_addr' } } });
  t.same(events[1], { type: 'change', change: { op: 'addElements', set: SET, elements: [{ key: '10.0.0.1' }, { key: '10.0.0.2' }] } });
  t.same(events[2], { type: 'commit', generation: 5, pid: 7, process: 'nft' });
  t.same(looked, [], 'the set was announced: no lookup');
});

t.test('a gap: what came before it, then the overrun; kinds without a schema by number', async (t) => {
  const adds = announced([{ op: 'addElements', set: SET, elements: [{ key: '10.0.0.1' }] }]);
  const { s, looked } = stream([[{ unknown: 22, portId: 0 }, ...adds, { overrun: true }, gen(9)]]);
  const events = await read(s, 4);
  t.same(events[0], { type: 'unknown', message: 22 });
  // A set the stream never saw made, and the lookup finds it gone: its keys as bytes.
  t.match(events[1], { type: 'change', change: { op: 'addElements', set: SET } });
  t.ok((events[1] as { change: { elements: Array<{ key: unknown }> } }).change.elements[0].key instanceof Uint8Array);
  t.same(looked, ['1 t s']);
  t.same(events[2], { type: 'overrun' });
  t.same(events[3], { type: 'commit', generation: 9, pid: 7, process: 'nft' });
});

t.test('next() called again before the first settles (as Promise.race leaves it): each settles, in order', async (t) => {
  const adds = announced([{ op: 'addElements', set: SET, elements: [{ key: '10.0.0.1' }] }]);
  const { s } = stream([[], [...adds, gen(1)], [gen(2)]]);
  const [a, b, c] = [s.next(), s.next(), s.next()];
  t.match(await a, { value: { type: 'change' } });
  t.match(await b, { value: { type: 'commit', generation: 1 } });
  t.match(await c, { value: { type: 'commit', generation: 2 } });
  const waiting = [s.next(), s.next()];
  s.close();
  t.same(await Promise.all(waiting), [{ value: undefined, done: true }, { value: undefined, done: true }], 'and close() ends every one waiting');
});

t.test("a set's layout that cannot be read ends the stream with that error, after what came before", async (t) => {
  const adds = announced([{ op: 'addElements', set: SET, elements: [{ key: '10.0.0.1' }] }]);
  const { s } = stream([[gen(1), ...adds, gen(2)]], async () => {
    throw Object.assign(new Error('the nftables handle is closed'), { code: 'EBADF' });
  });
  t.match((await s.next()).value, { type: 'commit', generation: 1 });
  await t.rejects(s.next(), { code: 'EBADF' });
  t.same(await s.next(), { value: undefined, done: true });
});
