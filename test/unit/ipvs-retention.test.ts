/**
 * A handle keeps nothing of what it was given or gave back: once the caller
 * drops a batch's ops, its results and a dump's services, the collector can
 * take them. (What the README says; BENCHMARKS.md measures the memory.) An
 * Ipvs over a stub of the addon's handle, weak references to what the calls
 * took and returned, and forced collections; one object the test keeps
 * shows the check can fail.
 */
import t from 'tap';

import type { BatchOp, Ipvs } from '../../lib/index.js';
import { gc } from '../support/gc.js';
import { Replies } from '../support/ipvs-replies.js';
import { stubIpvs } from '../support/ipvs-stub.js';

/** Services 0..n-1 with four destinations each, as a dump's reply records. */
function dumpOf(services: number): { failures: never[]; records: ArrayBuffer; strings: string[] } {
  const r = new Replies(services * 5);
  for (let s = 0; s < services; s++) r.service([10, 0, s >> 8, s & 255], 80, 1);
  for (let s = 0; s < services; s++) for (let d = 0; d < 4; d++) r.destination(s, d + 2, 1, 0n);
  return { failures: [], records: r.slice(0), strings: ['rr'] };
}

function stubbed(): Ipvs {
  return stubIpvs({ dump: async () => dumpOf(200) });
}

/** A batch whose request records pass the 2 MiB a handle keeps for its next batch, and one under it. */
function batch(services: number): BatchOp[] {
  const ops: BatchOp[] = [];
  for (let s = 0; s < services; s++) {
    const service = { protocol: 'tcp', address: `10.1.${s >> 8}.${s & 255}`, port: 80 } as const;
    ops.push({ op: 'addService', service: { ...service, scheduler: 'rr' } });
    for (let d = 0; d < 10; d++) ops.push({ op: 'addDestination', service, destination: { address: `10.2.${s >> 8}.${s & 255}`, port: 8000 + d } });
  }
  return ops;
}

/** Collections until `refs` are all cleared or `rounds` pass; a turn of the event loop between, as weak references need. */
async function collected(refs: Array<WeakRef<object>>, rounds = 10): Promise<boolean> {
  for (let i = 0; i < rounds && refs.some((r) => r.deref() !== undefined); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  return refs.every((r) => r.deref() === undefined);
}

t.test('ops, results and dumps are the caller\'s alone', async (t) => {
  const ipvs = stubbed();
  const kept: object[] = [];
  const refs: Record<string, WeakRef<object>> = {};
  // In a function of its own: a caller's suspended frame would keep what it awaited.
  await (async () => {
    for (const services of [50, 3000]) {
      const ops = batch(services);
      const results = await ipvs.apply(ops);
      t.equal(results.length, ops.length, `${ops.length} ops applied`);
      refs[`${ops.length} ops`] = new WeakRef(ops);
      refs[`a service object of the ${ops.length} ops`] = new WeakRef(ops[0]);
      refs[`the results of ${ops.length} ops`] = new WeakRef(results);
    }
    const dumped = await ipvs.dump();
    t.equal(dumped.length, 200);
    t.equal(dumped[199].destinations.length, 4);
    refs['a dump'] = new WeakRef(dumped);
    refs['a dumped destination'] = new WeakRef(dumped[0].destinations[0]);
    const rules = await ipvs.dump({ stats: false });
    refs['a dump without counters'] = new WeakRef(rules);
    kept.push(rules[1]);
    refs['a service the test keeps'] = new WeakRef(rules[1]);
  })();
  const { 'a service the test keeps': control, ...dropped } = refs;
  t.ok(await collected(Object.values(dropped)), 'every dropped one was collected');
  for (const [name, ref] of Object.entries(dropped)) t.equal(ref.deref(), undefined, `${name}: collected`);
  t.equal(control.deref(), kept[0], 'what the caller still holds is not');
  // The handle works on after its callers' objects are gone.
  t.equal((await ipvs.apply(batch(1))).length, 11);
});
