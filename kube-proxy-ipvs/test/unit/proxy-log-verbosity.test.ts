/**
 * The running proxy's routine lines at kube-proxy's verbosities: each
 * object event and each sync after the first at V(4) (as kube-proxy's
 * informer handlers and its IPVS proxier's "syncProxyRules complete"), so
 * -v 2, a common setting, writes no line per event or sync; the first
 * sync's line at V(0).
 */
import t from 'tap';
import type { Node } from '../../lib/kubernetes/model.js';
import { makeLogger } from '../../lib/logging/logger.js';
import { defaultOptions } from '../../lib/proxy/options.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import type { SourceEvent } from '../../lib/proxy/sources/source.js';
import { fakeFactory } from '../support/fake-controller.js';
import { fakeHost } from '../support/fake-host.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { until } from '../support/started-proxy.js';
import { MemorySource } from '../support/memory-source.js';

const NODE = { metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.56.10' }] } } as Node;
const ports = [{ name: 'http', port: 8080 }];
const webSlice = (address: string) => slice('web', [endpoint(address, { node: 'node-b' })], ports, { name: 'web-1' });

/** The messages the proxy logs, with their V, from its start through one endpoint change and its sync. */
async function linesAt(t: { teardown(fn: () => unknown): void }, verbosity: number): Promise<Array<[number | undefined, string]>> {
  const lines: Array<{ v?: number; msg: string }> = [];
  const logger = makeLogger({ format: 'json', verbosity }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const source = new MemorySource([
    { kind: 'Node', type: 'add', object: NODE },
    { kind: 'Service', type: 'add', object: service('web', { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] }) },
    { kind: 'EndpointSlice', type: 'add', object: webSlice('10.244.2.5') },
  ] as SourceEvent[]);
  const factory = fakeFactory();
  const o = { ...defaultOptions(), hostnameOverride: 'node-a', healthzBindAddress: '', metricsBindAddress: '' };
  const proxy = new Proxy({ ...o, ipvs: { ...o.ipvs, minSyncPeriodMs: 0 } }, { source, controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost(['inet']) });
  t.teardown(() => proxy.stop());
  await proxy.start();
  await proxy.waitForSync(5000);
  source.emit({ kind: 'EndpointSlice', type: 'update', object: webSlice('10.244.2.6') } as SourceEvent);
  await until('the sync of the change', () => factory.last!.syncs.incremental === 1);
  await until('its line', () => verbosity < 4 || lines.some((l) => l.msg === 'synced'));
  return lines.map((l) => [l.v, l.msg]);
}

t.test('-v 2: the first sync, and no line per object event or routine sync', async (t) => {
  const got = await linesAt(t, 2);
  t.ok(got.some(([v, msg]) => v === 0 && msg === 'first sync done'));
  t.notOk(got.some(([, msg]) => msg === 'object event' || msg === 'synced'), got.map(([v, m]) => `${v} ${m}`).join('\n'));
});

t.test('-v 4: each object event and each routine sync, at V(4)', async (t) => {
  const got = await linesAt(t, 4);
  t.same(got.filter(([, msg]) => msg === 'object event').map(([v]) => v), [4, 4, 4, 4], 'the Node, the Service, the slice, and its update');
  t.same(got.filter(([, msg]) => msg === 'synced').map(([v]) => v), [4], "the change's sync");
});
