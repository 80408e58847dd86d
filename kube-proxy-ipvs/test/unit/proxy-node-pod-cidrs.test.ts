/**
 * --detect-local-mode=NodeCIDR and the Node's spec.podCIDRs in the running
 * proxy, as kube-proxy's NodeManager: the ranges of the start reach the
 * controller; a Node update that changes them ends the process (exit 1)
 * after upstream's log line, in that mode only (the steps themselves:
 * proxy-node-pod-cidrs-steps.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { defaultOptions, type ProxyOptions } from '../../lib/proxy/options.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import { ManifestsSource } from '../../lib/proxy/sources/manifests-source.js';
import { fakeFactory } from '../support/fake-controller.js';
import { fakeHost } from '../support/fake-host.js';
import { scratchDir } from '../support/scratch.js';

const nodeYaml = (podCIDRs: string[]) =>
  `apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nspec: {podCIDRs: [${podCIDRs.join(', ')}]}\nstatus: {addresses: [{type: InternalIP, address: 192.168.56.10}]}\n`;

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  return { lines, logger };
}

/** process.exit replaced for the test: the codes it was called with. */
function stubExit(t: Test): number[] {
  const codes: number[] = [];
  const real = process.exit;
  process.exit = ((code?: number) => void codes.push(code ?? 0)) as typeof process.exit;
  t.teardown(() => void (process.exit = real));
  return codes;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!ok()) throw new Error(`never happened: ${what}`);
}

t.test('NodeCIDR: the start\'s ranges reach the controller, and a Node update with others exits 1', async (t) => {
  const codes = stubExit(t);
  const dir = scratchDir('kp-podcidr-');
  writeFileSync(join(dir, 'node.yaml'), nodeYaml(['10.244.1.0/24']));
  const { lines, logger } = capture();
  const factory = fakeFactory();
  const o: ProxyOptions = { ...defaultOptions(), hostnameOverride: 'node-a', manifests: dir, healthzBindAddress: '', metricsBindAddress: '', detectLocalMode: 'NodeCIDR' };
  const proxy = new Proxy(o, { source: new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 }), controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost(['inet', 'inet6']) });
  t.teardown(() => proxy.stop());
  await proxy.start();
  t.same(factory.last!.init?.node.podCIDRs, ['10.244.1.0/24'], "the Node's ranges at start");
  t.equal(factory.last!.init?.config.detectLocalMode, 'NodeCIDR');

  writeFileSync(join(dir, 'node.yaml'), nodeYaml(['10.244.1.0/24']).replace('InternalIP, address: 192.168.56.10', 'InternalIP, address: 192.168.56.11'));
  await until('the new address', () => factory.last!.calls.includes('setNode 192.168.56.11'));
  t.same(codes, [], 'an update that keeps the ranges goes on');

  writeFileSync(join(dir, 'node.yaml'), nodeYaml(['10.244.9.0/24']));
  await until('an exit', () => codes.length > 0);
  t.same(codes, [1]);
  t.match(lines.find((l) => l.msg === 'PodCIDRs changed for the node'), { node: 'node-a', newPodCIDRs: ['10.244.9.0/24'], oldPodCIDRs: ['10.244.1.0/24'] });
});

t.test('NodeCIDR: the start waits for the Node\'s ranges', async (t) => {
  const dir = scratchDir('kp-podcidr-');
  writeFileSync(join(dir, 'node.yaml'), nodeYaml([]));
  const { logger } = capture();
  const factory = fakeFactory();
  const o: ProxyOptions = { ...defaultOptions(), hostnameOverride: 'node-a', manifests: dir, healthzBindAddress: '', metricsBindAddress: '', detectLocalMode: 'NodeCIDR' };
  const proxy = new Proxy(o, { source: new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 }), controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost(['inet']) });
  t.teardown(() => proxy.stop());
  let started = false;
  const start = proxy.start().then(() => void (started = true));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(started, false, 'not started while the Node has none');
  t.equal(factory.last, undefined, 'no controller yet');
  writeFileSync(join(dir, 'node.yaml'), nodeYaml(['10.244.1.0/24']));
  await start;
  t.same(factory.last!.init?.node.podCIDRs, ['10.244.1.0/24'], 'started with the ranges that came');
});

t.test('ClusterCIDR: a change of the Node\'s ranges is no reason to exit', async (t) => {
  const codes = stubExit(t);
  const dir = scratchDir('kp-podcidr-');
  writeFileSync(join(dir, 'node.yaml'), nodeYaml(['10.244.1.0/24']));
  const { logger } = capture();
  const factory = fakeFactory();
  const o: ProxyOptions = { ...defaultOptions(), hostnameOverride: 'node-a', manifests: dir, healthzBindAddress: '', metricsBindAddress: '' };
  const proxy = new Proxy(o, { source: new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 }), controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost(['inet']) });
  t.teardown(() => proxy.stop());
  await proxy.start();
  writeFileSync(join(dir, 'node.yaml'), nodeYaml(['10.244.9.0/24']).replace('192.168.56.10', '192.168.56.12'));
  await until('the new address', () => factory.last!.calls.includes('setNode 192.168.56.12'));
  t.same(codes, []);
});
