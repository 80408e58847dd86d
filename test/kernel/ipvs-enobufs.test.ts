/**
 * The receive buffer and ENOBUFS. Answers the kernel cannot queue are
 * dropped, and the socket then reports ENOBUFS: a request whose answer was
 * lost may or may not have been applied. The socket core sends only as much
 * as the receive buffer can answer, so a big batch and a big dump never
 * overflow it, however small it is; and when it does overflow (a test-only
 * switch sends regardless of it), every request without an answer says so,
 * the socket is replaced and the next call works.
 */
import t from 'tap';
import { type BatchOp, Ipvs } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

const FAILING = 5000;
// Each refused request is answered by an error message, ~200 bytes of
// skb truesize at least: 5,000 of them are far beyond this buffer.
const SMALL_RCVBUF = 32 * 1024;

const vip = (i: number) => `10.5.${i >> 8}.${i & 255}`;
/** Deletes of services that do not exist: every one is answered with ESRCH. */
const deletes = (n: number): BatchOp[] => Array.from({ length: n }, (_, i) => ({ op: 'deleteService', service: { protocol: 'tcp', address: vip(i), port: 80 } }));

t.test('a small receive buffer: 5,000 refusals, every one reported, no overflow', async (t) => {
  const env = await ipvsEnv(t);
  const ipvs = await Ipvs.open({ netns: env.ns.path, testRcvbuf: SMALL_RCVBUF } as never);
  t.teardown(() => ipvs.close());
  const before = ipvs.counters();
  const results = await ipvs.apply(deletes(FAILING));
  const after = ipvs.counters();
  t.equal(results.filter((r) => !r.ok && r.error.code === 'ESRCH').length, FAILING, 'each op has its own ESRCH');
  t.ok(after.sendmsgCalls - before.sendmsgCalls > 10, `sent in ${after.sendmsgCalls - before.sendmsgCalls} pieces, each as much as the buffer can answer`);
  // A big dump through the same small buffer: the kernel fills it only as we read.
  t.ok((await env.ipvs.apply(Array.from({ length: 300 }, (_, i): BatchOp[] => [
    { op: 'addService', service: { protocol: 'tcp', address: vip(i), port: 80, scheduler: 'rr' } },
    ...Array.from({ length: 8 }, (_, d): BatchOp => ({ op: 'addDestination', service: { protocol: 'tcp', address: vip(i), port: 80 }, destination: { address: `10.0.1.${d + 2}`, port: 8080 } })),
  ]).flat())).every((r) => r.ok));
  const dumped = await ipvs.dump();
  t.equal(dumped.length, 300, 'every service');
  t.equal(dumped.reduce((n, s) => n + s.destinations.length, 0), 2400, 'every destination');
  t.equal((await env.save()).length, 2700, 'as ipvsadm -Sn shows');
});

t.test('an overflowing receive buffer: the lost answers say so, the socket is replaced, the next call works', async (t) => {
  const env = await ipvsEnv(t);
  const ipvs = await Ipvs.open({ netns: env.ns.path, testRcvbuf: SMALL_RCVBUF, testIgnoreBudget: true } as never);
  t.teardown(() => ipvs.close());
  // The overflow does not reject the batch: some requests went out, so
  // every one reports its own outcome.
  const results = await ipvs.apply(deletes(FAILING));
  const esrch = results.filter((r) => !r.ok && r.error.code === 'ESRCH').length;
  const lost = results.filter((r) => !r.ok && r.error.code === 'ENOBUFS');
  t.equal(esrch + lost.length, FAILING, 'every op failed: refused, or its answer lost');
  t.ok(lost.length > 0, `the buffer overflowed: ${lost.length} answers lost, ${esrch} read`);
  t.ok(esrch > 0, 'the answers read before the overflow are kept');
  const first = lost[0];
  t.match(first.ok ? {} : { syscall: first.error.syscall, message: first.error.message }, { syscall: 'recvmmsg', message: /receive buffer overflowed.*unknown/ }, 'a lost answer says its outcome is unknown');
  // Answers are read in order: every one read before the overflow comes first.
  const firstLost = results.findIndex((r) => !r.ok && r.error.code === 'ENOBUFS');
  t.ok(results.slice(firstLost).every((r) => !r.ok && r.error.code === 'ENOBUFS'), 'everything after the first lost answer is unknown too');
  // The handle carries on, on a fresh socket.
  await ipvs.addService({ protocol: 'tcp', address: '10.6.0.1', port: 80, scheduler: 'rr' });
  t.same(await env.save(), ['-A -t 10.6.0.1:80 -s rr'], 'the next call works');
});
