/**
 * A sync the controller went through with some operations refused, as
 * kube-proxy's syncProxyRules treats a failed ipset or IPVS call: logged,
 * retried (here by a resync), and the sync still counts — /healthz, the
 * health-check node ports, the no-local-endpoints gauges, the last-sync
 * timestamp. A failed restore of the rules still fails the sync, as
 * upstream returns early then. The sync duration is observed for every
 * sync, failed ones too, as upstream observes it in a defer.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { rulesRefused } from '../../lib/kernel/applier.js';
import type { SyncResult } from '../../lib/kernel/controller-port.js';
import { defaultOptions } from '../../lib/proxy/options.js';
import { checkedPass } from '../../lib/proxy/sync-outcome.js';
import type { FakeController } from '../support/fake-controller.js';
import { localLoadBalancerYaml } from '../support/demo-objects.js';
import { metric, started, until } from '../support/started-proxy.js';

// Health-check node ports here are real listeners, in 24000-24999: a range no other test file uses (tap runs two at
// once), below the ephemeral ports where listeners on port 0 land.

/** While `kind` is set, each sync and resync has one operation of that kind refused (the rest went through). */
function refusing(mode: { kind?: 'ipvs' | 'ipset' | 'iptables' }) {
  return (c: FakeController) => {
    for (const pass of ['sync', 'resync'] as const) {
      const run = c[pass].bind(c);
      c[pass] = async () => {
        const r = await run();
        if (mode.kind === undefined) return r;
        c.ops[mode.kind].failed++;
        return { ...r, applied: r.applied - 1, failed: 1, rulesFailed: mode.kind === 'iptables' };
      };
    }
  };
}

const fast = { ipvs: { ...defaultOptions().ipvs, syncPeriodMs: 150 } };

t.test('operations refused: /healthz stays 200, health-check node ports and gauges follow, a resync retries them', async (t) => {
  const mode: { kind?: 'ipvs' | 'ipset' } = {};
  const { dir, controller, healthz, metrics } = await started(t, fast, refusing(mode));
  const lastBefore = (await metric(metrics, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds'))!;
  mode.kind = 'ipset'; // say, a set at maxelem
  const hcPort = 24000 + Math.floor(Math.random() * 500);
  writeFileSync(join(dir, 'lb.yaml'), localLoadBalancerYaml(hcPort));
  const url = `http://127.0.0.1:${hcPort}/`;
  await until('the health-check node port', async () => (await fetch(url).catch(() => undefined)) !== undefined);
  t.match(await (await fetch(url)).json(), { service: { namespace: 'demo', name: 'lb' }, localEndpoints: 0 }, 'served from the sync that had an operation refused');
  const resyncs = controller.syncs.resync;
  await until('three resyncs that retry it (well past 2 × syncPeriod)', () => controller.syncs.resync >= resyncs + 3, 8000);
  t.equal((await fetch(`${healthz}/healthz`)).status, 200, '/healthz: each of those syncs counts as done, as kube-proxy\'s');
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy="external",ip_family="IPv4"}'), 1, 'the no-local-endpoints gauge follows');
  t.ok((await metric(metrics, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds'))! > lastBefore, 'so does the last-sync timestamp');
  // The pass that took the change is a sync or, when the periodic resync was due with it, that resync; the retries are resyncs.
  t.ok((await metric(metrics, 'kubeproxy_ipvs_sync_errors_total{kind="resync"}'))! >= 2, 'the refusals are counted among the sync errors (ours), under the pass that met them');
  mode.kind = undefined;
  const done = controller.syncs.resync;
  await until('a resync with nothing refused', () => controller.syncs.resync > done, 8000);
  t.equal((await fetch(`${healthz}/healthz`)).status, 200);
});

t.test('a failed restore of the rules still fails the sync: /healthz turns 503, the health-check node port waits', async (t) => {
  const mode: { kind?: 'iptables' } = {};
  const { dir, healthz } = await started(t, fast, refusing(mode));
  mode.kind = 'iptables';
  const hcPort = 24500 + Math.floor(Math.random() * 500);
  writeFileSync(join(dir, 'lb.yaml'), localLoadBalancerYaml(hcPort));
  await until('503', async () => (await fetch(`${healthz}/healthz`)).status === 503, 8000);
  t.equal(await fetch(`http://127.0.0.1:${hcPort}/`).catch(() => 'refused'), 'refused', 'no sync counted since the change: its port is not served');
  mode.kind = undefined;
  await until('200 once a sync goes through', async () => (await fetch(`${healthz}/healthz`)).status === 200, 8000);
  t.pass();
});

t.test("an update that changes nothing the proxy reads leaves /healthz alone while syncs fail, as upstream calls no Sync() for it; a real change does not", async (t) => {
  const mode: { kind?: 'iptables' } = {};
  const { dir, healthz, controller } = await started(t, fast, refusing(mode));
  const extra = (labels: string, port: number) =>
    `apiVersion: v1\nkind: Service\nmetadata: {name: extra, namespace: demo, labels: {${labels}}}\nspec: {clusterIP: 10.96.100.98, ports: [{port: ${port}}]}\n`;
  const upserts = () => controller.calls.filter((c) => c === 'upsertService extra').length;
  writeFileSync(join(dir, 'extra.yaml'), extra('team: a', 80));
  await until('the Service', () => upserts() === 1);
  await until('its sync', () => controller.calls.at(-1) === 'sync' || controller.calls.at(-1) === 'resync');
  mode.kind = 'iptables';
  writeFileSync(join(dir, 'extra.yaml'), extra('team: b', 80));
  await until('the label change', () => upserts() === 2);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.equal((await fetch(`${healthz}/healthz`)).status, 200, 'well past 2 x syncPeriod of failing syncs: nothing was queued');
  writeFileSync(join(dir, 'extra.yaml'), extra('team: b', 81));
  await until('503 for a change of its port', async () => (await fetch(`${healthz}/healthz`)).status === 503, 8000);
  t.pass();
});

t.test('the sync duration counts failed syncs too; the last-sync timestamp moves only with syncs that count', async (t) => {
  const { dir, controller, metrics } = await started(t);
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_duration_seconds_count'), 1, 'the first sync');
  const last = await metric(metrics, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds');
  controller.failSyncs = 1;
  writeFileSync(join(dir, 'extra.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: extra, namespace: demo}\nspec: {clusterIP: 10.96.100.99, ports: [{port: 80}]}\n');
  await until('the failed sync', async () => (await metric(metrics, 'kubeproxy_ipvs_sync_errors_total{kind="sync"}')) === 1);
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_duration_seconds_count'), 2, 'observed, as upstream\'s defer does');
  t.equal(await metric(metrics, 'kubeproxy_ipvs_sync_partial_duration_seconds_count'), 2, 'and in our incremental-sync histogram');
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds'), last, 'the last-sync timestamp stays');
  await until('the resync that retries it', () => controller.syncs.resync > 0, 8000);
  await until('observed', async () => (await metric(metrics, 'kubeproxy_sync_proxy_rules_duration_seconds_count')) === 3);
  t.equal(await metric(metrics, 'kubeproxy_ipvs_sync_full_duration_seconds_count'), 1);
  t.ok((await metric(metrics, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds'))! > last!, 'it went through: the timestamp moves');
});

t.test('which refusals end a sync early, as kube-proxy\'s: a failed rules restore, an ipset not created', async (t) => {
  const result = (o: Partial<SyncResult> = {}): SyncResult => ({ kind: 'incremental', planned: 4, applied: 3, failed: 1, durationSeconds: 0, ipsetFailures: [], rulesFailed: false, netlink: {} as SyncResult['netlink'], ...o });
  const refused = (kind: 'ipvs' | 'iptables' | 'nftables') => result({ rulesFailed: rulesRefused({ failed: [{ op: { kind } as never, error: new Error('refused') }] }) });
  const refusedAdd = { set: 'KUBE-CLUSTER-IP', op: 'add' as const, code: 'IPSET_ERR_HASH_FULL', message: 'full', entries: ['10.96.0.1,tcp:80'] };
  t.same(await checkedPass(async () => result({ ipsetFailures: [refusedAdd] })), result({ ipsetFailures: [refusedAdd] }), 'an entry refused (a set at maxelem): done');
  t.same((await checkedPass(async () => refused('ipvs'))).failed, 1, 'an IPVS operation refused: done');
  await t.rejects(checkedPass(async () => refused('iptables')), { name: 'UnfinishedSyncError', message: /the rules' restore failed/ }, 'iptables-restore failed');
  await t.rejects(checkedPass(async () => refused('nftables')), { name: 'UnfinishedSyncError' }, 'the nftables transaction (the rules) refused');
  const uncreated = { set: 'KUBE-CLUSTER-IP', op: 'create' as const, code: 'IPSET_ERR_TYPE_MISMATCH', message: 'exists with another type', entries: [] };
  await t.rejects(checkedPass(async () => result({ ipsetFailures: [uncreated] })), { message: /ipset KUBE-CLUSTER-IP could not be created: exists with another type/ }, 'ensureIPSet failed');
  await t.rejects(checkedPass(async () => Promise.reject(new Error('kube-ipvs0: EPERM'))), /kube-ipvs0/, 'a pass that threw');
});
