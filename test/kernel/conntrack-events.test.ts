// The event stream against real connections: a TCP connection through the
// node's DNAT is seen opening (new), changing state (update) and, once
// deleted, going (destroy), as the conntrack tool reports the same
// connection; the stream never blocks the event loop; when the kernel
// drops events (a tiny receive buffer, a consumer that does not read, a
// burst) the stream says so with an overrun; close() ends it. Host and
// sandbox.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';

import { Conntrack, type ConntrackEvent, type ConntrackEventStream } from '../../lib/index.js';
import { natNode, POD_IP, SERVICE_IP, toolList, udpBurst } from '../support/conntrack-env.js';
import { openConnection } from '../support/connection.js';

/**
 * Events until `done` says so, or 30 s (then what came, for the failure).
 * next() by hand: leaving a for-await loop early closes the stream.
 */
async function collect(stream: ConntrackEventStream, done: (seen: ConntrackEvent[]) => boolean): Promise<ConntrackEvent[]> {
  const seen: ConntrackEvent[] = [];
  const timer = setTimeout(() => stream.close(), 30_000);
  for (let r = await stream.next(); !r.done; r = await stream.next()) {
    seen.push(r.value);
    if (done(seen)) break;
  }
  clearTimeout(timer);
  return seen;
}

// One node for both tests (each namespace and process costs seconds in the sandbox).
const c = await natNode(t);

t.test('a TCP connection opens, changes and goes, as the tool saw it', async (t) => {
  const ct = await Conntrack.open({ netns: c.node.path });
  t.teardown(() => ct.close());
  const stream = await ct.events({ filter: { protocol: 'tcp', orig: { dst: SERVICE_IP, dstPort: 80 } } });
  t.teardown(() => stream.close());

  // The event loop stays free while the stream waits.
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 10);
  const conn = await openConnection(t, c.client, SERVICE_IP, 80);
  t.equal(await conn.ask(), 'pod', 'the connection answers through the DNAT');
  const [tool] = (await toolList(c.node, '-p', 'tcp', '--orig-dst', SERVICE_IP)).filter((e) => e.state === 'ESTABLISHED');
  t.ok(tool, 'the tool lists the established connection');

  const opened = await collect(stream, (seen) => seen.some((e) => e.type !== 'overrun' && e.entry.state === 'ESTABLISHED'));
  clearInterval(ticker);
  t.ok(ticks > 5, `the event loop ran (${ticks} ticks) while events were awaited`);
  const first = opened[0];
  t.equal(first.type, 'new', 'the first event is new');
  if (first.type === 'overrun') return;
  t.same([first.entry.orig.src, first.entry.orig.srcPort, first.entry.reply.src], [tool.orig.src, Number(tool.orig.sport), POD_IP], 'for the connection the tool lists (same tuple, reply from the pod)');
  t.equal(first.entry.id, Number(tool.rest.id), 'with the id the tool prints');
  t.ok(opened.some((e) => e.type === 'update'), 'updates follow as the handshake completes');
  t.ok(opened.every((e) => e.type !== 'overrun' && e.entry.orig.dstPort === 80), 'every event is the filter\'s');

  // Deleting it is a destroy event, with the final counters.
  t.equal(await ct.delete(first.entry), true, 'deleted through the library');
  const gone = await collect(stream, (seen) => seen.some((e) => e.type === 'destroy'));
  const destroy = gone.find((e) => e.type === 'destroy');
  t.ok(destroy, 'a destroy event follows');
  if (destroy && destroy.type === 'destroy') {
    t.equal(destroy.entry.id, first.entry.id, 'for the same entry');
    t.ok(destroy.entry.counters && destroy.entry.counters.orig.packets >= 3n, 'carrying its counters');
  }
  await conn.reset().catch(() => undefined);
  stream.close();
  t.same(await stream.next(), { value: undefined, done: true }, 'a closed stream ends');
});

t.test('dropped events are announced: a tiny buffer, a consumer that does not read, a burst', async (t) => {
  const ct = await Conntrack.open({ netns: c.node.path, testRcvbuf: 1 } as never);
  t.teardown(() => ct.close());
  const stream = await ct.events({ types: ['new'], maxQueued: 1 });
  t.teardown(() => stream.close());
  const N = 200;
  await udpBurst(c.client, SERVICE_IP, 53, N); // N new entries at once; nothing is read meanwhile
  await sleep(200);
  const seen = await collect(stream, (s) => s.at(-1)?.type === 'overrun');
  const news = seen.filter((e) => e.type === 'new').length;
  t.equal(seen.at(-1)?.type, 'overrun', `an overrun after ${news} events: the kernel dropped the rest, and the stream says so`);
  t.ok(news < N, `fewer events (${news}) than entries made (${N})`);
  t.ok((await toolList(c.node, '-p', 'udp', '--orig-dst', SERVICE_IP)).length >= N, 'while the table holds them all');
});
