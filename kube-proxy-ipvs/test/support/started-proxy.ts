/**
 * The proxy wired to a copy of examples/ as its manifests folder and a fake
 * controller, for the unit tests of its servers and its life cycle.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { defaultOptions, type ProxyOptions } from '../../lib/proxy/options.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import { ManifestsSource } from '../../lib/proxy/sources/manifests-source.js';
import { fakeFactory } from './fake-controller.js';
import { fakeHost } from './fake-host.js';
import { scratchDir } from './scratch.js';

export const logger = pino({ level: 'silent' });

export function manifestsDir(): string {
  const dir = scratchDir('kp-manifests-');
  for (const f of ['demo-services.yaml', 'demo-endpointslices.yaml', 'demo-node.yaml']) cpSync(join('examples', f), join(dir, f));
  return dir;
}

export function options(dir: string, o: Partial<ProxyOptions> = {}): ProxyOptions {
  return { ...defaultOptions(), hostnameOverride: 'node-a', manifests: dir, healthzBindAddress: '127.0.0.1:0', metricsBindAddress: '127.0.0.1:0', ...o };
}

/** What started() needs of a test: to stop the proxy when the test ends. */
interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function started(t: Teardown, o: Partial<ProxyOptions> = {}, setup?: Parameters<typeof fakeFactory>[0]) {
  const dir = manifestsDir();
  const factory = fakeFactory(setup);
  const source = new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 });
  const proxy = new Proxy(options(dir, o), { source, controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost() });
  t.teardown(() => proxy.stop());
  const addrs = await proxy.start();
  await proxy.waitForSync(5000);
  return { dir, proxy, controller: factory.last!, healthz: `http://${addrs.healthz}`, metrics: `http://${addrs.metrics}` };
}

export async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || (!name.includes("{") && l.startsWith(`${name}{`)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

export async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
