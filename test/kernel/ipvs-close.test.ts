/**
 * close() while a call is in flight: the call stops sending, what it sent
 * keeps its true outcome, the rest ends EBADF as not sent, and close()
 * itself does not wait for the call (it runs on the JavaScript thread).
 * The kernel is read back with ipvsadm: exactly what was reported done is
 * there.
 */
import t from 'tap';
import { type BatchOp, type BatchResult, type Ipvs, NetlinkError } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

const vip = (i: number) => `10.5.${i >> 8}.${i & 255}`;
const svc = (i: number) => ({ protocol: 'tcp', address: vip(i), port: 80 }) as const;

function table(services: number, dests: number): BatchOp[] {
  const ops: BatchOp[] = [];
  for (let i = 0; i < services; i++) {
    ops.push({ op: 'addService', service: { ...svc(i), scheduler: 'rr' } });
    for (let d = 0; d < dests; d++) ops.push({ op: 'addDestination', service: svc(i), destination: { address: `10.0.1.${d + 2}`, port: 8000 + d } });
  }
  return ops;
}

/** The addon's handle under an Ipvs (internal: the seam the client calls). */
type NativeDump = { dump(onChunk: (records: ArrayBuffer, strings: string[]) => void): Promise<unknown> };
const nativeOf = (ipvs: Ipvs) => (ipvs as unknown as { handle: NativeDump }).handle;

t.test('close() from a dump chunk: the dump stops and rejects with EBADF, the table is untouched', async (t) => {
  const env = await ipvsEnv(t);
  // 33,000 records: the addon hands the first 4,096 over while some 2,600
  // destination dumps are still to go.
  const ops = table(3000, 10);
  t.ok((await env.ipvs.apply(ops)).every((r) => r.ok), 'programmed');
  const handle = nativeOf(env.ipvs);
  const dump = handle.dump.bind(handle);
  let chunks = 0;
  // (The addon's methods are read-only on its prototype: an own property shadows it.)
  Object.defineProperty(handle, 'dump', {
    value: (onChunk: (records: ArrayBuffer, strings: string[]) => void) =>
      dump((records, strings) => {
        onChunk(records, strings);
        // A close() that waited for the job would block here until the whole dump was read, which would then succeed.
        if (chunks++ === 0) env.ipvs.close();
      }),
  });
  const err = await env.ipvs.dump().then(
    () => null,
    (e: unknown) => e,
  );
  // (Records of dumps already answered may still come in a chunk after it.)
  t.ok(chunks > 0, `close() came with the first chunk (${chunks} in all)`);
  t.ok(err instanceof NetlinkError, 'the dump rejects with a NetlinkError');
  t.equal((err as NetlinkError).code, 'EBADF');
  t.match((err as NetlinkError).message, /closed while this call was in flight/);
  await t.rejects(env.ipvs.listServices(), { code: 'EBADF' }, 'later calls fail');
  const saved = await env.save();
  t.equal(saved.length, ops.length, 'ipvsadm -Sn still lists every service and destination');
});

t.test('close() during a batch: what went out keeps its result, the rest fails EBADF as not sent', async (t) => {
  const env = await ipvsEnv(t);
  const ops = table(10000, 10);
  const before = env.ipvs.counters().messagesSent;
  const batch = env.ipvs.apply(ops);
  // Closed as soon as the first requests are on their way (the socket's counters move).
  let sentAtClose = 0;
  while (sentAtClose === 0) {
    await new Promise((r) => setImmediate(r));
    sentAtClose = env.ipvs.counters().messagesSent - before;
  }
  env.ipvs.close();
  const results: BatchResult[] = await batch;
  t.equal(results.length, ops.length, 'one result per op');
  const firstFailed = results.findIndex((r) => !r.ok);
  t.ok(firstFailed > 0 && sentAtClose < ops.length, `closed mid-batch: ${sentAtClose} of ${ops.length} sent when close() was called, ${firstFailed} done`);
  const failed = results.slice(firstFailed);
  t.ok(
    failed.every((r) => !r.ok && r.error.code === 'EBADF' && /not sent, so not applied/.test(r.error.message)),
    'every op after the last one sent fails EBADF as not sent',
  );
  t.ok(results.slice(0, firstFailed).every((r) => r.ok), 'every op before it succeeded');
  const saved = await env.save();
  t.equal(saved.length, firstFailed, 'ipvsadm -Sn lists exactly the ops reported done');
  const services = saved.filter((l) => l.startsWith('-A ')).length;
  t.equal(services, ops.slice(0, firstFailed).filter((o) => o.op === 'addService').length, 'and exactly their services');
});
