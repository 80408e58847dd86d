/**
 * kube-proxy's conntrack reconciler metrics: rendered with its HELP and
 * TYPE lines (component-base's "[ALPHA] " before the help text), its
 * sync-duration buckets, and per ip_family; observed from the stale
 * conntrack cleanup a sync ran, the time each family's took and the
 * entries it deleted, a sync whose rules' restore failed included (its
 * cleanup ran all the same), a sync that ran none leaving them alone.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { SyncResult } from '../../lib/kernel/controller-port.js';
import type { StaleConntrackReport } from '../../lib/kernel/stale-conntrack.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { staleConntrackOf, UnfinishedSyncError } from '../../lib/proxy/sync-outcome.js';
import type { FakeController } from '../support/fake-controller.js';
import { metric, started, until } from '../support/started-proxy.js';

const DURATION = 'kubeproxy_conntrack_reconciler_sync_duration_seconds';
const DELETED = 'kubeproxy_conntrack_reconciler_deleted_entries_total';

const report = (families: StaleConntrackReport['families']): StaleConntrackReport => ({
  listed: 10,
  deleted: families.reduce((n, f) => n + f.deleted, 0),
  failed: 0,
  netlink: { messagesSent: 2, messagesReceived: 2, sendmsgCalls: 2, recvCalls: 2, dumpsRestarted: 0 },
  families,
});

async function scrape(m: ProxyMetrics): Promise<string[]> {
  return (await m.registry.metrics()).split('\n');
}

t.test("HELP and TYPE as kube-proxy renders them; its sync buckets; a series per family", async (t) => {
  const m = new ProxyMetrics(() => undefined, { defaultMetrics: false });
  m.conntrackReconciler.observe(report([{ family: 'inet', seconds: 0.003, deleted: 3 }, { family: 'inet6', seconds: 0.0005, deleted: 0 }]));
  const lines = await scrape(m);
  for (const l of [
    `# HELP ${DURATION} [ALPHA] ReconcileConntrackFlowsLatency latency in seconds`,
    `# TYPE ${DURATION} histogram`,
    `# HELP ${DELETED} [ALPHA] Cumulative conntrack flows deleted by conntrack reconciler`,
    `# TYPE ${DELETED} counter`,
    `${DELETED}{ip_family="IPv4"} 3`,
    `${DELETED}{ip_family="IPv6"} 0`,
    `${DURATION}_count{ip_family="IPv4"} 1`,
    `${DURATION}_sum{ip_family="IPv4"} 0.003`,
    `${DURATION}_bucket{le="0.004",ip_family="IPv4"} 1`,
    `${DURATION}_bucket{le="0.002",ip_family="IPv4"} 0`,
    `${DURATION}_bucket{le="0.001",ip_family="IPv6"} 1`,
  ]) t.ok(lines.includes(l), l);
  const les = lines.filter((l) => l.startsWith(`${DURATION}_bucket{`) && l.includes('IPv4')).map((l) => l.match(/le="([^"]+)"/)![1]);
  t.same(les, [...Array.from({ length: 15 }, (_, i) => String(0.001 * 2 ** i)), '+Inf'], 'ExponentialBuckets(0.001, 2, 15), then +Inf');
});

t.test('nothing observed for a sync that ran no cleanup, nor for a family whose listing failed', async (t) => {
  const m = new ProxyMetrics(() => undefined, { defaultMetrics: false });
  m.conntrackReconciler.observe(undefined);
  m.conntrackReconciler.observe(report([]));
  t.notOk((await scrape(m)).some((l) => l.startsWith(`${DELETED}{`) || l.startsWith(`${DURATION}_count{`)), 'no series');
});

t.test("the cleanup is read from a pass's result, or from the error of one whose rules' restore failed", async (t) => {
  const stale = report([{ family: 'inet', seconds: 0.001, deleted: 1 }]);
  const result = { kind: 'incremental', planned: 1, applied: 1, failed: 0, durationSeconds: 0, ipsetFailures: [], rulesFailed: false, netlink: {}, staleConntrack: stale } as unknown as SyncResult;
  t.equal(staleConntrackOf({ result }), stale);
  t.equal(staleConntrackOf({ error: new UnfinishedSyncError({ ...result, rulesFailed: true }, "the rules' restore failed") }), stale);
  t.equal(staleConntrackOf({ error: new Error('kube-ipvs0 not made') }), undefined, 'a pass that threw ran none');
  t.equal(staleConntrackOf({}), undefined);
});

/** Each sync and resync reports the next of `reports` as its cleanup (none once they run out); `rulesFail` fails its rules' restore. */
function cleaning(reports: StaleConntrackReport[], mode: { rulesFail?: boolean }) {
  return (c: FakeController) => {
    for (const pass of ['sync', 'resync'] as const) {
      const run = c[pass].bind(c);
      c[pass] = async () => {
        const r = await run();
        const staleConntrack = reports.shift();
        return { ...r, rulesFailed: mode.rulesFail === true, ...(staleConntrack ? { staleConntrack } : {}) };
      };
    }
  };
}

t.test('a sync that deleted stale entries: /metrics shows them, per family', async (t) => {
  const mode: { rulesFail?: boolean } = {};
  const reports = [report([{ family: 'inet', seconds: 0.002, deleted: 2 }, { family: 'inet6', seconds: 0.001, deleted: 1 }])];
  const { dir, metrics, controller } = await started(t, {}, cleaning(reports, mode));
  t.equal(await metric(metrics, `${DELETED}{ip_family="IPv4"}`), 2, 'the first sync deleted two IPv4 entries');
  t.equal(await metric(metrics, `${DELETED}{ip_family="IPv6"}`), 1, 'and one IPv6 entry');
  t.equal(await metric(metrics, `${DURATION}_count{ip_family="IPv4"}`), 1, 'one IPv4 cleanup');
  t.equal(await metric(metrics, `${DURATION}_sum{ip_family="IPv6"}`), 0.001, 'the time the IPv6 one took');

  mode.rulesFail = true;
  reports.push(report([{ family: 'inet', seconds: 0.004, deleted: 5 }]));
  const syncs = controller.syncs.incremental;
  writeFileSync(join(dir, 'extra.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: extra, namespace: demo}\nspec: {clusterIP: 10.96.100.97, ports: [{port: 53, protocol: UDP}]}\n');
  await until('a sync of the change', () => controller.syncs.incremental > syncs);
  await until('its cleanup counted', async () => (await metric(metrics, `${DELETED}{ip_family="IPv4"}`)) === 7);
  t.equal(await metric(metrics, `${DURATION}_count{ip_family="IPv4"}`), 2, "a sync whose rules' restore failed: its cleanup counts");
  t.equal(await metric(metrics, `${DURATION}_count{ip_family="IPv6"}`), 1, 'that cleanup had no IPv6 part');
  mode.rulesFail = false;
});
