/**
 * The instances kept for their hidden class (lib/util/keep-layout.ts) have
 * the hidden class that the library's own instances of their classes get:
 * a request writer that wrote and grew a batch, a reply reader over real
 * records, a dump reader that read chunks, an nftables element writer that
 * wrote and grew, a conntrack reply reader. A kept instance built another
 * way would keep a hidden class nothing else uses. Compared by their own
 * fields, in order (what a hidden class follows), on any engine, and on V8
 * by V8's own comparison too (%HaveSameMap, allowed at run time; Bun's
 * engine has none); one object given an extra field shows the comparison
 * can fail.
 */
import { setFlagsFromString } from 'node:v8';
import t from 'tap';

import { EntryRecords } from '../../lib/conntrack/records.js';
import { writeBatch } from '../../lib/ipvs/batch.js';
import { DumpReader } from '../../lib/ipvs/dump-reader.js';
import { ReplyRecords } from '../../lib/ipvs/reply-reader.js';
import { RequestWriter } from '../../lib/ipvs/request-writer.js';
import { ElementWriter } from '../../lib/nftables/element-codec.js';
import { keptInstances } from '../../lib/util/keep-layout.js';
import { Replies } from '../support/ipvs-replies.js';

const onV8 = (globalThis as { Bun?: unknown }).Bun === undefined;
if (onV8) setFlagsFromString('--allow-natives-syntax');
// Parsed only now that the flag is on.
const haveSameMap = onV8 ? (new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean) : () => true;
const sameFields = (a: object, b: object) => Reflect.ownKeys(a).join() === Reflect.ownKeys(b).join();
const sameHiddenClass = (a: object, b: object) => sameFields(a, b) && haveSameMap(a, b);

function keptOf<T extends object>(cls: abstract new (...args: never[]) => T): T {
  const found = keptInstances().filter((o) => o instanceof cls);
  if (found.length !== 1) throw new Error(`${cls.name}: ${found.length} instances kept, not 1`);
  return found[0] as T;
}

const service = { protocol: 'tcp', address: '10.96.0.1', port: 80 } as const;
const ops = [
  { op: 'addService', service: { ...service, scheduler: 'rr' } },
  { op: 'addDestination', service, destination: { address: '172.16.0.1', port: 8080 } },
  { op: 'listDestinations', service },
  { op: 'deleteService', service: { fwmark: 7 } },
];

t.test('a request writer that wrote a batch, grew and took a spare buffer', async (t) => {
  const kept = keptOf(RequestWriter);
  const grown = new RequestWriter(1);
  writeBatch(grown, ops);
  t.ok(grown.buffer().length > 96, 'the batch outgrew the writer\'s first buffer');
  t.ok(sameHiddenClass(kept, grown), 'the kept writer has its hidden class');
  const spare = new RequestWriter(ops.length + 1, grown.buffer());
  writeBatch(spare, ops);
  t.ok(sameHiddenClass(kept, spare), 'and one written into a spare buffer');
  const other = Object.assign(new RequestWriter(1), { extra: 1 });
  t.notOk(sameHiddenClass(kept, other), 'an instance with an extra field has another');
});

t.test('a reply reader over real records', async (t) => {
  const r = new Replies(3);
  r.service([10, 0, 0, 1], 80, 1);
  r.destination(0, 2, 1, 0n);
  r.destination(0, 3, 1, 5n);
  const reader = new ReplyRecords(r.slice(0), ['rr']);
  t.equal(reader.count, 3);
  reader.service(0);
  t.ok(sameHiddenClass(keptOf(ReplyRecords), reader), 'the kept reader has its hidden class');
});

t.test('a dump reader that read chunks', async (t) => {
  const r = new Replies(2);
  r.service([10, 0, 0, 1], 80, 1);
  r.destination(0, 2, 1, 0n);
  for (const withStats of [true, false]) {
    const reader = new DumpReader(withStats);
    reader.add(r.slice(0), ['rr']);
    const services = reader.finish({ failures: [], records: new ArrayBuffer(0), strings: [] });
    t.equal(services[0].destinations.length, 1);
    t.ok(sameHiddenClass(keptOf(DumpReader), reader), `the kept reader has its hidden class (withStats ${withStats})`);
  }
});

t.test('an nftables element writer that wrote and grew', async (t) => {
  const w = new ElementWriter(0);
  for (let i = 0; i < 40; i++) {
    w.begin();
    w.u32(1, i);
    w.bytes(2, new Uint8Array(8));
    w.end();
  }
  t.ok(w.buf.length > 256, "the elements outgrew the writer's first buffer");
  t.ok(sameHiddenClass(keptOf(ElementWriter), w), 'the kept writer has its hidden class');
});

t.test('a conntrack reply reader', async (t) => {
  const reader = new EntryRecords({ records: new ArrayBuffer(4096), strings: ['x'] });
  reader.kind(0);
  t.ok(sameHiddenClass(keptOf(EntryRecords), reader), 'the kept reader has its hidden class');
});
