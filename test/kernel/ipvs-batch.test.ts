/**
 * apply(): a 5,000-operation batch with failing operations in the middle.
 * Each failing op reports its own error; every other op is applied (checked
 * with ipvsadm -Sn), and the batch takes far fewer system calls than ops;
 * the event loop keeps running meanwhile. And a batch big enough that its
 * request records (96 bytes an op) pass 2 MiB, which go into a buffer the
 * addon maps for them (lib/netlink/large-buffer.ts), applied whole.
 */
import { constants } from 'node:os';
import t from 'tap';
import { type BatchOp, NetlinkError } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

const SERVICES = 500;
const DESTS = 9;

t.test('a 5,005-op batch with five failing ops', async (t) => {
  const env = await ipvsEnv(t);
  const ops: BatchOp[] = [];
  const expected: string[] = [];
  const failures = new Map<number, { code: string; op: string }>();
  const vip = (i: number) => `10.2.${i >> 8}.${i & 255}`;
  const svc = (i: number) => ({ protocol: 'tcp', address: vip(i), port: 80 }) as const;
  const fail = (op: BatchOp, code: string) => {
    failures.set(ops.length, { code, op: op.op });
    ops.push(op);
  };

  for (let i = 0; i < SERVICES; i++) {
    ops.push({ op: 'addService', service: { ...svc(i), scheduler: i % 2 ? 'rr' : 'wrr' } });
    expected.push(`-A -t ${vip(i)}:80 -s ${i % 2 ? 'rr' : 'wrr'}`);
    for (let d = 0; d < DESTS; d++) {
      ops.push({ op: 'addDestination', service: svc(i), destination: { address: `10.0.1.${d + 2}`, port: 8080, weight: d + 1 } });
      expected.push(`-a -t ${vip(i)}:80 -r 10.0.1.${d + 2}:8080 -m -w ${d + 1}`);
    }
    if (i === 100) fail({ op: 'addService', service: { ...svc(50), scheduler: 'rr' } }, 'EEXIST');
    if (i === 200) fail({ op: 'addDestination', service: svc(200), destination: { address: '10.0.1.2', port: 8080 } }, 'EEXIST');
    if (i === 250) fail({ op: 'addDestination', service: { protocol: 'udp', address: vip(250), port: 80 }, destination: { address: '10.0.1.2', port: 8080 } }, 'ESRCH');
    if (i === 300) fail({ op: 'addService', service: { protocol: 'tcp', address: '10.3.0.1', port: 80, scheduler: 'nosuchsched' } }, 'ENOENT');
    if (i === 400) fail({ op: 'addDestination', service: svc(400), destination: { address: '10.0.1.99', port: 8080, upperThreshold: 5, lowerThreshold: 10 } }, 'ERANGE');
  }
  t.equal(ops.length, SERVICES * (DESTS + 1) + 5);

  const before = env.ipvs.counters();
  // The event loop keeps turning while the kernel works on the batch (all
  // kernel I/O is on a worker thread): a 1 ms timer fires again and again
  // before apply() settles. Were the loop blocked, it could fire once at most.
  let ticks = 0;
  let settled = false;
  const timer = setInterval(() => {
    if (!settled) ticks++;
  }, 1);
  const results = await env.ipvs.apply(ops).finally(() => {
    settled = true;
    clearInterval(timer);
  });
  const after = env.ipvs.counters();
  t.ok(ticks >= 5, `a timer fired ${ticks} times while apply() was pending`);

  t.equal(results.length, ops.length, 'one result per op');
  const gotFailures = new Map<number, { code: string; op: string }>();
  results.forEach((r, i) => {
    if (!r.ok) gotFailures.set(i, { code: r.error.code, op: r.error.operation });
  });
  t.same([...gotFailures.entries()], [...failures.entries()], 'exactly the bad ops failed, each with its own code');
  for (const [i, { code }] of failures) {
    const r = results[i];
    if (r.ok) continue;
    t.type(r.error, NetlinkError);
    t.equal(r.error.errno, constants.errno[code as keyof typeof constants.errno], `ops[${i}] errno is ${code}`);
    t.same(r.error.subject, 'destination' in ops[i] ? { service: ops[i].service, destination: (ops[i] as { destination: unknown }).destination } : ops[i].service, `ops[${i}] names its subject`);
  }

  const saved = await env.save();
  t.equal(saved.length, SERVICES * (DESTS + 1), 'ipvsadm -Sn has every good op and nothing else');
  t.same(saved, expected.sort(), 'ipvsadm -Sn content');

  const sent = after.sendmsgCalls - before.sendmsgCalls;
  t.ok(after.messagesSent - before.messagesSent >= ops.length, `every op was sent (${after.messagesSent - before.messagesSent} messages)`);
  t.ok(sent * 20 < ops.length, `batched: ${sent} sendmsg calls for ${ops.length} ops`);

  // And the library reads the whole table back.
  const dumped = await env.ipvs.dump();
  t.equal(dumped.length, SERVICES);
  t.equal(dumped.reduce((n, s) => n + s.destinations.length, 0), SERVICES * DESTS);
  const s7 = dumped.find((s) => 'address' in s && s.address === vip(7));
  t.same(s7?.destinations.map((d) => d.weight).sort(), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

t.test('a 27,500-op batch: its 2.6 MB of request records in a buffer of their own; the 4.4 MB read back not kept once a small call followed it', async (t) => {
  const env = await ipvsEnv(t);
  const services = 2500;
  const ops: BatchOp[] = [];
  const expected: string[] = [];
  for (let i = 0; i < services; i++) {
    const service = { protocol: 'udp', address: `10.4.${i >> 8}.${i & 255}`, port: 53 } as const;
    ops.push({ op: 'addService', service: { ...service, scheduler: 'rr' } });
    expected.push(`-A -u ${service.address}:53 -s rr`);
    for (let d = 0; d < 10; d++) {
      ops.push({ op: 'addDestination', service, destination: { address: `10.5.${d}.${(i % 250) + 1}`, port: 5353, weight: d } });
      expected.push(`-a -u ${service.address}:53 -r 10.5.${d}.${(i % 250) + 1}:5353 -m -w ${d}`);
    }
  }
  t.ok(ops.length * 96 > 2 * 2 ** 20, `${ops.length} ops: past the 2 MiB from which the records get a buffer of their own`);
  const results = await env.ipvs.apply(ops);
  t.equal(results.filter((r) => r.ok).length, ops.length, 'every op applied');
  const saved = await env.save();
  t.equal(saved.length, ops.length, 'ipvsadm -Sn shows one line per op');
  t.same(saved, expected.sort(), 'ipvsadm -Sn content');

  // The whole table read back in one call fills the handle's reply memory
  // past what it keeps between calls (4 MiB). A small call right after it
  // writes a few records into that same memory; once the caller is idle,
  // the memory goes all the same, not only when the last call filled it.
  const handle = (env.ipvs as unknown as { handle: { dump(): Promise<{ records: ArrayBuffer }>; releaseReplies(): number; testBufferResidency(): number } })
    .handle;
  const whole = await handle.dump();
  const received = handle.testBufferResidency();
  t.equal(whole.records.byteLength, ops.length * 160, `the read lent ${ops.length} records`);
  t.ok(whole.records.byteLength > 4 * 2 ** 20, 'more than the handle keeps between calls');
  t.ok((await env.ipvs.info()).connTableSize > 0, 'a small call right after it (info)');
  t.ok(handle.releaseReplies() <= 4 * 2 ** 20, 'once idle, the handle keeps at most 4 MiB of reply memory');
  // The read filled the socket's receive slots too; the client gives them
  // back at the event loop's next turn after its last call (info).
  await new Promise((resolve) => setImmediate(resolve));
  const idle = handle.testBufferResidency();
  t.ok(received > 512 << 10 && idle <= 256 << 10, `the socket's buffers: ${received} bytes resident after the read, ${idle} once idle`);
});

t.test('apply: mixed updates and deletes report per op, in order', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 1', '-A -u 10.0.0.1:53 -s rr']);
  const tcp = { protocol: 'tcp', address: '10.0.0.1', port: 80 } as const;
  const udp = { protocol: 'udp', address: '10.0.0.1', port: 53 } as const;
  const results = await env.ipvs.apply([
    { op: 'updateService', service: { ...tcp, scheduler: 'wlc' } },
    { op: 'updateDestination', service: tcp, destination: { address: '10.0.1.2', port: 80, weight: 5 } },
    { op: 'deleteDestination', service: tcp, destination: { address: '10.0.1.3', port: 80 } },
    { op: 'deleteService', service: udp },
    { op: 'deleteService', service: udp },
    { op: 'updateService', service: { ...udp, scheduler: 'rr' } },
  ]);
  t.same(results.map((r) => (r.ok ? 'ok' : r.error.code)), ['ok', 'ok', 'ENOENT', 'ok', 'ESRCH', 'ESRCH']);
  t.same(await env.save(), ['-A -t 10.0.0.1:80 -s wlc', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 5']);
  t.strictSame(await env.ipvs.apply([]), [], 'an empty batch');
});
