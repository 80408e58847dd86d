/**
 * Native memory stays flat over many open / batch / dump / error / close
 * cycles of an IPVS handle: malloc'd bytes in use, measured as
 * test/support/leak.ts explains (with a control that shows the measure
 * catches a leak).
 */
import t from 'tap';

import { type BatchOp, Ipvs } from '../../lib/index.js';
import { ipvsEnv } from '../support/ipvs-env.js';
import { assertNoLeak } from '../support/leak.js';

const WARMUP = 1000;
const CYCLES = 2000;

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
  await assertNoLeak(t, cycle, WARMUP, CYCLES);
});
