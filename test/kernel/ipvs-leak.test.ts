/**
 * Native memory stays flat over many open / batch / dump / error / close
 * cycles of an IPVS handle (same method and limits as ipset-leak.test.ts,
 * whose control test shows a 1 KB-per-cycle leak exceeds the limit).
 */
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readFileSync } from 'node:fs';

import { type BatchOp, Ipvs } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';

const WARMUP = 2000;
const CYCLES = 3000;
const ALLOWED = (CYCLES * 1024) / 2; // bytes: half of a 1 KB-per-cycle leak

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function settledNative(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r)); // let finalizers run
  }
  // Anonymous RSS outside the V8 heap (see ipset-leak.test.ts).
  const kb = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  if (!kb) throw new Error('no RssAnon in /proc/self/status');
  return Number(kb[1]) * 1024 - process.memoryUsage().heapTotal;
}

const svc = { protocol: 'tcp', address: '10.2.0.1', port: 80 } as const;
const ops: BatchOp[] = [
  { op: 'addService', service: { ...svc, scheduler: 'rr' } },
  ...Array.from({ length: 8 }, (_, d): BatchOp => ({
    op: 'addDestination',
    service: svc,
    destination: { address: `10.0.1.${d + 2}`, port: 8080, weight: d + 1 },
  })),
  // Fails (EEXIST): the error path with ext-ack and echo, inside a batch.
  { op: 'addService', service: { ...svc, scheduler: 'rr' } },
];

t.test('open/apply/dump/errors/flush/close cycles keep memory flat', async (t) => {
  const { ns } = await ipvsEnv(t);
  const cycle = async () => {
    const ipvs = await Ipvs.open({ netns: ns.path });
    try {
      const results = await ipvs.apply(ops);
      const failed = results.filter((r) => !r.ok).length;
      if (failed !== 1) throw new Error(`${failed} ops failed, expected 1`);
      const dump = await ipvs.dump();
      if (dump.length !== 1 || dump[0].destinations.length !== 8) throw new Error('unexpected dump');
      await ipvs.flush();
    } finally {
      ipvs.close();
    }
  };
  for (let i = 0; i < WARMUP; i++) await cycle();
  const before = await settledNative();
  for (let i = 0; i < CYCLES; i++) await cycle();
  const grew = (await settledNative()) - before;
  t.ok(grew < ALLOWED, `native memory grew ${grew} bytes over ${CYCLES} cycles (allowed ${ALLOWED})`);
});
