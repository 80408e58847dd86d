/**
 * Which Service events are changes to sync, as kube-proxy's
 * ServiceChangeTracker tells them: an update that leaves what the proxy
 * reads of the Service as it was (a label, an annotation it does not read)
 * is dropped, and so is any event of a Service it proxies in no family
 * (headless). The controller answers its upsert and delete with it, and
 * the proxy's pending and queued metrics follow it.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import t from 'tap';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { sameRead, type ServiceChange } from '../../lib/desired/service-change.js';
import { defaultProxyConfig, type Service } from '../../lib/kubernetes/model.js';
import { SCHEDULER_ANNOTATION } from '../../lib/kubernetes/service-scheduling.js';
import { service } from '../support/k8s-objects.js';
import { FakeController } from '../support/fake-controller.js';

const node = { name: 'node-a', addresses: ['192.168.1.10'] };
const FAMILIES = ['inet', 'inet6'] as const;
/** Whether the families' trackers take the event as a change to sync. */
const changesIn = (c: ServiceChange, families: readonly AddressFamily[]) => families.some((f) => !sameRead(c.before.get(f), c.after.get(f)));
const isChange = (c: ServiceChange) => changesIn(c, FAMILIES);
const changes = (s: KnownObjects, svc: Service, deleted?: boolean) => isChange(s.serviceChange(svc, deleted));
const web = (extra: Partial<Service['spec']> = {}, labels?: Record<string, string>): Service => {
  const s = service('web', { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }], ...extra });
  if (labels) s.metadata.labels = labels;
  return s;
};

t.test('what the proxy reads of a Service decides', async (t) => {
  const s = new KnownObjects(node, defaultProxyConfig());
  t.equal(changes(s, web()), true, 'a new Service');
  s.upsertService(web());
  t.equal(changes(s, web({}, { team: 'a' })), false, 'a label only: nothing to sync');
  t.equal(changes(s, { ...web(), metadata: { ...web().metadata, annotations: { note: 'x' } } }), false, 'an annotation it does not read');
  t.equal(changes(s, { ...web(), metadata: { ...web().metadata, annotations: { [SCHEDULER_ANNOTATION]: 'wrr' } } }), true, 'our scheduler annotation is read: a change (an extension)');
  t.equal(changes(s, web({ ports: [{ name: 'http', port: 8080 }] })), true, 'a port');
  t.equal(changes(s, web(), true), true, 'deleting a Service it proxies');
  t.equal(changes(s, service('other', { clusterIP: '10.96.0.11', ports: [{ port: 80 }] }), true), false, 'deleting one it never knew');
});

t.test('a Service proxied in no family never is a change', async (t) => {
  const s = new KnownObjects(node, defaultProxyConfig());
  const headless = service('db', { clusterIP: 'None', ports: [{ port: 5432 }] });
  t.equal(changes(s, headless), false, 'headless');
  s.upsertService(headless);
  t.equal(changes(s, service('db', { clusterIP: 'None', ports: [{ port: 5433 }] })), false, 'nor its update');
  t.equal(changes(s, headless, true), false, 'nor its deletion');
  t.equal(changes(s, service('db', { clusterIP: '10.96.0.12', ports: [{ port: 5432 }] })), true, 'given a ClusterIP it is');
});

t.test('the controller answers its upserts and deletes with it', async (t) => {
  const c = new FakeController({ node, config: defaultProxyConfig() });
  t.equal(isChange(c.upsertService(web())), true);
  t.equal(isChange(c.upsertService(web({}, { team: 'a' }))), false, 'a no-op update');
  t.equal(isChange(c.deleteService(web())), true);
  t.equal(isChange(c.deleteService(web())), false, 'gone already');
});

t.test("each family's tracker reads the Service only where that family proxies it", async (t) => {
  const s = new KnownObjects({ name: 'node-a', addresses: ['192.168.1.10', 'fd00::10'], families: ['inet', 'inet6'] }, defaultProxyConfig());
  t.same([...s.serviceChange(web()).after.keys()], ['inet'], 'an IPv4 ClusterIP: read in IPv4 only');
  const dual = service('dual', { clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20', 'fd00:96::20'], ipFamilies: ['IPv4', 'IPv6'], ports: [{ port: 80 }] });
  t.same([...s.serviceChange(dual).after.keys()], ['inet', 'inet6'], 'a dual-stack one: in both');
  s.upsertService(dual);
  const v6Changed = service('dual', { clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20', 'fd00:96::21'], ipFamilies: ['IPv4', 'IPv6'], ports: [{ port: 80 }] });
  const c = s.serviceChange(v6Changed);
  t.equal(changesIn(c, ['inet6']), true, 'its IPv6 ClusterIP changed: a change in IPv6');
  t.equal(changesIn(c, ['inet']), false, 'and none in IPv4, which reads the same');
  t.same([...s.serviceChange(dual, true).after.keys()], [], 'deleted: read nowhere after');
});
