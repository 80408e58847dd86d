/**
 * How batches and dumps travel: one ack per sendmsg (failures still each
 * reported, in every chunk), a reused request buffer, and dumps with and
 * without counters that agree with each other and with `ipvsadm -Sn` on a
 * table large enough to take many reads.
 */
import t from 'tap';
import { type BatchOp } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

const vip = (i: number) => `10.4.${i >> 8}.${i & 255}`;
const svc = (i: number) => ({ protocol: 'tcp', address: vip(i), port: 80 }) as const;

/** S services with D destinations each, and the ipvsadm -Sn lines they make. */
function table(services: number, dests: number, scheduler = 'rr'): { ops: BatchOp[]; lines: string[] } {
  const ops: BatchOp[] = [];
  const lines: string[] = [];
  for (let i = 0; i < services; i++) {
    ops.push({ op: 'addService', service: { ...svc(i), scheduler } });
    lines.push(`-A -t ${vip(i)}:80 -s ${scheduler}`);
    for (let d = 0; d < dests; d++) {
      ops.push({ op: 'addDestination', service: svc(i), destination: { address: `10.0.1.${d + 2}`, port: 8000 + d, weight: d + 1 } });
      lines.push(`-a -t ${vip(i)}:80 -r 10.0.1.${d + 2}:${8000 + d} -m -w ${d + 1}`);
    }
  }
  return { ops, lines };
}

t.test('a batch over several sendmsg calls: one ack each, and every failure in every chunk', async (t) => {
  const env = await ipvsEnv(t);
  const { ops, lines } = table(1000, 7);
  // A failure near the start, the middle and the end of the batch: each
  // lands in a different sendmsg (a chunk holds a few thousand requests).
  const bad: number[] = [];
  for (const at of [10, 4000, ops.length - 1]) {
    ops.splice(at, 0, { op: 'addService', service: { ...svc(0), scheduler: 'rr' } });
    bad.push(at);
  }
  const before = env.ipvs.counters();
  const results = await env.ipvs.apply(ops);
  const after = env.ipvs.counters();
  const failed = results.flatMap((r, i) => (r.ok ? [] : [[i, r.error.code]]));
  t.same(failed, bad.map((i) => [i, 'EEXIST']), 'exactly the three duplicates failed, at their own indices');
  t.same(await env.save(), [...lines].sort(), 'ipvsadm -Sn holds every other operation');
  const sendmsg = after.sendmsgCalls - before.sendmsgCalls;
  const answers = after.messagesReceived - before.messagesReceived;
  t.ok(sendmsg >= 2, `the batch took several sendmsg calls (${sendmsg}) for ${ops.length} messages`);
  t.equal(after.messagesSent - before.messagesSent, ops.length, 'one message per op');
  t.equal(answers, sendmsg + bad.length, 'the kernel answered once per sendmsg, plus each failure');
});

t.test('a second batch on the same handle reuses its request buffer, and sees none of the first', async (t) => {
  const env = await ipvsEnv(t);
  // The first batch fills fields (persistence, netmask, thresholds) that the
  // second batch's records, at the same positions, leave out: a field left
  // over in the reused buffer would show in ipvsadm -Sn.
  const first: BatchOp[] = [
    { op: 'addService', service: { ...svc(100), scheduler: 'wrr', persistent: { timeout: 300, netmask: 24 } } },
    { op: 'addDestination', service: svc(100), destination: { address: '10.0.1.9', port: 9000, weight: 7, upperThreshold: 50, lowerThreshold: 5 } },
  ];
  const second: BatchOp[] = [
    { op: 'addService', service: { ...svc(101), scheduler: 'rr' } },
    { op: 'addDestination', service: svc(101), destination: { address: '10.0.1.9', port: 9000 } },
  ];
  t.ok((await env.ipvs.apply(first)).every((r) => r.ok));
  t.ok((await env.ipvs.apply(second)).every((r) => r.ok));
  t.same(
    await env.save(),
    [
      `-A -t ${vip(100)}:80 -s wrr -p 300 -M 255.255.255.0`,
      `-a -t ${vip(100)}:80 -r 10.0.1.9:9000 -m -w 7`,
      `-A -t ${vip(101)}:80 -s rr`,
      `-a -t ${vip(101)}:80 -r 10.0.1.9:9000 -m -w 1`,
    ].sort(),
    'ipvsadm -Sn: the second batch carries nothing of the first',
  );
  // Thresholds show only in -Ln --thresholds: Uthreshold Lthreshold ActiveConn InActConn.
  t.same(
    (await env.list('-Ln', '--thresholds')).filter((l) => l.startsWith('->')),
    ['-> 10.0.1.9:9000 0 0 0 0', '-> 10.0.1.9:9000 50 5 0 0'],
    'ipvsadm -Ln --thresholds: the thresholds stayed with the first batch',
  );
});

t.test('dump() and dump({ stats: false }) agree with each other and with ipvsadm -Sn', async (t) => {
  const env = await ipvsEnv(t);
  // 8,000 records: the addon hands them over in chunks (4,096 at a time,
  // native/ipvs/dump_job.cc) while it reads the rest, and the result brings the tail.
  const { ops, lines } = table(1000, 7);
  t.ok((await env.ipvs.apply(ops)).every((r) => r.ok));
  const handle = (env.ipvs as unknown as { handle: { dump(onChunk?: (r: ArrayBuffer, s: string[]) => void): Promise<unknown> } }).handle;
  const chunks: ArrayBuffer[] = [];
  const real = handle.dump.bind(handle);
  Object.defineProperty(handle, 'dump', { configurable: true, value: (onChunk: (r: ArrayBuffer, s: string[]) => void) => real((r, s) => (chunks.push(r), onChunk(r, s))) });
  const full = await env.ipvs.dump();
  delete (handle as { dump?: unknown }).dump;
  t.ok(chunks.length >= 1, `records came in chunks (${chunks.length}) before the result`);
  t.ok(chunks.every((c) => c.byteLength === 0), 'each chunk was detached once read');
  const bare = await env.ipvs.dump({ stats: false });
  t.equal(full.length, 1000, 'every service');
  t.equal(full.reduce((n, s) => n + s.destinations.length, 0), 7000, 'every destination');
  t.ok(full.every((s) => typeof s.stats.conns === 'bigint' && s.destinations.every((d) => typeof d.stats.inBytes === 'bigint')), 'counters are BigInts');
  t.ok(bare.every((s) => !('stats' in s) && s.destinations.every((d) => !('stats' in d))), 'no counters when asked for none');
  const strip = (x: object) => Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'stats'));
  t.same(
    bare,
    full.map((s) => ({ ...strip(s), destinations: s.destinations.map(strip) })),
    'the same services and destinations, field for field',
  );
  // What the library read, as ipvsadm -Sn would print it.
  const ours = full.flatMap((s) => {
    if (!('address' in s)) return [];
    return [
      `-A -t ${s.address}:${s.port} -s ${s.scheduler}`,
      ...s.destinations.map((d) => `-a -t ${s.address}:${s.port} -r ${d.address}:${d.port} -m -w ${d.weight}`),
    ];
  });
  t.same(ours.sort(), await env.save(), 'ipvsadm -Sn shows exactly what dump() read');
  t.same(ours.sort(), [...lines].sort());
  await t.rejects(env.ipvs.dump({ stats: 'no' } as never), { name: 'TypeError', message: /options\.stats/ });
});

t.test('reply records are lent, and taken back before the next call writes them', async (t) => {
  const env = await ipvsEnv(t);
  t.ok((await env.ipvs.apply(table(20, 3).ops)).every((r) => r.ok));
  // The addon's own handle, as the client drives it: dump() lends a view
  // of the handle's reply arena; the next call detaches it first.
  const handle = (env.ipvs as unknown as { handle: { dump(): Promise<{ records: ArrayBuffer }>; releaseReplies(): void } }).handle;
  const first = await handle.dump();
  t.equal(first.records.byteLength, (20 + 60) * 160, 'the first dump lends 80 records');
  const second = handle.dump();
  t.equal(first.records.byteLength, 0, 'the next call detached the first view before writing');
  const view = (await second).records;
  t.equal(view.byteLength, (20 + 60) * 160, 'the second dump has its own view');
  // The client hands the records back as soon as it has read them (a big dump's memory is not held until the next call).
  handle.releaseReplies();
  t.equal(view.byteLength, 0, 'releaseReplies() detached the view at once');
  handle.releaseReplies(); // nothing lent: a no-op
  // And through the client, results are plain objects that outlive later calls.
  const a = await env.ipvs.dump();
  await env.ipvs.dump();
  t.equal(a.length, 20, 'an earlier dump() result is unaffected by later calls');
  t.equal(a.reduce((n, s) => n + s.destinations.length, 0), 60);
});

t.test('listDestinations inside apply(): each read sees the ops before it, in the same sendmsg; a missing service fails with ESRCH', async (t) => {
  const env = await ipvsEnv(t);
  await env.restore(['-A -t 10.4.0.1:80 -s rr', '-a -t 10.4.0.1:80 -r 10.0.1.2:8080 -m -w 1', '-a -t 10.4.0.1:80 -r 10.0.1.3:8080 -m -w 1']);
  const before = env.ipvs.counters();
  const results = await env.ipvs.apply([
    { op: 'listDestinations', service: svc(1) },
    { op: 'updateDestination', service: svc(1), destination: { address: '10.0.1.2', port: 8080, weight: 0 } },
    { op: 'addService', service: { ...svc(1), scheduler: 'rr' } }, // exists: fails, and shifts nothing
    { op: 'listDestinations', service: svc(1) },
    { op: 'listDestinations', service: svc(2) }, // no such service
    { op: 'deleteDestination', service: svc(1), destination: { address: '10.0.1.3', port: 8080 } },
    { op: 'listDestinations', service: svc(1) },
  ]);
  const after = env.ipvs.counters();
  const weights = (i: number) => {
    const r = results[i];
    return r.ok && r.destinations ? r.destinations.map((d) => `${d.address}:${d.port} w${d.weight}`).sort() : r;
  };
  t.same(weights(0), ['10.0.1.2:8080 w1', '10.0.1.3:8080 w1'], 'the first read sees the table as it was');
  t.same(results[1], { ok: true }, 'the update succeeded, with no destinations of its own');
  t.match(results[2], { ok: false, error: { code: 'EEXIST' } }, 'the duplicate service failed at its own index');
  t.same(weights(3), ['10.0.1.2:8080 w0', '10.0.1.3:8080 w1'], 'the second read sees the weight-0 update');
  t.match(results[4], { ok: false, error: { code: 'ESRCH' } }, 'a read of a missing service fails with ESRCH, as listDestinations() does');
  t.same(weights(6), ['10.0.1.2:8080 w0'], 'the last read sees the delete');
  t.same(await env.save(), ['-A -t 10.4.0.1:80 -s rr', '-a -t 10.4.0.1:80 -r 10.0.1.2:8080 -m -w 0'], 'ipvsadm -Sn agrees with the last read');
  t.equal(after.messagesSent - before.messagesSent, 11, 'one message per change, two per read (GET_SERVICE + GET_DEST dump)');
  t.equal(after.sendmsgCalls - before.sendmsgCalls, 4, 'a dump ends its sendmsg (one dump per socket at a time): four reads, four sendmsg');

  await t.rejects(env.ipvs.apply([{ op: 'listDestinations', service: { protocol: 'tcp', address: '10.4.0.1', port: 70000 } }]), /ops\[0\]\.service\.port/, 'a bad key is refused before anything is sent, naming the field');
});
