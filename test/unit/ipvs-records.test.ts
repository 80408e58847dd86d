// The record layer's shortcuts give what the long way gives: a service
// object named again by the next ops is copied from its record, and a dump
// read in chunks as the addon hands them over (strings numbered across the
// chunks) is the dump read whole. No kernel: records are written and read
// as the addon would.
import t from 'tap';

import { writeBatch } from '../../lib/ipvs/batch.js';
import { DumpReader } from '../../lib/ipvs/dump-reader.js';
import { RequestWriter } from '../../lib/ipvs/request-writer.js';
import type { BatchOp, ServiceRules } from '../../lib/ipvs/types.js';
import { Replies } from '../support/ipvs-replies.js';

const records = (ops: BatchOp[]): Uint8Array => {
  const w = new RequestWriter(ops.length);
  writeBatch(w, ops);
  return w.records();
};

t.test('a service object named by several ops is written as if each op had its own copy', async (t) => {
  const keys = [
    { protocol: 'tcp', address: '10.0.0.1', port: 80 },
    { protocol: 'udp', address: 'fd00::1', port: 53 },
    { fwmark: 7, family: 'inet6' },
  ] as const;
  for (const key of keys) {
    const spec = { ...key, scheduler: 'rr' };
    const v6 = ('address' in key && key.address.includes(':')) || ('family' in key && key.family === 'inet6');
    const shared: BatchOp[] = [
      { op: 'addService', service: spec },
      { op: 'addDestination', service: spec, destination: { address: v6 ? 'fd00::2' : '10.0.0.2', port: 8080 } },
      { op: 'deleteDestination', service: spec, destination: { address: 'fd00::3', port: 1 } },
      { op: 'updateDestination', service: key, destination: { address: 'fd00::4', port: 2, weight: 3, forward: 'tunnel' } },
      { op: 'deleteService', service: key },
      { op: 'listDestinations', service: key },
    ];
    const copied = shared.map((o) => ({ ...o, service: { ...o.service } })) as BatchOp[];
    t.same(records(shared), records(copied), `${JSON.stringify(key)}: the same bytes`);
  }
});

t.test('a batch written into the buffer of an earlier one: records past the ops counted are as in a fresh buffer', async (t) => {
  // listDestinations writes two records (GET_SERVICE, then the GET_DEST dump), so a batch can fill more
  // records than it has ops; the earlier batch left service specifications (a scheduler name each) there.
  const earlier = new RequestWriter(4);
  writeBatch(earlier, Array.from({ length: 4 }, (_, i) => ({ op: 'addService', service: { protocol: 'tcp', address: `10.0.0.${i + 1}`, port: 80, scheduler: 'rr' } })) as BatchOp[]);
  const key = { protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' } as const;
  const ops = [
    { op: 'updateDestination', service: key, destination: { address: '10.0.0.9', port: 8080, weight: 0 } },
    { op: 'listDestinations', service: key },
  ] as BatchOp[];
  const reused = new RequestWriter(ops.length, earlier.buffer());
  writeBatch(reused, ops);
  t.equal(reused.count, 3, 'three records for two ops');
  t.same(reused.records(), records(ops), 'the same bytes as a fresh buffer');
  t.same(reused.strings(), [], 'and no string named');
});

t.test('a refused op after a shared service object still names its field', async (t) => {
  const key = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;
  const ops = [
    { op: 'addDestination', service: key, destination: { address: '10.0.0.2', port: 80 } },
    { op: 'addDestination', service: key, destination: { address: '10.0.0.3', port: 70000 } },
  ] as BatchOp[];
  t.throws(() => records(ops), { name: 'RangeError', field: 'ops[1].destination.port' });
});

const table = new Replies(6)
  .service([10, 0, 0, 1], 80, 1) // scheduler: string 1
  .service(2, 443, 1) // address: string 2
  .destination(0, 2, 1, 0n)
  .destination(0, 3, 5, 1n << 40n)
  .destination(1, 4, 2, 7n)
  .destination(1, 5, 0, 0n);
const strings = ['rr', 'fd00::1'];

t.test('a dump read in chunks, strings arriving with the chunk that first names them, is the dump read whole', async (t) => {
  const whole = new DumpReader(true).finish({ failures: [], records: table.slice(0), strings });
  t.equal(whole.length, 2);
  t.match(whole[0], { protocol: 'tcp', address: '10.0.0.1', port: 80, family: 'inet', scheduler: 'rr' });
  t.match(whole[1], { address: 'fd00::1', port: 443, family: 'inet6', scheduler: 'rr' });
  t.same(whole[0].destinations.map((d) => [d.address, d.weight, d.stats.conns]), [['10.1.0.2', 1, 0n], ['10.1.0.3', 5, 1n << 40n]]);
  t.same(whole[1].destinations.map((d) => d.address), ['10.1.0.4', '10.1.0.5']);

  const r = new DumpReader(true);
  r.add(table.slice(0, 1), ['rr']);
  r.add(table.slice(1, 3), ['fd00::1']);
  r.add(table.slice(3, 5), []);
  t.same(r.finish({ failures: [], records: table.slice(5), strings: [] }), whole);

  // The reader's return type is the with-counters one whatever it was made with; dump({ stats: false }) returns these.
  const rules: ServiceRules[] = new DumpReader(false).finish({ failures: [], records: table.slice(0), strings });
  t.notOk('stats' in rules[0] || 'stats' in rules[0].destinations[0], 'stats: false leaves the counters out');
});

t.test('a service gone between the two steps is left out; any other failure, or a chunk that cannot be read, throws at the end', async (t) => {
  const failure = (index: number, code: string, errno: number) => ({ index, errno, code, message: '', text: code });
  const gone = new DumpReader(true);
  gone.add(table.slice(0, 3), strings);
  const left = gone.finish({ failures: [failure(1, 'ESRCH', 3)], records: table.slice(3), strings: [] });
  t.same(left.map((s) => ('port' in s ? s.port : s.fwmark)), [443]);

  const refused = new DumpReader(true);
  await t.rejects(async () => refused.finish({ failures: [failure(0, 'EPERM', 1)], records: new ArrayBuffer(0), strings: [] }), { code: 'EPERM' });

  // A destination of a service no chunk brought: the reader keeps the error for the end, never throwing into the addon.
  const broken = new DumpReader(true);
  t.doesNotThrow(() => broken.add(table.slice(2, 3), strings));
  t.throws(() => broken.finish({ failures: [], records: new ArrayBuffer(0), strings: [] }), TypeError);
});
