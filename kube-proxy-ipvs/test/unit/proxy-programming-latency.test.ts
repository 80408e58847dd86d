/**
 * network_programming_duration_seconds's bookkeeping (ProgrammingLatency):
 * a trigger time counts only when after the start and on an update; a sync
 * programs the changes that came before it started; a deletion, or a sync
 * that failed after taking them, drops them, as kube-proxy's tracker does.
 */
import t from 'tap';
import type { EndpointSlice } from '../../lib/kubernetes/model.js';
import { ProgrammingLatency } from '../../lib/proxy/programming-latency.js';

const slice = (at: number): EndpointSlice =>
  ({ metadata: { name: 'web-1', namespace: 'demo', annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': new Date(at).toISOString() } }, addressType: 'IPv4', endpoints: [] }) as unknown as EndpointSlice;

t.test('trigger times after the start, programmed by the sync that started after they came', async (t) => {
  const p = new ProgrammingLatency();
  const start = Date.now(); // read after the tracker's own start, so that start + 1 s is after it however slow the machine
  p.changed(slice(start - 3_600_000), 'IPv4', 'demo/web', false, 100); // before the start: a restart's downtime
  p.changed(slice(start + 1000), 'IPv4', 'demo/web', false, 200);
  p.changed(slice(start + 2000), 'IPv4', 'demo/api', false, 400);
  t.same(p.programmed(300, start + 1500), [{ family: 'IPv4', seconds: 0.5 }], 'the one that came before the sync started');
  t.same(p.programmed(500, start + 2250), [{ family: 'IPv4', seconds: 0.25 }], 'the next at the next sync');
  t.same(p.programmed(600, start + 3000), [], 'each once');
});

t.test('a deletion, or a failed sync that took them, drops them', async (t) => {
  const p = new ProgrammingLatency();
  const start = Date.now(); // read after the tracker's own start, so that start + 1 s is after it however slow the machine
  p.changed(slice(start + 1000), 'IPv4', 'demo/web', false, 100);
  p.changed(slice(start + 1000), 'IPv4', 'demo/web', true, 150);
  t.same(p.programmed(200, start + 2000), [], 'deleted before it was programmed');
  p.changed(slice(start + 3000), 'IPv4', 'demo/web', false, 300);
  p.dropTaken(400); // a sync that started at 400 failed
  t.same(p.programmed(500, start + 9000), [], 'not measured again by the next sync');
});
