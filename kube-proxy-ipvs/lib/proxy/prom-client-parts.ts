/**
 * The parts of prom-client the proxy uses, each loaded from its own module.
 * The package's index also loads its Pushgateway client, and with it
 * node:https (tls) and zlib, resident and loaded at every start for a
 * client the proxy never uses (with --manifests nothing else loads tls).
 * prom-client declares no "exports" map, so its files can be required; if
 * a release moves them, the whole package is loaded instead, as before.
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

type Parts = Pick<typeof PromClient, 'Counter' | 'Gauge' | 'Histogram' | 'Registry' | 'collectDefaultMetrics'>;

function load(): Parts {
  const require = createRequire(import.meta.url);
  try {
    return {
      Counter: require('prom-client/lib/counter'),
      Gauge: require('prom-client/lib/gauge'),
      Histogram: require('prom-client/lib/histogram'),
      Registry: require('prom-client/lib/registry'),
      collectDefaultMetrics: require('prom-client/lib/defaultMetrics'),
    } as Parts;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    return require('prom-client') as Parts;
  }
}

const parts = load();

export const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = parts;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
export type Registry = PromClient.Registry;
